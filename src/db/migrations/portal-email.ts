// Issue 29: a portal e-mail is unique per merchant, not across the gateway. With one global
// index, creating a user at merchant B told B's owner that the address was a user somewhere
// else (decision 0060, amended). The non-unique (merchant_id, email) index becomes unique.
import { type Kysely, type Migration, PostgresAdapter, sql } from 'kysely';

const COLUMNS = sql`user_id text primary key, merchant_id text not null references merchants (merchant_id), email text not null,
  role text not null, status text not null, password_hash text, failed_logins integer not null default 0,
  locked_until bigint not null default 0, totp_secret_enc text, totp_enrolled_at bigint,
  totp_last_step bigint not null default 0, setup_hash text unique, setup_expires_at bigint,
  created_at bigint not null, updated_at bigint not null`;

export const portalEmailPerMerchantMigration: Migration = {
  async up(db: Kysely<any>) {
    if (db.getExecutor().adapter instanceof PostgresAdapter) {
      await sql`alter table portal_users drop constraint portal_users_email_key`.execute(db);
    } else {
      // SQLite cannot drop a column's UNIQUE: the table is rebuilt. The recovery codes that
      // reference it are set aside first, so no foreign key is broken on the way (the
      // migration runs in one transaction, where foreign_keys cannot be switched off).
      await sql`create table portal_recovery_codes_keep as select * from portal_recovery_codes`.execute(db);
      await sql`drop table portal_recovery_codes`.execute(db);
      await sql`create table portal_users_new (${COLUMNS})`.execute(db);
      await sql`insert into portal_users_new select user_id, merchant_id, email, role, status, password_hash, failed_logins, locked_until,
        totp_secret_enc, totp_enrolled_at, totp_last_step, setup_hash, setup_expires_at, created_at, updated_at from portal_users`.execute(db);
      await sql`drop table portal_users`.execute(db);
      await sql`alter table portal_users_new rename to portal_users`.execute(db);
      await db.schema
        .createTable('portal_recovery_codes')
        .addColumn('user_id', 'text', (c) => c.notNull().references('portal_users.user_id'))
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .addPrimaryKeyConstraint('portal_recovery_codes_pk', ['user_id', 'code_hash'])
        .execute();
      await sql`insert into portal_recovery_codes select user_id, code_hash, used_at from portal_recovery_codes_keep`.execute(db);
      await sql`drop table portal_recovery_codes_keep`.execute(db);
    }
    await db.schema.dropIndex('portal_users_merchant').ifExists().execute();
    await db.schema.createIndex('portal_users_merchant_email').on('portal_users').columns(['merchant_id', 'email']).unique().execute();
  },
  // Back to one address across the gateway (fails while two merchants share an address).
  // SQLite gets a unique index of the constraint's name; `up` rebuilds the table anyway.
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('portal_users_merchant_email').execute();
    if (db.getExecutor().adapter instanceof PostgresAdapter) {
      await sql`alter table portal_users add constraint portal_users_email_key unique (email)`.execute(db);
    } else {
      await db.schema.createIndex('portal_users_email_key').on('portal_users').column('email').unique().execute();
    }
    await db.schema.createIndex('portal_users_merchant').on('portal_users').columns(['merchant_id', 'email']).execute();
  },
};
