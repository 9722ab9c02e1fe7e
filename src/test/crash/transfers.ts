// Transfers and reversals under kill -9 (docs/contract.md §12, §18). A test platform account gets
// an API key (`apikey create --json`) and a known balance (`balance top-up`, again between
// rounds), and a few connected accounts. Each round fires bursts of transfers (asking for
// more than the balance) and reversals of acknowledged ones (parts, "the rest", more than
// is left), each with its own Idempotency-Key and a tag in its metadata, on LANES lanes; the
// gateway's process group is SIGKILLed once a random share of the round is answered.
// While it is down: no account's available balance below zero, reversed ≤ amount, money
// conserved (topped up = the sum of every account's available), the ledger verifies, and
// what each cut-off request left behind is noted (found by its tag). The Idempotency-Keys
// of requests the kill cut off are then released, as if their 60 s lease had run out (the
// payouts part makes dispatch jobs due the same way), so the resends in the next round,
// with the SAME key and body, run the handler again: one that had committed must answer
// what it made (idempotency_ref), never make a second one or refuse. After the last round
// every request still unanswered is resent until answered. Then: every acknowledged
// transfer and reversal exists exactly once with its id, a replay of its key answers the
// same id, no request made two, nothing the clients never asked for, refused requests made
// nothing, no available balance below zero (also sampled during the load), reversed ≤
// amount, money conserved, `tollgate ledger verify` clean.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { openStore, type Store } from '../../db/store.js';
import { verifyLedger } from '../../ledger/verify.js';
import { cli, createMerchant, type Engine, type FreshDatabase, freePort, freshDatabase, type GatewayProcess, gatewayEnv, startGateway } from '../process.js';

export interface TransferCrashOptions {
  /** Rounds, each a burst killed mid-flight. */
  rounds: number;
  /** New transfers per round (reversals come on top, about half as many). */
  transfers: number;
  check(name: string, ok: boolean, detail?: string): void;
  log(line: string): void;
}

const LANES = 12;
const CONNECTED = 4;
const REQUEST_TIMEOUT_MS = 10_000;
/** Minor units (USD): the first top-up, and one more before each later round. */
const FIRST_TOP_UP = 40_000;
const ROUND_TOP_UP = 25_000;

type Kind = 'transfer' | 'reversal';

interface Req {
  kind: Kind;
  /** Also in the body's metadata (`req`): finds what the request made in the database. */
  tag: string;
  idempotency_key: string;
  path: string;
  body: Record<string, unknown>;
  /** The transfer a reversal reverses. */
  transfer?: string;
  /** Answered 200: the object's id and amount. */
  ack?: { id: string; amount: number };
  /** Answered 400 with this code. */
  refused?: string;
  /** The id found under its tag while the gateway was down after its answer was lost. */
  stored_at_kill?: string;
}

type Answer = { status: number; body: Record<string, any>; replayed: boolean } | null;

interface Books {
  transfers: Array<{ id: string; destination: string; amount_minor: number; reversed_minor: number; metadata: string }>;
  reversals: Array<{ id: string; transfer_id: string; amount_minor: number; metadata: string }>;
  /** merchant_available per account (every account: the platform and the connected ones). */
  available: Map<string, number>;
}

const later = (ms: number) => new Promise((r) => setTimeout(r, ms));
const tagOf = (metadata: string) => (JSON.parse(metadata) as Record<string, string>).req ?? '';

async function readBooks(st: Store): Promise<Books> {
  const transfers = (await st.db.selectFrom('transfers').select(['id', 'destination', 'amount_minor', 'reversed_minor', 'metadata']).execute()).map((t) => ({
    ...t,
    amount_minor: Number(t.amount_minor),
    reversed_minor: Number(t.reversed_minor),
  }));
  const reversals = (await st.db.selectFrom('transfer_reversals').select(['id', 'transfer_id', 'amount_minor', 'metadata']).execute()).map((r) => ({
    ...r,
    amount_minor: Number(r.amount_minor),
  }));
  const rows = await st.db
    .selectFrom('ledger_balances')
    .select(['account_id', sql<number>`sum(balance_minor)`.as('total')])
    .where('currency', '=', 'USD')
    .where('ledger_account', '=', 'merchant_available')
    .groupBy(['account_id', 'currency', 'ledger_account'])
    .execute();
  return { transfers, reversals, available: new Map(rows.map((r) => [r.account_id, Number(r.total)])) };
}

/** [] when no available balance is below zero, reversed ≤ amount everywhere and the money is all there. */
function booksProblems(b: Books, funded: number): string[] {
  const problems: string[] = [];
  for (const [account, v] of b.available) if (v < 0) problems.push(`available of ${account} is ${v}`);
  for (const t of b.transfers)
    if (t.reversed_minor > t.amount_minor || t.reversed_minor < 0) problems.push(`${t.id}: reversed ${t.reversed_minor} of ${t.amount_minor}`);
  const total = [...b.available.values()].reduce((a, v) => a + v, 0);
  if (total !== funded) problems.push(`the accounts' available balances sum to ${total}, topped up ${funded}`);
  return problems;
}

export async function transferCrash(engine: Engine, o: TransferCrashOptions): Promise<void> {
  o.log(`\n# transfers during kill -9 on ${engine}: ${o.rounds} rounds of ${o.transfers} new transfers and about half as many reversals`);
  const fresh: FreshDatabase = await freshDatabase(engine, 'crashtr');
  let gw: GatewayProcess | null = null;
  let store: Store | null = null;
  try {
    const env = gatewayEnv(fresh, await freePort(), {
      TOLLGATE_WORKERS: engine === 'postgres' ? '2' : '1',
      TOLLGATE_API_RATE_LIMIT: '100000',
    });
    const m = createMerchant(env, 'crash-transfers');
    const platform = m.account_id;
    const operator = (args: string[]) => {
      const r = cli(env, args);
      if (r.status !== 0) throw new Error(`tollgate ${args.join(' ')}: ${(r.stderr || r.stdout).trim().slice(0, 300)}`);
      return r.stdout;
    };
    const key = (JSON.parse(operator(['apikey', 'create', '--account', platform, '--json']).trim().split('\n').pop() as string) as { secret: string }).secret;
    let funded = 0;
    const topUp = (minor: number) => {
      operator(['balance', 'top-up', '--account', platform, '--currency', 'USD', '--amount', (minor / 100).toFixed(2)]);
      funded += minor;
    };
    topUp(FIRST_TOP_UP);
    gw = await startGateway(env);
    store = openStore(fresh.url);
    const st = store;
    const base = gw.url;
    const violations: string[] = [];

    const call = async (method: 'GET' | 'POST', path: string, body?: Record<string, unknown>, idempotency_key?: string): Promise<Answer> => {
      let res: Response;
      let text: string;
      try {
        res = await fetch(`${base}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${key}`,
            ...(body ? { 'content-type': 'application/json' } : {}),
            ...(idempotency_key ? { 'idempotency-key': idempotency_key } : {}),
          },
          body: body ? JSON.stringify(body) : undefined,
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        text = await res.text();
      } catch {
        return null; // no answer: the gateway is down or was killed mid-request
      }
      try {
        return { status: res.status, body: JSON.parse(text) as Record<string, any>, replayed: res.headers.get('idempotent-replayed') === 'true' };
      } catch {
        violations.push(`${method} ${path}: HTTP ${res.status}, not JSON: ${text.slice(0, 200)}`);
        return { status: res.status, body: {}, replayed: false };
      }
    };

    const dests: string[] = [];
    for (let i = 0; i < CONNECTED; i++) {
      const r = await call('POST', '/v1/accounts', { capabilities: { transfers: { requested: true } } });
      if (r?.status !== 200) throw new Error(`POST /v1/accounts: ${r ? `HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}` : 'no answer'}`);
      dests.push(r.body.id as string);
    }

    const book = new Map<string, Req>();
    const totals = { answers: 0, lost: 0, resent: 0, rerunFound: 0, released: 0, keyBusy: 0, kills: 0, midFlight: 0, insufficient: 0, tooLarge: 0 };
    let minAvailable = Number.POSITIVE_INFINITY;
    let samples = 0;
    let n = 0;
    const t0 = Date.now();

    const newTransfer = (): Req => {
      const tag = `T${n++}-${randomUUID().slice(0, 8)}`;
      const req: Req = {
        kind: 'transfer',
        tag,
        idempotency_key: randomUUID(),
        path: '/v1/transfers',
        body: {
          amount: 100 + Math.floor(Math.random() * 1900),
          currency: Math.random() < 0.2 ? 'USD' : 'usd',
          destination: dests[Math.floor(Math.random() * dests.length)],
          metadata: { req: tag },
        },
      };
      book.set(tag, req);
      return req;
    };
    const newReversal = (): Req | null => {
      const acked = [...book.values()].filter((r) => r.kind === 'transfer' && r.ack);
      const t = acked[Math.floor(Math.random() * acked.length)];
      if (!t?.ack) return null;
      const tag = `R${n++}-${randomUUID().slice(0, 8)}`;
      const dice = Math.random();
      // A part, "the rest" (no amount), or more than was sent.
      const amount = dice < 0.6 ? 1 + Math.floor(Math.random() * Math.floor(t.ack.amount / 2)) : dice < 0.85 ? undefined : t.ack.amount + 1;
      const req: Req = {
        kind: 'reversal',
        tag,
        idempotency_key: randomUUID(),
        path: `/v1/transfers/${t.ack.id}/reversals`,
        transfer: t.ack.id,
        body: { ...(amount === undefined ? {} : { amount }), metadata: { req: tag } },
      };
      book.set(tag, req);
      return req;
    };

    /** Records an answer; false when the request is still without one (sent again later). */
    const record = (req: Req, r: Answer, where: string): boolean => {
      if (!r) return false;
      if (r.status === 409 && String(r.body.error?.message).includes('still being processed')) {
        totals.keyBusy++;
        return false;
      }
      if (r.status >= 500) {
        violations.push(`${where} ${req.tag}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
        return true;
      }
      totals.answers++;
      if (r.status === 200) {
        const id = String(r.body.id);
        const want = req.kind === 'transfer' ? 'transfer' : 'transfer_reversal';
        if (r.body.object !== want || r.body.metadata?.req !== req.tag)
          violations.push(`${where} ${req.tag}: answered ${r.body.object} ${id} tagged ${r.body.metadata?.req}`);
        if (req.kind === 'transfer' && (r.body.amount !== req.body.amount || r.body.destination !== req.body.destination))
          violations.push(`${where} ${req.tag}: answered ${r.body.amount} to ${r.body.destination}`);
        if (req.kind === 'reversal' && (r.body.transfer !== req.transfer || (req.body.amount !== undefined && r.body.amount !== req.body.amount)))
          violations.push(`${where} ${req.tag}: answered ${r.body.amount} of ${r.body.transfer}`);
        if (req.ack && req.ack.id !== id) violations.push(`${where} ${req.tag}: answered ${id}, earlier ${req.ack.id} (made twice?)`);
        if (req.refused) violations.push(`${where} ${req.tag}: answered ${id}, earlier refused ${req.refused}`);
        if (req.stored_at_kill && req.stored_at_kill !== id)
          violations.push(`${where} ${req.tag}: stored as ${req.stored_at_kill} when the answer was lost, resent and answered ${id}`);
        if (req.stored_at_kill && !r.replayed) totals.rerunFound++;
        req.ack ??= { id, amount: Number(r.body.amount) };
        return true;
      }
      const code = String(r.body.error?.code);
      const expected = req.kind === 'transfer' ? ['balance_insufficient'] : ['amount_too_large', 'balance_insufficient'];
      if (r.status !== 400 || !expected.includes(code))
        violations.push(`${where} ${req.tag}: HTTP ${r.status} ${code} ${String(r.body.error?.message).slice(0, 200)}`);
      else if (req.stored_at_kill) violations.push(`${where} ${req.tag}: stored as ${req.stored_at_kill} when the answer was lost, resent and refused ${code}`);
      else if (req.ack) violations.push(`${where} ${req.tag}: refused ${code}, earlier answered ${req.ack.id}`);
      if (code === 'balance_insufficient') totals.insufficient++;
      if (code === 'amount_too_large') totals.tooLarge++;
      req.refused = code;
      return true;
    };

    type Task = { req: () => Req | null; resend: boolean };
    let carried: Task[] = [];
    for (let round = 1; round <= o.rounds; round++) {
      const next: Req[] = [];
      let answeredNow = 0;
      let inflight = 0;
      const stop = { now: false };
      // What the last kill cut off goes first (same key, same body); then new transfers, and reversals of acknowledged ones.
      const work: Array<() => Req | null> = [];
      for (let i = 0; i < o.transfers; i++) {
        work.push(newTransfer);
        if (Math.random() < 0.5) work.push(newReversal);
      }
      const queue: Task[] = [...carried, ...work.sort(() => Math.random() - 0.5).map((f) => ({ req: f, resend: false }))];
      carried = [];
      let qi = 0;
      const lanes = Array.from({ length: LANES }, async () => {
        while (qi < queue.length && !stop.now) {
          const task = queue[qi++] as Task;
          const req = task.req();
          if (!req) continue;
          inflight++;
          const r = await call('POST', req.path, req.body, req.idempotency_key);
          inflight--;
          if (task.resend) totals.resent++;
          if (record(req, r, task.resend ? 'resend' : req.kind)) answeredNow++;
          else {
            if (!r) totals.lost++;
            next.push(req);
          }
        }
      });
      const sampler = (async () => {
        while (!stop.now) {
          const rows = await st.db
            .selectFrom('ledger_balances')
            .select(sql<number>`sum(balance_minor)`.as('total'))
            .where('ledger_account', '=', 'merchant_available')
            .groupBy(['account_id', 'currency'])
            .execute();
          for (const r of rows) minAvailable = Math.min(minAvailable, Number(r.total));
          samples++;
          await later(15);
        }
      })();
      const target = Math.max(1, Math.floor(queue.length * (0.2 + Math.random() * 0.5)));
      const deadline = Date.now() + 30_000;
      while (answeredNow < target && qi < queue.length && Date.now() < deadline) await later(2);
      const inflightAtKill = inflight;
      stop.now = true; // no new request starts; those in flight are cut off by the kill
      await (gw as GatewayProcess).crash();
      totals.kills++;
      await Promise.all(lanes);
      await sampler;
      const mid = inflightAtKill > 0 && answeredNow > 0;
      if (mid) totals.midFlight++;

      // The gateway is down: the books as the kill left them.
      const books = await readBooks(st);
      const problems = booksProblems(books, funded);
      const ledger = await verifyLedger(st.db);
      o.check(
        `round ${round}: killed with ${inflightAtKill} requests in flight${mid ? ' (mid-flight)' : ''}; ${books.transfers.length} transfers, ${books.reversals.length} reversals stored; no balance below zero, reversed ≤ amount, money conserved; ledger verifies (${ledger.postings} postings)`,
        problems.length === 0 && ledger.ok,
        [...problems, ...ledger.problems.slice(0, 3)].join('; '),
      );
      // What a cut-off request left behind, to compare with its resend's answer.
      const byTag = new Map<string, string>([...books.transfers, ...books.reversals].map((x) => [tagOf(x.metadata), x.id]));
      for (const req of next) req.stored_at_kill = byTag.get(req.tag);
      // Their keys' leases (60 s) made due: the resends run the handler again under the same key.
      const released = await st.transaction((tx) =>
        tx.updateTable('idempotency_keys').set({ locked_until: 0 }).where('status', '=', 'started').returning('id').execute(),
      );
      totals.released += released.length;
      o.log(
        `  round ${round}: ${answeredNow} answers, ${next.length} cut off (${next.filter((r) => r.stored_at_kill).length} of them committed), ${queue.length - qi} not sent yet; ${released.length} Idempotency-Keys released`,
      );
      // What was cut off is resent first next round (same key and body); what never started is sent then.
      carried = [...next.map((r) => ({ req: () => r, resend: true })), ...queue.slice(qi)];
      if (round < o.rounds) topUp(ROUND_TOP_UP);
      gw = await startGateway(env);
    }

    // Recovery: every request without an answer is resent (same key and body) until answered.
    for (let attempt = 0; attempt < 5; attempt++) {
      const pending = [...book.values()].filter((r) => !r.ack && !r.refused);
      if (pending.length === 0) break;
      for (let i = 0; i < pending.length; i += LANES)
        await Promise.all(
          pending.slice(i, i + LANES).map(async (req) => {
            const r = await call('POST', req.path, req.body, req.idempotency_key);
            totals.resent++;
            record(req, r, 'recovery');
          }),
        );
    }
    const unanswered = [...book.values()].filter((r) => !r.ack && !r.refused).map((r) => r.tag);
    o.check(`every request sent was answered after the resends (${book.size})`, unanswered.length === 0, unanswered.slice(0, 5).join(', '));

    // A replay of every acknowledged request's key answers the same object.
    const acked = [...book.values()].filter((r) => r.ack);
    const badReplays: string[] = [];
    for (let i = 0; i < acked.length; i += LANES)
      await Promise.all(
        acked.slice(i, i + LANES).map(async (req) => {
          const r = await call('POST', req.path, req.body, req.idempotency_key);
          if (r?.status !== 200 || r.body.id !== req.ack?.id || !r.replayed)
            badReplays.push(
              `${req.tag}: ${r ? `HTTP ${r.status} ${r.body.id ?? r.body.error?.code} replayed ${r.replayed}` : 'no answer'}, acknowledged ${req.ack?.id}`,
            );
        }),
      );
    o.check(
      `a replay of each acknowledged request's Idempotency-Key answers its id (${acked.length})`,
      badReplays.length === 0,
      badReplays.slice(0, 3).join('; '),
    );
    await (gw as GatewayProcess).stop();
    gw = null;

    const books = await readBooks(st);
    const made = new Map<string, string[]>();
    for (const x of [...books.transfers, ...books.reversals]) made.set(tagOf(x.metadata), [...(made.get(tagOf(x.metadata)) ?? []), x.id]);
    const wrong = acked.filter((r) => (made.get(r.tag) ?? []).join() !== r.ack?.id).map((r) => `${r.tag}: ${r.ack?.id} stored as [${made.get(r.tag) ?? ''}]`);
    o.check(`every acknowledged transfer and reversal exists exactly once with its id (${acked.length})`, wrong.length === 0, wrong.slice(0, 5).join('; '));
    const twice = [...made.entries()].filter(([, ids]) => ids.length > 1).map(([tag, ids]) => `${tag}: ${ids.join(', ')}`);
    o.check('no request made two', twice.length === 0, twice.slice(0, 5).join('; '));
    const strangers = [...made.keys()].filter((tag) => !book.has(tag));
    o.check('nothing the clients never asked for', strangers.length === 0, strangers.slice(0, 5).join(', '));
    const refusedMade = [...book.values()].filter((r) => r.refused && made.has(r.tag)).map((r) => `${r.tag} (${r.refused})`);
    o.check('a refused request made nothing', refusedMade.length === 0, refusedMade.slice(0, 5).join(', '));
    o.check('no 5xx and no contradicting answer', violations.length === 0, violations.slice(0, 5).join('; '));

    const problems = booksProblems(books, funded);
    const reversedRows = new Map<string, number>();
    for (const r of books.reversals) reversedRows.set(r.transfer_id, (reversedRows.get(r.transfer_id) ?? 0) + r.amount_minor);
    for (const t of books.transfers)
      if ((reversedRows.get(t.id) ?? 0) !== t.reversed_minor)
        problems.push(`${t.id}: reversals sum to ${reversedRows.get(t.id) ?? 0}, reversed ${t.reversed_minor}`);
    const platformLeft = books.available.get(platform) ?? 0;
    o.check(
      `the books: no available balance below zero (lowest of ${samples} samples during the load: ${minAvailable}), reversed ≤ amount and = its reversals, ${funded} topped up = ${platformLeft} on the platform + ${funded - platformLeft} on ${CONNECTED} connected accounts`,
      problems.length === 0 && minAvailable >= 0,
      [...problems, ...(minAvailable < 0 ? [`available sampled at ${minAvailable}`] : [])].slice(0, 5).join('; '),
    );
    const askedMinor = [...book.values()].filter((r) => r.kind === 'transfer').reduce((s, r) => s + Number(r.body.amount), 0);
    o.check(
      `more was asked than funded (${askedMinor} vs ${funded}), and refused (${totals.insufficient} balance_insufficient)`,
      askedMinor > funded && totals.insufficient > 0,
    );
    const verified = await verifyLedger(st.db);
    o.check(`the ledger verifies (${verified.postings} postings, ${verified.transfers} transfers)`, verified.ok, verified.problems.slice(0, 3).join('; '));
    const r = cli(env, ['ledger', 'verify']);
    o.check('tollgate ledger verify', r.status === 0, (r.stdout + r.stderr).trim().split('\n').slice(-3).join(' | '));
    o.check(`at least one kill landed mid-flight (${totals.midFlight} of ${totals.kills})`, totals.midFlight > 0);
    o.log(
      `  transfer totals: ${books.transfers.length} transfers, ${books.reversals.length} reversals; ${totals.answers} answers (${totals.insufficient} balance_insufficient, ${totals.tooLarge} amount_too_large), ${totals.lost} cut off and ${totals.resent} resent (${totals.rerunFound} re-ran under their released key and found what the killed attempt had made; ${totals.released} keys released, ${totals.keyBusy} found still leased); ${totals.kills} kills (${totals.midFlight} mid-flight); ${Math.round((Date.now() - t0) / 1000)} s`,
    );
  } finally {
    if (gw) await gw.crash();
    if (store) await store.close();
    await fresh.drop();
  }
}
