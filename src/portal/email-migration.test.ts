// Migration 0074 (issue 29): portal e-mails become unique per merchant. On SQLite the users
// table is rebuilt, so the test migrates a database holding users, recovery codes and
// sessions and checks that every row survives, foreign keys hold, and the new index works.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { Migrator } from 'kysely';
import { Keyring } from '../crypto/keyring.js';
import { migrationsFor } from '../db/migrations.js';
import { migrationDb, openStore } from '../db/store.js';
import { createPgDatabase, ENGINE } from '../test/harness.js';
import type { PortalUserRow } from './tables.js';

test('0074_portal_email_per_merchant keeps users and recovery codes, and allows one address at two merchants but not twice at one', async () => {
  let url = `sqlite:${path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-mig-')), 'm.db')}`;
  let drop = async () => {};
  if (ENGINE === 'postgres') ({ url, drop } = await createPgDatabase());
  const store = openStore(url);
  try {
    const db = migrationDb(store);
    const migrations = migrationsFor({ keyring: new Keyring([{ id: 't', key: randomBytes(32) }]), engine: store.engine, rewritten: 0 });
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
    const before = await migrator.migrateTo('0061_portal_search');
    assert.equal(before.error, undefined);
    for (const m of ['10001', '10002'])
      await db
        .insertInto('merchants')
        .values({ merchant_id: m, name: m, created_at: 1 } as never)
        .execute();
    const user = (user_id: string, merchant_id: string, email: string): PortalUserRow => ({
      user_id,
      merchant_id,
      email,
      role: 'owner',
      status: 'active',
      password_hash: 'h',
      failed_logins: 3,
      locked_until: 0,
      totp_secret_enc: 's',
      totp_enrolled_at: 5,
      totp_last_step: 7,
      setup_hash: null,
      setup_expires_at: null,
      created_at: 1,
      updated_at: 2,
    });
    await db
      .insertInto('portal_users')
      .values(user('usr_a', '10001', 'a@example.com'))
      .execute();
    await db.insertInto('portal_recovery_codes').values({ user_id: 'usr_a', code_hash: 'c1', used_at: null }).execute();
    // Before: the address is taken across the gateway.
    await assert.rejects(
      db
        .insertInto('portal_users')
        .values(user('usr_x', '10002', 'a@example.com'))
        .execute(),
    );

    const after = await migrator.migrateToLatest();
    assert.equal(after.error, undefined, String(after.error));
    assert.ok(after.results?.some((r) => r.migrationName === '0074_portal_email_per_merchant' && r.status === 'Success'));
    assert.deepEqual(
      await db.selectFrom('portal_users').selectAll().execute(),
      [user('usr_a', '10001', 'a@example.com')].map((u) => ({ ...u })),
    );
    assert.deepEqual(await db.selectFrom('portal_recovery_codes').selectAll().execute(), [{ user_id: 'usr_a', code_hash: 'c1', used_at: null }]);
    await db
      .insertInto('portal_users')
      .values(user('usr_b', '10002', 'a@example.com'))
      .execute();
    await assert.rejects(
      db
        .insertInto('portal_users')
        .values(user('usr_c', '10001', 'a@example.com'))
        .execute(),
      'twice at one merchant',
    );
    await assert.rejects(
      db.insertInto('portal_recovery_codes').values({ user_id: 'usr_nobody', code_hash: 'c2', used_at: null }).execute(),
      'the foreign key holds',
    );
  } finally {
    await store.close();
    await drop();
  }
});
