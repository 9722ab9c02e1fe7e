// Test gateway: a real app on a real engine (docs/style.md §8). TOLLGATE_TEST_ENGINE picks
// sqlite (a temp file) or postgres (a fresh database per gateway on TOLLGATE_TEST_PG_URL).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import qs from 'qs';
import { backgroundWork } from '../cli/background.js';
import {
  type AuthoriseRequest,
  type BodyFormat,
  encodeBody,
  type FetchLike,
  parseXmlAnswer,
  signBody,
  TollgateClient,
  type TollgateClientOptions,
} from '../client/index.js';
import { loadSettings, type Settings } from '../config/index.js';
import { Keyring } from '../crypto/keyring.js';
import { buildApp } from '../http/app.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { createRuntime, type Runtime } from '../runtime.js';
import { copySqliteTemplate, pgTemplate, TEST_MASTER_KEY } from './templates.js';

export const ENGINE: 'sqlite' | 'postgres' = process.env.TOLLGATE_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';
export const PG_URL = process.env.TOLLGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export { type BodyFormat, encodeBody, TEST_MASTER_KEY };

/** An answer as the tests read it (the shape of Fastify's inject answer they were written against). */
export interface TestResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  json(): any;
}

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
  /** Signs (unless sign: false) and posts a body in JSON, form or XML shape, through the client's signer and encoder. */
  post(url: string, body: Record<string, unknown>, opts?: PostOptions): Promise<TestResponse>;
  /** A client library instance for `merchant` (default: the gateway's merchant) over `app.inject`. */
  client(merchant?: CreatedMerchant, opts?: Partial<TollgateClientOptions> & { remoteAddress?: string }): TollgateClient;
  /** A new generic-interface API key (`sk_test_…` / `sk_live_…`) of the merchant's account. */
  apiKey(merchant?: CreatedMerchant): Promise<string>;
  /** A generic-interface request with `Authorization: Bearer key`; objects are sent form-encoded (as the official client does) unless `json`. */
  generic(
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    key: string,
    body?: Record<string, unknown>,
    opts?: { json?: boolean; headers?: Record<string, string>; remoteAddress?: string },
  ): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface PostOptions {
  merchant?: CreatedMerchant;
  format?: BodyFormat;
  sign?: boolean;
  headers?: Record<string, string>;
  remoteAddress?: string;
}

/** A direct payment request with a sandbox card, as the client library takes it; override any. */
export function paymentRequest(overrides: Partial<AuthoriseRequest> = {}): AuthoriseRequest {
  return {
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

/** The same with the merchant's ids, for raw posts; override any (hostile values too). */
export function directPayment(merchant: CreatedMerchant, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { merchant_id: merchant.merchant_id, account_id: merchant.account_id, ...paymentRequest(), ...overrides };
}

/** Reads an XML answer the way a merchant would (docs/contract.md §2), with the client's reader. */
export function readXml(res: { body: string }): Record<string, string | any> {
  return parseXmlAnswer(res.body);
}

/** Origin the in-process gateway is addressed by; `injectFetch` ignores it. */
export const INJECT_ORIGIN = 'http://tollgate.test';

/**
 * A `fetch` that hands the request to `app.inject` (no socket), so the client library and
 * raw posts run the same way in-process. `remoteAddress` is the caller's IP the gateway sees.
 */
export function injectFetch(app: FastifyInstance, opts: { remoteAddress?: string } = {}): FetchLike {
  return async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers = Object.fromEntries(new Headers(init.headers));
    const body = init.body;
    if (body !== undefined && body !== null && typeof body !== 'string' && !(body instanceof Uint8Array))
      throw new TypeError('injectFetch sends string or byte bodies only');
    init.signal?.throwIfAborted();
    const res = await app.inject({
      method: (init.method ?? 'GET') as 'GET',
      url: url.pathname + url.search,
      headers,
      ...(body === undefined || body === null ? {} : { payload: typeof body === 'string' ? body : Buffer.from(body) }),
      remoteAddress: opts.remoteAddress ?? '127.0.0.1',
    });
    init.signal?.throwIfAborted();
    const out = new Headers();
    for (const [k, v] of Object.entries(res.headers)) {
      if (v === undefined) continue;
      for (const one of Array.isArray(v) ? v : [v]) out.append(k, String(one));
    }
    const empty = res.statusCode === 204 || res.statusCode === 304;
    return new Response(empty ? null : res.rawPayload, { status: res.statusCode, headers: out });
  };
}

async function testResponse(res: Response): Promise<TestResponse> {
  const body = await res.text();
  return { statusCode: res.status, headers: Object.fromEntries(res.headers), body, json: () => JSON.parse(body) };
}

/** An empty database, or with `template` a copy of that one (the run's migrated template: templates.ts). */
export async function createPgDatabase(opts: { template?: string } = {}): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `tg_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}${opts.template ? ` TEMPLATE ${opts.template}` : ''}`);
  // The suite tests answers, not durability (the crash and fault runs do, on real commits):
  // a commit here does not wait for the server's WAL flush, as SQLite's tmpfs file does not
  // wait for a disk (scripts/test.mjs).
  await admin.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
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

export async function testGateway(
  opts: { settings?: Partial<Settings>; start_ms?: number; log_destination?: NodeJS.WritableStream } = {},
): Promise<TestGateway> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tollgate-test-'));
  let database_url = `sqlite:${path.join(dir, 'tollgate.db')}`;
  let drop = async () => {};
  // From the run's migrated template where scripts/test.mjs made one; the migrations then find nothing to do.
  if (ENGINE === 'postgres') {
    const db = await createPgDatabase({ template: pgTemplate() });
    database_url = db.url;
    drop = db.drop;
  } else {
    copySqliteTemplate(path.join(dir, 'tollgate.db'));
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
    // In-process tests fire a hundred concurrent requests on purpose (refund races); shedding has its own test.
    max_in_flight: 10_000,
    ...opts.settings,
  };
  const clock = {
    now: opts.start_ms ?? Date.now(),
    advance(ms: number) {
      clock.now += ms;
    },
  };
  const runtime = await createRuntime(settings, { keyring: Keyring.parse(TEST_MASTER_KEY), now: () => clock.now, metricsDefaults: false });
  // Each route's schemas compiled at its first request: a file calls a few of the 200-odd routes.
  const app = await buildApp(runtime.deps, { log_destination: opts.log_destination, schemas: 'on_first_use' });
  await app.ready();
  // The background work of a serving process, as `serve` starts it (the idempotency repair;
  // the timed jobs and delivery only where the worker is on, which tests drive by hand).
  const background = backgroundWork(runtime, { jobs: settings.worker_enabled, serving: true });
  background.start();
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
      const signed = o.sign === false ? body : signBody(body, m.secret_key, o.format ?? 'json');
      const { payload, contentType } = encodeBody(signed, o.format ?? 'json');
      const fetch = injectFetch(app, { remoteAddress: o.remoteAddress });
      return testResponse(await fetch(`${INJECT_ORIGIN}${url}`, { method: 'POST', body: payload, headers: { 'content-type': contentType, ...o.headers } }));
    },
    client(m = merchant, o = {}) {
      const { remoteAddress, ...options } = o;
      return new TollgateClient({
        base_url: INJECT_ORIGIN,
        merchant_id: m.merchant_id,
        account_id: m.account_id,
        secret: m.secret_key,
        webhook_secret: m.webhook_secret,
        fetch: injectFetch(app, { remoteAddress }),
        ...options,
      });
    },
    async apiKey(m = merchant) {
      return (await runtime.apiKeys.create(m.account_id)).secret;
    },
    async generic(method, url, key, body, o = {}) {
      const fetch = injectFetch(app, { remoteAddress: o.remoteAddress });
      const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...o.headers };
      let payload: string | undefined;
      if (body !== undefined) {
        payload = o.json ? JSON.stringify(body) : qs.stringify(body, { arrayFormat: 'indices' });
        headers['content-type'] = o.json ? 'application/json' : 'application/x-www-form-urlencoded';
      }
      return testResponse(await fetch(`${INJECT_ORIGIN}${url}`, { method, body: payload, headers }));
    },
    async close() {
      await app.close();
      await background.stop();
      await runtime.store.close();
      await drop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return gw;
}
