// Authorisations at a remote processor under kill -9 (issue 31, "Bad input and faults";
// docs/attempts.md): the remote sandbox runs as its own process (`tollgate sandbox-processor`,
// 250 ms median latency, long tail), so it outlives the gateway; a test account is pointed at
// it with `tollgate processor set`. Each round fires N signed authorisations at once through
// the client library and SIGKILLs the gateway's process group once the sandbox has acted on
// some but not all of them (its /stats), queues `hang-after` on the next status queries (and,
// on even rounds, on the next cancel) so the restarted gateway's sweeper meets unknown
// answers past the void bound, restarts the gateway, resends every order (a merchant's retry),
// and waits until nothing is open. Then, against what the sandbox did (its
// `GET /control/operations`): every call it acted on was recorded first (a processor_attempts
// row); at most one authorisation per order_no reached it; every authorisation it approved is
// either a payment the merchant queries approved (same transaction) or was cancelled there
// (`<attempt>.void`), never both; every payment the merchant sees approved was approved there
// and not cancelled; a success answered before the kill (or to a resend) is approved; no
// payment is left `processing` and no attempt open; the ledger verifies each round, and
// `tollgate ledger verify` at the end.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { type AuthoriseAnswer, type AuthoriseRequest, NetworkError, type OrderRecord, TollgateApiError, type TollgateClient } from '../../client/index.js';
import { openStore } from '../../db/store.js';
import { verifyLedger } from '../../ledger/verify.js';
import type { OperationRecord } from '../../processors/remote/server.js';
import {
  cli,
  createMerchant,
  type Engine,
  type FreshDatabase,
  freePort,
  freshDatabase,
  type GatewayProcess,
  gatewayClient,
  gatewayEnv,
  ROOT,
  startGateway,
} from '../process.js';

export interface RemoteCrashOptions {
  rounds: number;
  /** Authorisations fired at once in each round. */
  authorisations: number;
  check(name: string, ok: boolean, detail?: string): void;
  log(line: string): void;
}

const API_KEY = 'sbx_crash_key_1';
/** The gateway's processor deadline: the sandbox's p99 is under it, its tail is not. */
const PROCESSOR_TIMEOUT_MS = 2_000;
/** The void bound: an authorisation still unknown this long after it was sent is cancelled at the processor. */
const VOID_AFTER_MS = 3_000;
const LATENCY = { median_ms: 250, p99_ms: 1_500 };
const REQUEST_TIMEOUT_MS = 15_000;
/** How long a kill waits for the sandbox to have acted on its share before it kills anyway. */
const KILL_WAIT_MS = 15_000;
/** How long the restarted gateway's sweeper gets to settle every open attempt. */
const SETTLE_TIMEOUT_MS = 60_000;
const YEAR = String(new Date().getUTCFullYear() + 3);
const APPROVE_CARD = '4242424242424242';
const DECLINE_CARD = '4000000000000002';
/** Payment statuses (`payment_status`) of an authorisation the processor approved. */
const APPROVED_STATUS = new Set(['2000', '2100', '3000', '4000', '4100']);
const OPEN_ATTEMPT = ['sent', 'unknown', 'pending'];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface SandboxProcess {
  url: string;
  child: ChildProcess;
  stats(): Promise<{ acted: number; by_operation: Record<string, number> }>;
  operations(): Promise<OperationRecord[]>;
  queueFaults(operation: string, faults: string[], times: number): Promise<void>;
  stop(): Promise<void>;
}

/** `tollgate sandbox-processor` in its own process (the compiled build), ready when /health answers. */
async function startSandbox(port: number, seed: number): Promise<SandboxProcess> {
  const args = ['sandbox-processor', '--port', String(port), '--api-key', API_KEY, '--seed', String(seed), '--log-level', 'warn'];
  args.push('--latency-median-ms', String(LATENCY.median_ms), '--latency-p99-ms', String(LATENCY.p99_ms));
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/tollgate.js'), ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (d: string) => {
    if (stderr.length < 4_000) stderr += d;
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${API_KEY}` };
  const json = async (p: string, init: RequestInit = {}): Promise<any> => {
    const r = await fetch(`${url}${p}`, { signal: AbortSignal.timeout(5_000), ...init });
    if (r.status !== 200) throw new Error(`sandbox ${init.method ?? 'GET'} ${p} answered ${r.status}: ${(await r.text()).slice(0, 200)}`);
    return r.json();
  };
  const sandbox: SandboxProcess = {
    url,
    child,
    stats: () => json('/stats'),
    async operations() {
      const out: OperationRecord[] = [];
      for (let offset: number | null = 0, pages = 0; offset !== null && pages < 100; pages++) {
        const page = (await json(`/control/operations?offset=${offset}`, { headers: auth })) as { operations: OperationRecord[]; next_offset: number | null };
        out.push(...page.operations);
        offset = page.next_offset;
      }
      return out;
    },
    async queueFaults(operation, faults, times) {
      await json('/control/faults', {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ operation, faults, times }),
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(t);
    },
  };
  for (const until = Date.now() + 15_000; Date.now() < until; await sleep(50)) {
    if (child.exitCode !== null) break;
    try {
      if ((await fetch(`${url}/health`)).status === 200) return sandbox;
    } catch {
      // not listening yet
    }
  }
  await sandbox.stop();
  throw new Error(`the sandbox processor did not start: ${stderr.slice(0, 1_000)}`);
}

type Answered = { info: string; transaction_id: string } | null;

/** One authorisation through the client library, no retries: its answer, or null when the kill cut it off. */
async function authorise(c: TollgateClient, body: AuthoriseRequest): Promise<Answered | { violation: string }> {
  try {
    const a: AuthoriseAnswer = (await c.call('authorise', body)).answer;
    return { info: a.result_info, transaction_id: a.transaction_id };
  } catch (e) {
    if (e instanceof NetworkError) return null;
    if (e instanceof TollgateApiError) return { violation: `${body.order_no}: HTTP ${e.http_status} ${e.message.slice(0, 120)}` };
    return { violation: `${body.order_no}: ${(e as Error).message.slice(0, 200)}` };
  }
}

interface Books {
  attempts: Array<{ attempt_id: string; operation: string; object_id: string; status: string; claim_key: string | null }>;
  payments: Array<{ transaction_id: string; order_no: string; status: string; result_code: string }>;
}

async function books(url: string, account_id: string): Promise<Books> {
  const store = openStore(url);
  try {
    const attempts = await store.db
      .selectFrom('processor_attempts')
      .select(['attempt_id', 'operation', 'object_id', 'status', 'claim_key'])
      .where('account_id', '=', account_id)
      .execute();
    const payments = await store.db
      .selectFrom('payments')
      .select(['transaction_id', 'order_no', 'status', 'result_code'])
      .where('account_id', '=', account_id)
      .execute();
    return { attempts, payments };
  } finally {
    await store.close();
  }
}

async function ledgerVerifies(url: string): Promise<{ ok: boolean; problems: string[]; postings: number }> {
  const store = openStore(url);
  try {
    return await verifyLedger(store.db);
  } finally {
    await store.close();
  }
}

export async function remoteCrash(engine: Engine, o: RemoteCrashOptions): Promise<void> {
  o.log(`\n# authorisations at the remote sandbox during kill -9 on ${engine}: ${o.rounds} rounds of ${o.authorisations} at once`);
  const fresh: FreshDatabase = await freshDatabase(engine, 'crashrm');
  let gw: GatewayProcess | null = null;
  let sandbox: SandboxProcess | null = null;
  try {
    const env = gatewayEnv(fresh, await freePort(), {
      TOLLGATE_WORKERS: engine === 'postgres' ? '2' : '1',
      TOLLGATE_PROCESSOR_TIMEOUT_MS: String(PROCESSOR_TIMEOUT_MS),
      TOLLGATE_PROCESSOR_UNKNOWN_VOID_AFTER_MS: String(VOID_AFTER_MS),
    });
    const m = createMerchant(env, 'crash-remote');
    // One port for every round's sandbox: the account is pointed at it once, before the gateway starts.
    const sandboxPort = await freePort();
    const set = cli(env, [
      'processor',
      'set',
      '--account',
      m.account_id,
      '--connector',
      'sandbox',
      '--base-url',
      `http://127.0.0.1:${sandboxPort}`,
      '--credential',
      `api_key=${API_KEY}`,
    ]);
    if (set.status !== 0) throw new Error(`processor set failed: ${set.stderr.slice(0, 500)}`);
    gw = await startGateway(env);
    const client = gatewayClient(gw.url, m, { retry: { max_retries: 0 }, timeout_ms: REQUEST_TIMEOUT_MS });
    const totals = { midFlight: 0, cutOff: 0, settledLate: 0, voided: 0, notReached: 0, settle_ms: 0 };
    for (let round = 1; round <= o.rounds; round++) {
      sandbox = await startSandbox(sandboxPort, round);
      const r = await remoteRound(o, round, { env, client, sandbox, gw, account_id: m.account_id, url: fresh.url });
      gw = r.gw;
      for (const k of Object.keys(totals) as Array<keyof typeof totals>) totals[k] += r.totals[k];
      await sandbox.stop();
      sandbox = null;
    }
    o.log(
      `  remote totals: ${o.rounds} kills, ${totals.midFlight} with the sandbox mid-way; ${totals.cutOff} answers cut off, ${totals.settledLate} authorisations settled by the sweeper after the restart, ${totals.voided} cancelled at the sandbox past the void bound, ${totals.notReached} never reached it; ${Math.round(totals.settle_ms / o.rounds / 100) / 10} s to settle on average`,
    );
    const verify = cli(env, ['ledger', 'verify']);
    o.check('remote: tollgate ledger verify', verify.status === 0, (verify.stdout + verify.stderr).trim().split('\n').slice(-3).join(' | '));
  } finally {
    if (gw) await gw.crash();
    if (sandbox) await sandbox.stop();
    if (process.env.TOLLGATE_CRASH_KEEP_DB) o.log(`  kept the database: ${fresh.url}`);
    else await fresh.drop();
  }
}

interface RoundEnv {
  env: NodeJS.ProcessEnv;
  client: TollgateClient;
  sandbox: SandboxProcess;
  gw: GatewayProcess;
  account_id: string;
  url: string;
}

async function remoteRound(
  o: RemoteCrashOptions,
  round: number,
  e: RoundEnv,
): Promise<{ gw: GatewayProcess; totals: { midFlight: number; cutOff: number; settledLate: number; voided: number; notReached: number; settle_ms: number } }> {
  const n = o.authorisations;
  const bodies = Array.from(
    { length: n },
    (_, i): AuthoriseRequest => ({
      order_no: `RM-${round}-${i}`,
      currency: 'USD',
      amount: `${1 + ((round * 37 + i) % 90)}.${String((i * 13) % 100).padStart(2, '0')}`,
      card: i % 6 === 5 ? DECLINE_CARD : APPROVE_CARD,
      expiration_month: '12',
      expiration_year: YEAR,
      security_code: '123',
    }),
  );
  const violations: string[] = [];
  const answered = new Map<string, { info: string; transaction_id: string }>();
  const note = (order_no: string, a: Answered | { violation: string }) => {
    if (a === null) return;
    if ('violation' in a) return violations.push(a.violation);
    const before = answered.get(order_no);
    if (a.info === '0000:Success' && before?.info === '0000:Success' && before.transaction_id !== a.transaction_id)
      violations.push(`${order_no}: answered success as ${before.transaction_id}, then as ${a.transaction_id}`);
    if (a.info === '0000:Success' || !before) answered.set(order_no, a);
  };

  // Every authorisation at once; the kill comes once the sandbox has acted on `target` of them
  // (odd rounds early, most still waiting there, which it then approves for a dead gateway).
  const target = 1 + Math.floor(Math.random() * (round % 2 === 1 ? 3 : n - 2));
  const sends = bodies.map(async (b) => note(b.order_no, await authorise(e.client, b)));
  let acted = 0;
  let received = 0;
  for (const until = Date.now() + KILL_WAIT_MS; Date.now() < until && acted < target; await sleep(15)) {
    const s = await e.sandbox.stats();
    acted = s.acted;
    received = s.by_operation.authorise ?? 0;
  }
  await e.gw.crash();
  await Promise.all(sends);
  const cutOff = n - answered.size;
  const midFlight = acted > 0 && acted < n;
  // The restarted sweeper's first status queries hang (unknown past the void bound: a cancel),
  // and on even rounds the first cancel too (acted on, never answered: asked again).
  await e.sandbox.queueFaults('authorise_status', ['hang-after'], 2);
  if (round % 2 === 0) await e.sandbox.queueFaults('cancel', ['hang-after'], 1);
  const gw = await startGateway(e.env);
  const restarted_at = Date.now();
  o.log(
    `  round ${round}: killed with ${acted} of ${n} acted on at the sandbox (target ${target}), ${received} received there, ${answered.size} answered before the kill`,
  );

  // The merchant resends every order (a retry after a timeout): answered from storage, never a second call.
  const resent = await Promise.all(bodies.map(async (b) => [b.order_no, await authorise(e.client, b)] as const));
  for (const [order_no, a] of resent) {
    if (a === null) violations.push(`${order_no}: the resend got no answer from a running gateway`);
    else note(order_no, a);
  }

  // Until the sweeper has nothing open: no open attempt, no payment processing.
  let seen = await books(e.url, e.account_id);
  const openNow = (b: Books) => b.attempts.filter((a) => OPEN_ATTEMPT.includes(a.status)).length + b.payments.filter((p) => p.status === 'processing').length;
  const leftOpen = openNow(seen);
  while (openNow(seen) > 0 && Date.now() - restarted_at < SETTLE_TIMEOUT_MS) {
    await sleep(500);
    seen = await books(e.url, e.account_id);
  }
  const settle_ms = Date.now() - restarted_at;
  const stillOpen = seen.attempts.filter((a) => OPEN_ATTEMPT.includes(a.status));
  const processing = seen.payments.filter((p) => p.status === 'processing');
  o.check(
    `remote round ${round}: the sweeper settles every attempt the kill left open (${leftOpen} open after the restart, ${Math.round(settle_ms / 100) / 10} s)`,
    stillOpen.length === 0 && processing.length === 0,
    stillOpen.length + processing.length === 0
      ? ''
      : `${stillOpen.length} attempts open (${stillOpen
          .slice(0, 3)
          .map((a) => `${a.attempt_id} ${a.status}`)
          .join(', ')}), ${processing.length} payments processing after ${SETTLE_TIMEOUT_MS / 1000} s`,
  );

  const ops = await e.sandbox.operations();
  const query = await e.client.queryOrders({ order_nos: bodies.map((b) => b.order_no) });
  const verdicts = judge(bodies, ops, seen, query.orders_list, answered);
  o.check(
    `remote round ${round}: every call the sandbox acted on was recorded first (${ops.length})`,
    verdicts.unrecorded.length === 0,
    verdicts.unrecorded.slice(0, 3).join(', '),
  );
  o.check(
    `remote round ${round}: at most one authorisation per order_no reached the sandbox`,
    verdicts.twice.length === 0,
    verdicts.twice.slice(0, 3).join('; '),
  );
  o.check(
    `remote round ${round}: every authorisation the sandbox approved (${verdicts.approvedThere}) is approved for the merchant or cancelled there (${verdicts.voided}), never both`,
    verdicts.lost.length === 0,
    verdicts.lost.slice(0, 3).join('; '),
  );
  o.check(
    `remote round ${round}: every payment the merchant sees approved was approved at the sandbox and not cancelled`,
    verdicts.unbacked.length === 0,
    verdicts.unbacked.slice(0, 3).join('; '),
  );
  o.check(
    `remote round ${round}: every order is found, and each success answered (${[...answered.values()].filter((a) => a.info === '0000:Success').length}) is approved`,
    verdicts.unanswered.length === 0,
    verdicts.unanswered.slice(0, 3).join('; '),
  );
  o.check(`remote round ${round}: no 5xx and no contradicting answers`, violations.length === 0, violations.slice(0, 3).join('; '));
  const ledger = await ledgerVerifies(e.url);
  o.check(`remote round ${round}: the ledger verifies (${ledger.postings} postings)`, ledger.ok, ledger.problems.slice(0, 3).join('; '));
  o.log(
    `  round ${round}: ${cutOff} cut off; at the sandbox ${verdicts.approvedThere} approved, ${verdicts.voided} of them cancelled past the void bound; ${verdicts.notReached} orders never reached it; ${verdicts.settledLate} settled by the sweeper`,
  );
  return {
    gw,
    totals: { midFlight: midFlight ? 1 : 0, cutOff, settledLate: verdicts.settledLate, voided: verdicts.voided, notReached: verdicts.notReached, settle_ms },
  };
}

/** The gateway's books and the merchant's query against what the sandbox did; each list names what is wrong. */
function judge(
  bodies: AuthoriseRequest[],
  ops: OperationRecord[],
  seen: Books,
  orders: OrderRecord[],
  answered: Map<string, { info: string; transaction_id: string }>,
) {
  const attemptById = new Map(seen.attempts.map((a) => [a.attempt_id, a]));
  const orderOfTx = new Map(seen.payments.map((p) => [p.transaction_id, p.order_no]));
  for (const a of seen.attempts) if (a.claim_key?.startsWith('order:')) orderOfTx.set(a.object_id, a.claim_key.split(':').slice(2).join(':'));
  // Each round has a sandbox of its own: everything it lists is this round's.
  const round = ops;
  const unrecorded = round.filter((op) => !attemptById.has(op.attempt_id.replace(/\.void$/, ''))).map((op) => `${op.operation} ${op.attempt_id}`);
  const authorisations = round.filter((op) => op.operation === 'authorise');
  const voids = new Set(
    round.filter((op) => op.operation === 'cancel' && op.attempt_id.endsWith('.void')).map((op) => op.attempt_id.slice(0, -'.void'.length)),
  );
  const byOrder = new Map<string, OperationRecord[]>();
  for (const op of authorisations) {
    const order_no = orderOfTx.get(op.transaction_id) ?? `(transaction ${op.transaction_id})`;
    byOrder.set(order_no, [...(byOrder.get(order_no) ?? []), op]);
  }
  const twice = [...byOrder.entries()]
    .filter(([, list]) => list.length > 1)
    .map(([no, list]) => `${no}: ${list.map((op) => `${op.attempt_id} ${op.status}`).join(', ')}`);
  const record = new Map(orders.map((r) => [r.order_no, r]));
  const approvedForMerchant = (order_no: string, transaction_id: string) => {
    const r = record.get(order_no);
    return r?.query_result === '1' && r.transaction_id === transaction_id && APPROVED_STATUS.has(r.payment_status);
  };
  const lost: string[] = [];
  let approvedThere = 0;
  let voided = 0;
  for (const op of authorisations.filter((x) => x.status === 'approved')) {
    approvedThere++;
    const order_no = orderOfTx.get(op.transaction_id) ?? '';
    const approved = approvedForMerchant(order_no, op.transaction_id);
    const cancelled = voids.has(op.attempt_id);
    if (cancelled) voided++;
    if (approved === cancelled)
      lost.push(
        `${order_no} (${op.attempt_id}): ${approved ? 'approved for the merchant and cancelled at the sandbox' : `neither approved for the merchant (${record.get(order_no)?.payment_status || 'not found'}) nor cancelled`}`,
      );
  }
  const backed = new Set(authorisations.filter((x) => x.status === 'approved' && !voids.has(x.attempt_id)).map((x) => x.transaction_id));
  const unbacked = orders
    .filter((r) => r.query_result === '1' && APPROVED_STATUS.has(r.payment_status) && !backed.has(r.transaction_id))
    .map((r) => `${r.order_no} ${r.transaction_id} ${r.payment_status}`);
  const unanswered: string[] = [];
  for (const b of bodies) {
    const r = record.get(b.order_no);
    const a = answered.get(b.order_no);
    if (r?.query_result !== '1') unanswered.push(`${b.order_no}: not found`);
    else if (a?.info === '0000:Success' && !approvedForMerchant(b.order_no, a.transaction_id))
      unanswered.push(`${b.order_no}: answered success as ${a.transaction_id}, now ${r.transaction_id} ${r.payment_status}`);
  }
  const reached = new Set(authorisations.map((op) => orderOfTx.get(op.transaction_id)));
  const notReached = bodies.filter((b) => !reached.has(b.order_no)).length;
  // Settled by the sweeper: approved or declined there, yet not answered so before the kill or to the resend.
  const settledLate = authorisations.filter((op) => {
    const a = answered.get(orderOfTx.get(op.transaction_id) ?? '');
    return op.status !== 'challenge_required' && !(a && a.info !== '0006:Pending at the processor');
  }).length;
  return { unrecorded, twice, lost, approvedThere, voided, unbacked, unanswered, notReached, settledLate };
}
