// The hosted checkout under kill -9 (docs/contract.md §14; issue 10 item 6): N sessions are opened
// through the real socket as a shopper's browser would (the merchant's signed form, the
// loading page's form, the payment page for its form token), then every card form is
// submitted at once and the gateway is SIGKILLed while they are in flight (at a random
// moment within the time a batch of N submits takes, measured first on a warm-up batch that
// is not killed). After the restart on the same data, each session is
// either still open (payment_status 1000, no ledger postings, no events) or paid exactly
// once (status captured for its amount, one payment.succeeded event, one capture posting
// and at most one fee posting); a submit answered before the kill is paid. Then the card is
// submitted again for every session, all at once: the open ones are paid, the paid ones
// show their result (HTTP 200, approved) and change nothing; every session ends paid
// exactly once, and the ledger verifies (ledger/verify.ts) after each restart.
import type { Kysely } from 'kysely';
import type { TollgateClient } from '../../client/index.js';
import type { DB } from '../../db/schema.js';
import { openStore } from '../../db/store.js';
import { verifyLedger } from '../../ledger/verify.js';
import {
  createMerchant,
  type Engine,
  type FreshDatabase,
  freePort,
  freshDatabase,
  type GatewayProcess,
  gatewayClient,
  gatewayEnv,
  startGateway,
} from '../process.js';

export interface CheckoutCrashOptions {
  rounds: number;
  /** Sessions paid at once in each round. */
  sessions: number;
  check(name: string, ok: boolean, detail?: string): void;
  log(line: string): void;
}

const REQUEST_TIMEOUT_MS = 15_000;
const YEAR = String(new Date().getUTCFullYear() + 3);
/** Sessions opened at once (each is three requests). */
const OPEN_CONCURRENCY = 6;

interface Opened {
  session_id: string;
  form_token: string;
  amount_minor: number;
}

/** What the database says about one session's payment. */
interface Seen {
  transaction_id: string;
  status: string;
  card_brand: string;
  amount_minor: number;
  captured_minor: number;
  updated_at: number;
  events: string[];
  postings: string[];
  /** Sum of the merchant_pending entries of its capture postings. */
  captured_in_ledger: number;
}

type Verdict = 'open' | 'paid' | string;

async function http(url: string, init: RequestInit = {}): Promise<{ status: number; location: string; body: string }> {
  const r = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...init });
  return { status: r.status, location: r.headers.get('location') ?? '', body: await r.text() };
}

const form = (fields: Record<string, string> | Array<[string, string]>): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});

/** A session as the shopper's browser gets there: signed form → loading page → its form → payment page. */
async function openSession(base: string, client: TollgateClient, order_no: string, amount: string): Promise<Opened> {
  const request = client.checkoutForm({ order_no, currency: 'USD', amount, return_url: 'https://shop.example/done', cancel_url: 'https://shop.example/cart' });
  const loading = await http(`${base}/v1/checkout`, form(request.fields));
  const session_id = /action="\/v1\/checkout\/(cs_[A-Za-z0-9_-]{32})"/.exec(loading.body)?.[1];
  const signInfo = /name="signInfo" value="([^"]*)"/.exec(loading.body)?.[1];
  if (loading.status !== 200 || !session_id || !signInfo) throw new Error(`POST /v1/checkout answered ${loading.status}: ${loading.body.slice(0, 300)}`);
  const forward = await http(`${base}/v1/checkout/${session_id}`, form({ signInfo }));
  if (forward.status !== 303) throw new Error(`the loading page's form answered ${forward.status}`);
  const page = await http(`${base}/pay/${session_id}`);
  const form_token = /name="form_token" value="([^"]+)"/.exec(page.body)?.[1];
  if (page.status !== 200 || !form_token) throw new Error(`the payment page answered ${page.status} without a form token`);
  const [whole = '0', cents = '00'] = amount.split('.');
  return { session_id, form_token, amount_minor: Number(whole) * 100 + Number(cents) };
}

const payCard = (base: string, s: Opened) =>
  http(
    `${base}/pay/${s.session_id}`,
    form({ form_token: s.form_token, card_number: '4242424242424242', expiry_month: '12', expiry_year: YEAR, security_code: '123', holder: 'Ana Silva' }),
  );

async function inspect(db: Kysely<DB>, sessions: Opened[]): Promise<Map<string, Seen>> {
  const ids = sessions.map((s) => s.session_id);
  const links = await db.selectFrom('checkout_sessions').select(['session_id', 'transaction_id']).where('session_id', 'in', ids).execute();
  const txOf = new Map(links.map((l) => [l.session_id, l.transaction_id]));
  const txs = links.map((l) => l.transaction_id);
  const payments = await db
    .selectFrom('payments')
    .select(['transaction_id', 'status', 'card_brand', 'amount_minor', 'captured_minor', 'updated_at'])
    .where('transaction_id', 'in', txs)
    .execute();
  const events = await db.selectFrom('events').select(['object_id', 'event_type']).where('object_id', 'in', txs).execute();
  const postings = await db.selectFrom('ledger_postings').select(['transaction_id', 'posting_id', 'reason']).where('transaction_id', 'in', txs).execute();
  const entries = await db
    .selectFrom('ledger_entries')
    .select(['posting_id', 'amount_minor'])
    .where('transaction_id', 'in', txs)
    .where('ledger_account', '=', 'merchant_pending')
    .execute();
  const captureIds = new Set(postings.filter((p) => p.reason === 'capture').map((p) => p.posting_id));
  const out = new Map<string, Seen>();
  for (const s of sessions) {
    const tx = txOf.get(s.session_id) ?? '';
    const p = payments.find((x) => x.transaction_id === tx);
    const mine = postings.filter((x) => x.transaction_id === tx);
    out.set(s.session_id, {
      transaction_id: tx,
      status: p?.status ?? '(no payment)',
      card_brand: p?.card_brand ?? '',
      amount_minor: Number(p?.amount_minor ?? -1),
      captured_minor: Number(p?.captured_minor ?? -1),
      updated_at: Number(p?.updated_at ?? -1),
      events: events.filter((e) => e.object_id === tx).map((e) => e.event_type),
      postings: mine.map((x) => x.reason).sort(),
      captured_in_ledger: entries
        .filter((e) => captureIds.has(e.posting_id) && mine.some((x) => x.posting_id === e.posting_id))
        .reduce((a, e) => a + Number(e.amount_minor), 0),
    });
  }
  return out;
}

/** 'open', 'paid' (exactly once), or what is wrong. */
function verdict(s: Opened, x: Seen): Verdict {
  if (!x.transaction_id) return 'the session is gone';
  if (x.status === 'pending' && x.card_brand === '') {
    return x.events.length === 0 && x.postings.length === 0 ? 'open' : `open, yet ${x.events.length} events and postings ${x.postings.join(',') || 'none'}`;
  }
  const postings = x.postings.filter((r) => r !== 'fee');
  const fees = x.postings.length - postings.length;
  const once =
    x.status === 'captured' &&
    x.captured_minor === s.amount_minor &&
    x.events.length === 1 &&
    x.events[0] === 'payment.succeeded' &&
    postings.length === 1 &&
    postings[0] === 'capture' &&
    fees <= 1;
  if (once) return 'paid';
  return `${x.status} (card_brand ${x.card_brand || 'none'}, captured ${x.captured_minor} of ${s.amount_minor}), events [${x.events.join(', ')}], postings [${x.postings.join(', ')}]`;
}

/** The capture posting moved the amount into merchant_pending (before a fee takes its part). */
function ledgerMatches(s: Opened, x: Seen): boolean {
  return x.captured_in_ledger === s.amount_minor;
}

async function withDb<T>(url: string, fn: (db: Kysely<DB>) => Promise<T>): Promise<T> {
  const store = openStore(url);
  try {
    return await fn(store.db);
  } finally {
    await store.close();
  }
}

export async function checkoutCrash(engine: Engine, o: CheckoutCrashOptions): Promise<void> {
  o.log(`\n# hosted checkout paid during kill -9 on ${engine}: ${o.rounds} rounds of ${o.sessions} sessions`);
  const fresh: FreshDatabase = await freshDatabase(engine, 'crashco');
  let gw: GatewayProcess | null = null;
  try {
    // A payment a kill left at the processor (docs/attempts.md) is due to the sweeper 2 s after it was sent.
    const env = gatewayEnv(fresh, await freePort(), { TOLLGATE_WORKERS: engine === 'postgres' ? '2' : '1', TOLLGATE_PROCESSOR_TIMEOUT_MS: '2000' });
    const m = createMerchant(env, 'crash-checkout');
    gw = await startGateway(env);
    const client = gatewayClient(gw.url, m);
    const open = async (round: number): Promise<Opened[]> => {
      const sessions: Opened[] = [];
      for (let i = 0; i < o.sessions; i += OPEN_CONCURRENCY) {
        const batch = Array.from({ length: Math.min(OPEN_CONCURRENCY, o.sessions - i) }, (_, k) =>
          openSession(
            (gw as GatewayProcess).url,
            client,
            `CO-${round}-${i + k}`,
            `${1 + ((i + k) % 97)}.${String((round * 31 + i + k) % 100).padStart(2, '0')}`,
          ),
        );
        sessions.push(...(await Promise.all(batch)));
      }
      return sessions;
    };

    // Warm-up, not killed: how long N submits at once take (the window the kills aim into),
    // and the plain case: every one answered 303 and paid exactly once.
    const warm = await open(0);
    const t0 = Date.now();
    const warmAnswers = await Promise.all(warm.map((s) => payCard(gw?.url as string, s)));
    const batch_ms = Math.max(20, Date.now() - t0);
    const warmSeen = await withDb(fresh.url, (db) => inspect(db, warm));
    const warmWrong = warm.filter((s, i) => warmAnswers[i]?.status !== 303 || verdict(s, warmSeen.get(s.session_id) as Seen) !== 'paid');
    o.check(
      `without a kill, ${warm.length} submits at once are each answered 303 and paid exactly once (${batch_ms} ms)`,
      warmWrong.length === 0,
      warmWrong
        .slice(0, 3)
        .map((s) => s.session_id)
        .join(', '),
    );

    const totals = { paidBeforeKill: 0, openAfterKill: 0, answeredBeforeKill: 0, cutOff: 0, mixed: 0 };
    for (let round = 1; round <= o.rounds; round++) {
      const base: string = gw.url;
      const sessions = await open(round);

      // Every card form at once (odd rounds), or each at a random moment of the batch's window
      // (even rounds: the submits then fall into different commits, so a kill can land
      // between them); the kill comes at a random moment of that window.
      const spread_ms = round % 2 === 0 ? batch_ms : 0;
      const delay_ms = Math.round((batch_ms + spread_ms) * (0.05 + Math.random() * 0.95));
      const answered = new Map<string, number>();
      const later = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const submits = sessions.map((s) =>
        later(Math.random() * spread_ms)
          .then(() => payCard(base, s))
          .then(
            (r) => {
              answered.set(s.session_id, r.status);
            },
            () => undefined, // cut off by the kill
          ),
      );
      await later(delay_ms);
      await gw.crash();
      await Promise.all(submits);
      gw = await startGateway(env);
      const acked = [...answered.entries()].filter(([, status]) => status === 303).map(([id]) => id);
      const bad = [...answered.entries()].filter(([, status]) => status !== 303).map(([id, status]) => `${id}: HTTP ${status}`);

      // A kill between a payment's attempt and its answer left it `processing`: the restarted
      // gateway's sweeper asks the processor again (the in-process sandbox forgot it with the
      // process: not found), which opens the session again.
      let after = await withDb(fresh.url, (db) => inspect(db, sessions));
      const atProcessor = sessions.filter((s) => after.get(s.session_id)?.status === 'processing').length;
      for (const until = Date.now() + 60_000; Date.now() < until && sessions.some((s) => after.get(s.session_id)?.status === 'processing'); ) {
        await later(1_000);
        after = await withDb(fresh.url, (db) => inspect(db, sessions));
      }
      if (atProcessor > 0) o.log(`  round ${round}: ${atProcessor} left at the processor by the kill, settled by the sweeper`);
      // After the restart (and the sweeper): open or paid exactly once; answered means paid.
      const verdicts = sessions.map((s) => [s, verdict(s, after.get(s.session_id) as Seen)] as const);
      const wrong = verdicts.filter(([, v]) => v !== 'open' && v !== 'paid').map(([s, v]) => `${s.session_id}: ${v}`);
      const paid = verdicts.filter(([, v]) => v === 'paid').map(([s]) => s);
      const lost = acked.filter((id) => verdicts.find(([s]) => s.session_id === id)?.[1] !== 'paid');
      const ledgerOff = paid.filter((s) => !ledgerMatches(s, after.get(s.session_id) as Seen)).map((s) => s.session_id);
      totals.paidBeforeKill += paid.length;
      totals.openAfterKill += sessions.length - paid.length - wrong.length;
      totals.answeredBeforeKill += answered.size;
      totals.cutOff += sessions.length - answered.size;
      // Mid-flight: some sessions paid and some not, or paid ones whose answer the kill cut off.
      if ((paid.length > 0 && paid.length < sessions.length) || paid.length > answered.size) totals.mixed++;
      o.log(
        `  round ${round}: submits ${spread_ms ? `spread over ${spread_ms} ms` : 'all at once'}, killed after ${delay_ms} ms with ${answered.size} of ${sessions.length} answered; after the restart ${paid.length} paid, ${sessions.length - paid.length - wrong.length} open`,
      );
      o.check(`round ${round}: every submit answered before the kill was a 303 (to the page)`, bad.length === 0, bad.slice(0, 3).join('; '));
      o.check(
        `round ${round}: after the restart each session is open (1000, no postings, no events) or paid exactly once`,
        wrong.length === 0,
        wrong.slice(0, 3).join('; '),
      );
      o.check(`round ${round}: every submit answered before the kill is paid`, lost.length === 0, lost.slice(0, 3).join(', '));
      o.check(`round ${round}: each paid session's capture posting carries its amount`, ledgerOff.length === 0, ledgerOff.slice(0, 3).join(', '));
      const verified = await withDb(fresh.url, (db) => verifyLedger(db));
      o.check(`round ${round}: the ledger verifies after the restart (${verified.postings} postings)`, verified.ok, verified.problems.slice(0, 3).join('; '));

      // The card again for every session, all at once: open ones pay, paid ones show their result.
      const again = await Promise.all(
        sessions.map(async (s) => [s, await payCard(base, s).catch((e: Error) => ({ status: 0, location: '', body: e.message }))] as const),
      );
      const paidIds = new Set(paid.map((s) => s.session_id));
      const resubmitWrong: string[] = [];
      for (const [s, r] of again) {
        if (paidIds.has(s.session_id)) {
          if (r.status !== 200 || !/data-outcome="approved"/.test(r.body)) resubmitWrong.push(`${s.session_id} (paid): HTTP ${r.status}`);
        } else if (r.status !== 303 || r.location !== `/pay/${s.session_id}`) resubmitWrong.push(`${s.session_id} (open): HTTP ${r.status} → ${r.location}`);
      }
      o.check(
        `round ${round}: a second submit pays the open sessions (303) and shows the paid ones their result (200, approved)`,
        resubmitWrong.length === 0,
        resubmitWrong.slice(0, 3).join('; '),
      );
      const end = await withDb(fresh.url, (db) => inspect(db, sessions));
      const notOnce = sessions.map((s) => [s, verdict(s, end.get(s.session_id) as Seen)] as const).filter(([, v]) => v !== 'paid');
      o.check(
        `round ${round}: every session ends paid exactly once (${sessions.length})`,
        notOnce.length === 0,
        notOnce
          .slice(0, 3)
          .map(([s, v]) => `${s.session_id}: ${v}`)
          .join('; '),
      );
      const changed = paid.filter((s) => {
        const a = after.get(s.session_id) as Seen;
        const b = end.get(s.session_id) as Seen;
        return a.updated_at !== b.updated_at || a.events.length !== b.events.length || a.postings.join() !== b.postings.join();
      });
      o.check(
        `round ${round}: the second submit changed nothing on the sessions paid before the kill (${paid.length})`,
        changed.length === 0,
        changed
          .slice(0, 3)
          .map((s) => s.session_id)
          .join(', '),
      );
      const endLedger = await withDb(fresh.url, (db) => verifyLedger(db));
      o.check(`round ${round}: the ledger verifies after the second submits`, endLedger.ok, endLedger.problems.slice(0, 3).join('; '));
    }
    o.log(
      `  checkout totals: ${o.rounds} kills, ${totals.mixed} of them mid-flight (some sessions paid and some open, or paid without an answer); ${totals.answeredBeforeKill} submits answered before a kill, ${totals.cutOff} cut off; ${totals.paidBeforeKill} sessions found paid after a restart, ${totals.openAfterKill} found open`,
    );
  } finally {
    if (gw) await gw.crash();
    await fresh.drop();
  }
}
