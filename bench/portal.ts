// The merchant portal under load (issue 14, docs/contract.md §19): a signed-in owner's transactions
// list and filtered searches over the account's stored payments (1,000,000 seeded by
// bench/seed.ts; 100,000 in --quick), on the gateway that has them.
//
// The user is made as an operator would (`tollgate user create --json`, its set-password
// link), then signs in over HTTP as a browser does: GET the link (pre-sign-in cookie and the
// form's hidden CSRF token), POST the password, GET /portal/signin, POST e-mail and password
// → 303 and the `tollgate_portal` session cookie (15 min idle: made right before measuring).
// Each query is first fetched once and checked against the database: HTTP 200, the table
// `id="transactions"` lists `data-transaction-id` rows, every row listed matches the filter,
// as many as the database has (up to the page size, the unfiltered list's row count), and
// they are the newest ones (none older than the newest matching rows the page could hold).
// Then autocannon: a warm-up, one connection (the page alone), then `connections` (16, as
// the other read scenario, query100: a latency target) for the scenario's duration; every
// answer must be 200 and list rows, anything else is counted in `errors`.
// Queries: the first page of the list; last4 + status of the seed's card and status (every
// seeded payment: 4242, captured); last4 + status of a card of the bench's own traffic (a
// handful among the stored rows: the search that must find a needle); one amount (12.34, one
// seeded payment in 9,000; every bench payment is in USD); one seeded order_no.
// (BENCH_PORTAL_LIST=/some/other/path: the list's path, to try the not-measured report.)
// A portal without the page (404: the page is not written yet) or without the CLI command
// is reported as not measured, with the reason, never with numbers.

import os from 'node:os';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { CreatedMerchant } from '../src/merchants/service.js';
import { cli, type FreshDatabase, type GatewayProcess, peakRssMiB, resetPeakRss } from '../src/test/process.js';
import { cpuMeter } from './driver.js';

/** The p99 the issue asks of every portal query (ms). */
export const PORTAL_P99_TARGET_MS = 100;
const PASSWORD = 'violet-harbour-lantern-42';
const LIST = process.env.BENCH_PORTAL_LIST ?? '/portal/transactions';

export interface PortalQueryRun {
  name: string;
  describe: string;
  /** The URL measured (path and query). */
  path: string;
  connections: number;
  req_per_s: number;
  p50_ms: number;
  p99_ms: number;
  p99_9_ms: number;
  requests: number;
  non_2xx: number;
  /** Answers that were not HTTP 200 with rows listed (non-2xx included), and connection errors. */
  errors: number;
  timeouts: number;
  peak_rss_mib: number | null;
  gateway_cpu_pct: number;
  runner_cpu_pct: number;
  /** One connection, the page alone. */
  unloaded: { requests: number; p50_ms: number; p99_ms: number };
  /** Rows the database has for this query in the account, and rows the page listed. */
  matching: number;
  rows_on_page: number;
  /** Checks of the page against the database that failed (empty: verified). */
  problems: string[];
  /** The first few wrong answers under load. */
  samples: string[];
  target_met: boolean;
}

export interface PortalReport {
  /** Set when nothing was measured: why (the page is not there yet, sign-in failed …). */
  skipped?: string;
  seeded: number;
  /** Payments in the bench account when measured (seeded + the bench's own traffic). */
  stored_in_account: number;
  quick: boolean;
  connections: number;
  duration_s: number;
  warmup_s: number;
  /** Rows on the unfiltered list's first page. */
  page_size: number | null;
  target_p99_ms: number;
  /** os.loadavg() as the scenario began: other work on the machine shows here. */
  load_average_at_start: number[];
  runs: PortalQueryRun[];
  runtime_s: number;
}

export interface PortalOptions {
  gw: GatewayProcess;
  env: NodeJS.ProcessEnv;
  db: FreshDatabase;
  merchant: CreatedMerchant;
  seeded: number;
  quick: boolean;
  duration_s: number;
  warmup_s: number;
  connections: number;
  log: (line: string) => void;
}

const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;

// ---- the database, read directly (the bench's own check of what the pages show)

interface Reader {
  rows<T>(sql: string, params: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

async function reader(db: FreshDatabase): Promise<Reader> {
  if (db.engine === 'sqlite') {
    const raw = new Database(db.file as string, { readonly: true, fileMustExist: true });
    return {
      rows: async <T>(sql: string, params: unknown[]) => raw.prepare(sql).all(...params) as T[],
      close: async () => {
        raw.close();
      },
    };
  }
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  return {
    rows: async <T>(sql: string, params: unknown[]) => {
      let n = 0;
      return (
        await c.query(
          sql.replace(/\?/g, () => `$${++n}`),
          params,
        )
      ).rows as T[];
    },
    close: () => c.end(),
  };
}

// ---- a browser without a browser: cookies kept, forms' hidden fields read from the page

class Browser {
  readonly jar = new Map<string, string>();
  constructor(readonly base: string) {}

  cookie(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(method: 'GET' | 'POST', path: string, form?: Record<string, string>): Promise<{ status: number; location: string; body: string }> {
    const headers: Record<string, string> = {};
    if (this.jar.size) headers.cookie = this.cookie();
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const r = await fetch(`${this.base}${path}`, { method, headers, body: form ? new URLSearchParams(form).toString() : undefined, redirect: 'manual' });
    for (const c of r.headers.getSetCookie()) {
      const pair = c.split(';')[0] ?? '';
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      if (!name) continue;
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(c)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return { status: r.status, location: r.headers.get('location') ?? '', body: await r.text() };
  }
}

const unescapeHtml = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#x([0-9a-f]+);/gi, (_, h) => String.fromCodePoint(Number.parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d) => String.fromCodePoint(Number(d)))
    .replace(/&amp;/g, '&');

/** The hidden inputs of the form on `page` that posts to `action`. */
function hiddenFields(page: string, action: string): Record<string, string> {
  const form = (page.match(/<form\b[^>]*>[\s\S]*?<\/form>/g) ?? []).find((f) => unescapeHtml(/action="([^"]*)"/.exec(f)?.[1] ?? '') === action);
  if (!form) throw new Error(`no form posting to ${action} on the page: ${page.slice(0, 500)}`);
  const fields: Record<string, string> = {};
  for (const m of form.matchAll(/<input\b[^>]*type="hidden"[^>]*>/g)) {
    const name = /name="([^"]*)"/.exec(m[0])?.[1];
    if (name) fields[unescapeHtml(name)] = unescapeHtml(/value="([^"]*)"/.exec(m[0])?.[1] ?? '');
  }
  return fields;
}

/** The transaction ids the page's `id="transactions"` table lists, in order; null without that table. */
export function listedIds(page: string): string[] | null {
  const table = /<table\b[^>]*\bid="transactions"[^>]*>[\s\S]*?<\/table>/.exec(page)?.[0];
  if (!table) return null;
  return [...table.matchAll(/data-transaction-id="([^"]*)"/g)].map((m) => unescapeHtml(m[1] as string));
}

/** The values of `<select name="…">`'s options on the page, or null without that select. */
function selectOptions(page: string, name: string): string[] | null {
  const select = new RegExp(`<select\\b[^>]*\\bname="${name}"[^>]*>[\\s\\S]*?</select>`).exec(page)?.[0];
  if (!select) return null;
  return [...select.matchAll(/<option\b[^>]*\bvalue="([^"]*)"/g)].map((m) => unescapeHtml(m[1] as string));
}

/** Sign-in as a browser does; returns the session cookie header, or throws with what went wrong. */
async function signIn(b: Browser, env: NodeJS.ProcessEnv, merchant: CreatedMerchant): Promise<void> {
  const email = `bench-${Date.now().toString(36)}@example.com`;
  const made = cli(env, ['user', 'create', '--merchant', merchant.merchant_id, '--email', email, '--role', 'owner', '--json']);
  if (made.status !== 0) throw new SkipError(`tollgate user create failed: ${(made.stderr || made.stdout).trim().slice(0, 300)}`);
  const link = (JSON.parse(made.stdout.trim().split('\n').pop() as string) as { set_password_link: string }).set_password_link;
  const setup = new URL(link).pathname;
  const shown = await b.request('GET', setup);
  if (shown.status !== 200) throw new Error(`GET ${setup}: HTTP ${shown.status} ${shown.body.slice(0, 300)}`);
  const set = await b.request('POST', setup, { ...hiddenFields(shown.body, setup), password: PASSWORD, confirm: PASSWORD });
  if (set.status !== 303) throw new Error(`set password: HTTP ${set.status} ${set.body.slice(0, 300)}`);
  const form = await b.request('GET', '/portal/signin');
  if (form.status !== 200) throw new Error(`GET /portal/signin: HTTP ${form.status}`);
  const done = await b.request('POST', '/portal/signin', {
    ...hiddenFields(form.body, '/portal/signin'),
    merchant_id: merchant.merchant_id,
    email,
    password: PASSWORD,
  });
  if (done.status !== 303 || !b.jar.has('tollgate_portal')) throw new Error(`sign in: HTTP ${done.status} ${done.location} ${done.body.slice(0, 300)}`);
  if (done.location !== '/portal/dashboard') throw new Error(`sign in went to ${done.location}, not /portal/dashboard (a second factor asked?)`);
}

class SkipError extends Error {}

interface Query {
  name: string;
  describe: string;
  params: Record<string, string>;
  /** The filter as SQL over `payments` (with `?` parameters), the account's condition added. */
  where: string;
  args: unknown[];
}

interface PaymentRow {
  transaction_id: string;
  created_at: number | string;
}

/** GETs `q`'s page and checks it against the database; returns the problems found (none: verified). */
async function verify(b: Browser, r: Reader, account_id: string, q: Query, path: string, page_size: number | null) {
  const problems: string[] = [];
  const page = await b.request('GET', path);
  // No rows: the page says so instead of showing the table.
  const ids = page.status === 200 ? (listedIds(page.body) ?? (page.body.includes('id="no-transactions"') ? [] : null)) : null;
  if (page.status !== 200) problems.push(`HTTP ${page.status}${page.location ? ` → ${page.location}` : ''}`);
  else if (ids === null) problems.push('no table id="transactions" on the page');
  const where = `account_id = ? AND ${q.where}`;
  const [count] = await r.rows<{ n: number | string }>(`SELECT count(*) AS n FROM payments WHERE ${where}`, [account_id, ...q.args]);
  const matching = Number(count?.n ?? 0);
  const listed = ids ?? [];
  if (ids !== null && listed.length === 0) problems.push(`the page lists no rows (the database has ${matching})`);
  if (listed.length > 0) {
    const unique = [...new Set(listed)];
    if (unique.length !== listed.length) problems.push(`${listed.length - unique.length} row(s) listed twice`);
    const found = await r.rows<PaymentRow>(
      `SELECT transaction_id, created_at FROM payments WHERE ${where} AND transaction_id IN (${unique.map(() => '?').join(',')})`,
      [account_id, ...q.args, ...unique],
    );
    if (found.length !== unique.length)
      problems.push(`${unique.length - found.length} of ${unique.length} rows listed do not match the filter (or are not this account's)`);
    const want = page_size === null ? listed.length : Math.min(matching, page_size);
    if (listed.length !== want) problems.push(`${listed.length} rows listed, the database has ${matching} (page size ${page_size ?? '?'}: ${want} expected)`);
    // The newest first: nothing listed is older than the k-th newest matching row (ties allowed).
    const kth = await r.rows<PaymentRow>(`SELECT transaction_id, created_at FROM payments WHERE ${where} ORDER BY created_at DESC LIMIT 1 OFFSET ?`, [
      account_id,
      ...q.args,
      Math.max(0, Math.min(listed.length, matching) - 1),
    ]);
    const oldest = Math.min(...found.map((f) => Number(f.created_at)));
    if (kth[0] && oldest < Number(kth[0].created_at)) problems.push('the rows listed are not the newest matching ones');
  }
  return { problems, matching, rows: listed.length, body: page.body };
}

interface Loaded {
  result: autocannon.Result;
  wrong: number;
  samples: string[];
}

/** autocannon GETs of `path` with the session cookie; a wrong answer is anything but 200 with rows listed. */
async function drive(url: string, path: string, cookie: string, connections: number, duration_s: number): Promise<Loaded> {
  const out = { wrong: 0, samples: [] as string[] };
  const result = await autocannon({
    url,
    connections,
    duration: duration_s,
    timeout: 30,
    requests: [
      {
        method: 'GET',
        path,
        headers: { cookie },
        onResponse: (status: number, body: string) => {
          if (status === 200 && body.includes('data-transaction-id')) return;
          out.wrong++;
          if (out.samples.length < 5) out.samples.push(`HTTP ${status}: ${String(body).slice(0, 200)}`);
        },
      },
    ],
  });
  return { result, ...out };
}

const p99_9 = (r: autocannon.Result) => (r.latency as unknown as Record<string, number>).p99_9 ?? r.latency.p99;

export async function benchPortal(o: PortalOptions): Promise<PortalReport> {
  const t0 = Date.now();
  const report: PortalReport = {
    seeded: o.seeded,
    stored_in_account: 0,
    quick: o.quick,
    connections: o.connections,
    duration_s: o.duration_s,
    warmup_s: o.warmup_s,
    page_size: null,
    target_p99_ms: PORTAL_P99_TARGET_MS,
    load_average_at_start: os.loadavg().map((x) => round(x, 2)),
    runs: [],
    runtime_s: 0,
  };
  const r = await reader(o.db);
  try {
    const account = o.merchant.account_id;
    const [count] = await r.rows<{ n: number | string }>('SELECT count(*) AS n FROM payments WHERE account_id = ?', [account]);
    report.stored_in_account = Number(count?.n ?? 0);
    const b = new Browser(o.gw.url);
    try {
      await signIn(b, o.env, o.merchant);
    } catch (e) {
      report.skipped = e instanceof SkipError ? e.message : `sign-in failed: ${(e as Error).message}`;
      return report;
    }
    const probe = await b.request('GET', LIST);
    if (probe.status === 404) {
      report.skipped = `portal page not available (404 from GET ${LIST}: the transactions page is not on this build)`;
      return report;
    }
    const listIds = probe.status === 200 ? listedIds(probe.body) : null;
    report.page_size = listIds && listIds.length > 0 ? listIds.length : null;

    // The filters' values, from what is stored: the seed's card and status, a card of the
    // bench's own traffic (newest first), one seeded order number from the middle of the seed.
    const [rare] = await r.rows<{ transaction_id: string; card_masked: string; status: string }>(
      `SELECT transaction_id, card_masked, status FROM payments WHERE account_id = ? AND card_masked IS NOT NULL AND card_masked NOT LIKE '%4242' ORDER BY created_at DESC LIMIT 1`,
      [account],
    );
    const seedOrder = `SEED-${Math.max(1, Math.floor(o.seeded / 2))}`;
    const queries: Query[] = [
      { name: 'transactions', describe: 'the first page of the list (newest first)', params: {}, where: '1 = 1', args: [] },
      {
        name: 'last4+status (seed)',
        describe: "filtered by the seed's card and status (last four 4242, captured: every seeded payment matches)",
        params: { last4: '4242', status: 'captured' },
        where: 'card_masked LIKE ? AND status = ?',
        args: ['%4242', 'captured'],
      },
    ];
    if (rare) {
      const last4 = rare.card_masked.slice(-4);
      queries.push({
        name: 'last4+status (few)',
        describe: `filtered by the last four and status of a card of the bench's own traffic (${last4}, ${rare.status}: a few rows among the stored)`,
        params: { last4, status: rare.status },
        where: 'card_masked LIKE ? AND status = ?',
        args: [`%${last4}`, rare.status],
      });
    }
    // Seeded amounts run 10.00–99.99 (1000 + i % 9000 minor units, USD): 12.34 is one seeded payment in 9,000.
    queries.push({
      name: 'amount',
      describe: 'one amount (12.34: one seeded payment in 9,000)',
      params: { amount: '12.34' },
      where: 'amount_minor = ?',
      args: [1234],
    });
    queries.push({
      name: 'order_no',
      describe: `one seeded order number (${seedOrder})`,
      params: { order_no: seedOrder },
      where: 'order_no = ?',
      args: [seedOrder],
    });

    const statuses = selectOptions(probe.body, 'status');
    for (const q of queries) {
      const path = Object.keys(q.params).length ? `${LIST}?${new URLSearchParams(q.params)}` : LIST;
      const checked = await verify(b, r, account, q, path, report.page_size);
      if (statuses && q.params.status !== undefined && !statuses.includes(q.params.status))
        checked.problems.push(`status ${JSON.stringify(q.params.status)} is not one of the filter's options (${statuses.join(', ')})`);
      const cookie = b.cookie();
      await drive(o.gw.url, path, cookie, o.connections, o.warmup_s);
      const alone = await drive(o.gw.url, path, cookie, 1, Math.min(o.quick ? 1 : 3, o.duration_s));
      resetPeakRss(o.gw.pid);
      const cpu = cpuMeter(o.gw.pid);
      const l = await drive(o.gw.url, path, cookie, o.connections, o.duration_s);
      const res = l.result;
      const run: PortalQueryRun = {
        name: `portal: ${q.name}`,
        describe: `GET ${path}: ${q.describe}`,
        path,
        connections: o.connections,
        req_per_s: round(res.requests.average, 0),
        p50_ms: res.latency.p50,
        p99_ms: res.latency.p99,
        p99_9_ms: p99_9(res),
        requests: res.requests.total,
        non_2xx: res.non2xx,
        errors: res.errors + l.wrong - res.non2xx,
        timeouts: res.timeouts,
        peak_rss_mib: round(peakRssMiB(o.gw.pid), 0),
        ...cpu(),
        unloaded: { requests: alone.result.requests.total, p50_ms: alone.result.latency.p50, p99_ms: alone.result.latency.p99 },
        matching: checked.matching,
        rows_on_page: checked.rows,
        problems: checked.problems,
        samples: l.samples,
        target_met: false,
      };
      // Wrong answers (non-2xx or a 200 without rows) are errors; non-2xx are counted apart too.
      run.errors = Math.max(0, run.errors);
      run.target_met = run.p99_ms <= PORTAL_P99_TARGET_MS && run.problems.length === 0 && run.errors === 0 && run.non_2xx === 0 && run.timeouts === 0;
      report.runs.push(run);
      o.log(
        `  ${run.name}: ${run.req_per_s} req/s, p50 ${run.p50_ms} ms, p99 ${run.p99_ms} ms, p99.9 ${run.p99_9_ms} ms (1 connection: p50 ${run.unloaded.p50_ms} ms, p99 ${run.unloaded.p99_ms} ms); ${run.matching.toLocaleString('en')} matching, ${run.rows_on_page} listed; non-2xx ${run.non_2xx}, errors ${run.errors}; gateway CPU ${run.gateway_cpu_pct}%${run.problems.length ? `; PROBLEMS: ${run.problems.join('; ')}` : ''}`,
      );
      for (const s of run.samples) o.log(`    unexpected: ${s}`);
    }
    return report;
  } finally {
    report.runtime_s = round((Date.now() - t0) / 1000);
    await r.close();
  }
}

/** The report's portal section. */
export function portalMarkdown(p: PortalReport): string[] {
  const stored = `${p.stored_in_account.toLocaleString('en')} payments in the account (${p.seeded.toLocaleString('en')} seeded${p.quick ? ': quick, not the 1,000,000 of the target' : ''})`;
  const lines = [
    '',
    `Portal (\`bench/portal.ts\`, issue 14): a signed-in owner's transactions pages over ${stored}; ${p.connections} connections for ${p.duration_s} s after a ${p.warmup_s} s warm-up, and 1 connection alone; every answer must be HTTP 200 listing rows, and each page was first checked against the database (rows match the filter, as many as stored up to the page size${p.page_size ? ` of ${p.page_size}` : ''}, newest first); load average as it began ${p.load_average_at_start.map((x) => x.toFixed(2)).join(' ')}. Target: p99 ≤ ${p.target_p99_ms} ms.`,
  ];
  if (p.skipped) {
    lines.push('', `**Not measured**: ${p.skipped}.`);
    return lines;
  }
  lines.push(
    '',
    '| query | matching | listed | conns | req/s | p50 ms | p99 ms | p99.9 ms | 1 conn p50 / p99 ms | CPU gateway / runner | errors | checked | p99 ≤ 100 ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
  );
  for (const r of p.runs)
    lines.push(
      `| ${r.name} \`${r.path}\` | ${r.matching.toLocaleString('en')} | ${r.rows_on_page} | ${r.connections} | ${r.req_per_s} | ${r.p50_ms} | ${r.p99_ms} | ${r.p99_9_ms} | ${r.unloaded.p50_ms} / ${r.unloaded.p99_ms} | ${r.gateway_cpu_pct}% / ${r.runner_cpu_pct}% | ${r.non_2xx + r.errors} | ${r.problems.length ? r.problems.join('; ') : 'ok'} | ${r.target_met ? 'yes' : 'NO'} |`,
    );
  return lines;
}

/** The report's targets for the portal: one per query, or one saying why nothing was measured. */
export function portalTargets(p: PortalReport): Array<{ name: string; goal: string; measured: string; met: boolean | null }> {
  const goal = `≤ ${p.target_p99_ms} ms${p.quick ? ` (quick: ${p.seeded.toLocaleString('en')} seeded, not the 1M target)` : ''}`;
  if (p.skipped) return [{ name: 'portal transactions list and filtered search p99', goal, measured: `not measured: ${p.skipped}`, met: null }];
  return p.runs.map((r) => ({
    name: `portal ${r.name.replace(/^portal: /, '')} p99 (${r.connections} connections, ${p.stored_in_account.toLocaleString('en')} stored)`,
    goal,
    measured: `${r.p99_ms} ms (p50 ${r.p50_ms}, p99.9 ${r.p99_9_ms}; ${r.req_per_s} req/s)${r.problems.length ? `; page check failed: ${r.problems.join('; ')}` : ''}${r.non_2xx + r.errors ? `; ${r.non_2xx} non-2xx, ${r.errors} wrong answers` : ''}`,
    met: r.target_met,
  }));
}
