// Test gateway: a real app on a real engine (style §8). TOLLGATE_TEST_ENGINE picks
// sqlite (a temp file) or postgres (a fresh database per gateway on TOLLGATE_TEST_PG_URL).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { loadSettings, type Settings } from '../config/index.js';
import { Keyring } from '../crypto/keyring.js';
import { sign } from '../crypto/signature.js';
import { buildApp } from '../http/app.js';
import { parseXmlBody } from '../http/xml.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { createRuntime, type Runtime } from '../runtime.js';

export const ENGINE: 'sqlite' | 'postgres' = process.env.TOLLGATE_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';
export const PG_URL = process.env.TOLLGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const TEST_MASTER_KEY = `test1:${Buffer.alloc(32, 7).toString('base64')}`;

export type BodyFormat = 'json' | 'form' | 'xml';

export interface TestGateway {
  app: FastifyInstance;
  runtime: Runtime;
  settings: Settings;
  merchant: CreatedMerchant;
  /** The database URL (a file or a fresh PostgreSQL database). */
  database_url: string;
  /** The data folder (SQLite file lives here). */
  dir: string;
  /** Moves the gateway's clock. */
  clock: { now: number; advance(ms: number): void };
  newMerchant(opts?: { name?: string; allow_ips?: string[]; capture_method?: 'automatic' | 'manual'; mode?: 'test' | 'live' }): Promise<CreatedMerchant>;
  /** Signs (unless sign: false) and posts a body in JSON, form or XML shape. */
  post(url: string, body: Record<string, unknown>, opts?: PostOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface PostOptions {
  merchant?: CreatedMerchant;
  format?: BodyFormat;
  sign?: boolean;
  headers?: Record<string, string>;
  remoteAddress?: string;
}

/** Fields for a direct payment with a sandbox card; override any. */
export function directPayment(merchant: CreatedMerchant, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    merchant_id: merchant.merchant_id,
    account_id: merchant.account_id,
    order_no: `ORD-${Math.random().toString(36).slice(2, 12)}`,
    currency: 'USD',
    amount: '10.00',
    card: '4242424242424242',
    expiration_month: '12',
    expiration_year: String(new Date().getUTCFullYear() + 2),
    security_code: '123',
    ...overrides,
  };
}

function toForm(value: unknown, prefix: string, out: string[]): void {
  if (value === null || value === undefined) return;
  if (Array.isArray(value))
    value.forEach((v, i) => {
      toForm(v, `${prefix}[${i}]`, out);
    });
  else if (typeof value === 'object') for (const [k, v] of Object.entries(value)) toForm(v, prefix ? `${prefix}[${k}]` : k, out);
  else out.push(`${encodeURIComponent(prefix)}=${encodeURIComponent(String(value))}`);
}

function toXmlBody(value: unknown, name: string): string {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  if (Array.isArray(value)) return value.map((v) => toXmlBody(v, name)).join('');
  if (value !== null && typeof value === 'object')
    return `<${name}>${Object.entries(value)
      .map(([k, v]) => toXmlBody(v, k))
      .join('')}</${name}>`;
  return `<${name}>${esc(String(value ?? ''))}</${name}>`;
}

export function encodeBody(body: Record<string, unknown>, format: BodyFormat): { payload: string; contentType: string } {
  if (format === 'json') return { payload: JSON.stringify(body), contentType: 'application/json' };
  if (format === 'xml') return { payload: `<?xml version="1.0"?>${toXmlBody(body, 'request')}`, contentType: 'application/xml' };
  const parts: string[] = [];
  toForm(body, '', parts);
  return { payload: parts.join('&'), contentType: 'application/x-www-form-urlencoded' };
}

/** Reads an XML answer the way a merchant would (decisions §2). */
export function readXml(res: LightMyRequestResponse): Record<string, string | any> {
  return parseXmlBody(res.body);
}

export async function createPgDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `tg_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export async function testGateway(opts: { settings?: Partial<Settings>; start_ms?: number } = {}): Promise<TestGateway> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-test-'));
  let database_url = `sqlite:${path.join(dir, 'tollgate.db')}`;
  let drop = async () => {};
  if (ENGINE === 'postgres') {
    const db = await createPgDatabase();
    database_url = db.url;
    drop = db.drop;
  }
  const settings: Settings = {
    ...loadSettings({}),
    database_url,
    data_dir: dir,
    master_key: TEST_MASTER_KEY,
    log_level: process.env.TOLLGATE_TEST_LOG_LEVEL ?? 'silent',
    allow_private_webhooks: true,
    demo_merchant: false,
    worker_enabled: false,
    ...opts.settings,
  };
  const clock = {
    now: opts.start_ms ?? Date.now(),
    advance(ms: number) {
      clock.now += ms;
    },
  };
  const runtime = await createRuntime(settings, { keyring: Keyring.parse(TEST_MASTER_KEY), now: () => clock.now, metricsDefaults: false });
  const app = await buildApp(runtime.deps);
  await app.ready();
  const newMerchant: TestGateway['newMerchant'] = (o = {}) =>
    runtime.merchants.createMerchant({
      name: o.name ?? 'Test merchant',
      allow_ips: o.allow_ips ?? ['127.0.0.1/32'],
      capture_method: o.capture_method,
      mode: o.mode,
    });
  const merchant = await newMerchant();
  const gw: TestGateway = {
    app,
    runtime,
    settings,
    merchant,
    database_url,
    dir,
    clock,
    newMerchant,
    async post(url, body, o = {}) {
      const m = o.merchant ?? merchant;
      const signed = o.sign === false ? body : { ...body, encryption_data: sign(body, m.secret_key) };
      const { payload, contentType } = encodeBody(signed, o.format ?? 'json');
      return app.inject({
        method: 'POST',
        url,
        payload,
        headers: { 'content-type': contentType, ...o.headers },
        remoteAddress: o.remoteAddress ?? '127.0.0.1',
      });
    },
    async close() {
      await app.close();
      await runtime.store.close();
      await drop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return gw;
}
