// PaymentIntent confirm and capture under kill -9 (docs/contract.md §24; issue 33 "Bad input and
// faults"). A test platform account gets an API key; each round fires, on LANES lanes, creates
// of PaymentIntents with confirm=true (an approved card, some declined ones, some with manual
// capture), two-step intents (created, then confirmed by two racing confirms under two keys),
// and captures of the acknowledged `requires_capture` ones (all, or a part), each with its own
// Idempotency-Key and a tag in the intent's metadata; the gateway's process group is SIGKILLed
// once a random share of the round is answered. While it is down: no intent has two approved
// payments, every payment is one confirm's claim (its payment_intent_charges row) and every
// claim's payment exists or is held by its processor attempt, captured ≤ authorised, the
// ledger verifies. The Idempotency-Keys the kill cut off are then released (as if their 60 s
// lease had run out), so the resends, with the SAME key and body, run the handler again: a
// confirm whose claim committed pays the same charge again, which the core answers from what
// the first run made. Every request is resent until answered. After the sweeper settled what
// a kill left at the processor: every acknowledged intent exists once, with the id answered,
// and its status agrees with its payment (succeeded ⇒ captured, requires_capture ⇒
// authorised, requires_payment_method ⇒ declined); no intent has two approved payments and
// no racing confirm charged twice; payments = claims; an acknowledged capture is on the
// payment; captured ≤ authorised; a replay of each acknowledged key answers the same intent;
// `tollgate ledger verify` is clean.
import { randomUUID } from 'node:crypto';
import { openStore, type Store } from '../../db/store.js';
import { verifyLedger } from '../../ledger/verify.js';
import { cli, createMerchant, type Engine, type FreshDatabase, freePort, freshDatabase, type GatewayProcess, gatewayEnv, startGateway } from '../process.js';

export interface IntentCrashOptions {
  /** Rounds, each a burst killed mid-flight. */
  rounds: number;
  /** New intents per round (captures of acknowledged ones come on top). */
  intents: number;
  check(name: string, ok: boolean, detail?: string): void;
  log(line: string): void;
}

const LANES = 12;
const REQUEST_TIMEOUT_MS = 10_000;
/** Payment statuses of an approved payment (a confirm that charged the card). */
const APPROVED = new Set(['authorised', 'captured', 'partially_refunded', 'refunded']);

type Kind = 'create' | 'open' | 'confirm' | 'capture';

interface Req {
  kind: Kind;
  /** The intent's tag (metadata `req`): finds what the request made in the database. */
  tag: string;
  idempotency_key: string;
  path: string;
  body: Record<string, unknown>;
  /** The card is one the sandbox declines. */
  declines: boolean;
  /** A confirm or capture: the intent it names. */
  intent?: string;
  /** Answered (200 or 402): the intent's id and status as answered, and its charge. */
  ack?: { id: string; status: string; charge: string | null; amount_received: number };
  /** Answered 4xx (not 402) with this code. */
  refused?: string;
  /** A kill cut it off once (its answer was lost). */
  cut?: boolean;
}

type Answer = { status: number; body: Record<string, any>; replayed: boolean } | null;

interface IntentRow {
  id: string;
  state: string;
  transaction_id: string;
  metadata: string;
}
interface PaymentRow {
  transaction_id: string;
  order_no: string;
  status: string;
  amount_minor: number;
  authorised_minor: number;
  captured_minor: number;
}
interface Books {
  intents: IntentRow[];
  payments: PaymentRow[];
  /** transaction_id → intent id (payment_intent_charges: one row per claimed confirm). */
  links: Map<string, string>;
  /** Open processor attempts' objects (a claim whose payment is being decided, a capture at the processor). */
  openAttempts: Set<string>;
}

const later = (ms: number) => new Promise((r) => setTimeout(r, ms));
const tagOf = (metadata: string) => (JSON.parse(metadata) as Record<string, string>).req ?? '';

async function readBooks(st: Store, account_id: string): Promise<Books> {
  const intents = await st.db
    .selectFrom('payment_intents')
    .select(['id', 'state', 'transaction_id', 'metadata'])
    .where('account_id', '=', account_id)
    .execute();
  const payments = (
    await st.db
      .selectFrom('payments')
      .select(['transaction_id', 'order_no', 'status', 'amount_minor', 'authorised_minor', 'captured_minor'])
      .where('account_id', '=', account_id)
      .execute()
  ).map((p) => ({
    ...p,
    status: String(p.status),
    amount_minor: Number(p.amount_minor),
    authorised_minor: Number(p.authorised_minor),
    captured_minor: Number(p.captured_minor),
  }));
  const links = await st.db.selectFrom('payment_intent_charges').select(['transaction_id', 'intent_id']).where('account_id', '=', account_id).execute();
  const open = await st.db
    .selectFrom('processor_attempts')
    .select('object_id')
    .where('account_id', '=', account_id)
    .where('status', 'in', ['sent', 'unknown', 'pending'])
    .execute();
  return { intents, payments, links: new Map(links.map((l) => [l.transaction_id, l.intent_id])), openAttempts: new Set(open.map((a) => String(a.object_id))) };
}

/** [] when no intent has two approved payments, every payment is a claim's and every claim has its payment (or its attempt), captured ≤ authorised. */
function booksProblems(b: Books, settled: boolean): string[] {
  const problems: string[] = [];
  const approved = new Map<string, string[]>();
  const byTid = new Map(b.payments.map((p) => [p.transaction_id, p]));
  for (const p of b.payments) {
    const intent = b.links.get(p.transaction_id);
    if (!intent) problems.push(`payment ${p.transaction_id} (${p.status}) without its intent claim`);
    else if (APPROVED.has(p.status)) approved.set(intent, [...(approved.get(intent) ?? []), p.transaction_id]);
    if (p.order_no !== `ch_${p.transaction_id}`) problems.push(`payment ${p.transaction_id}: order_no ${p.order_no}`);
    // The amount authorised is the payment's amount; authorised_minor is what is still held for a capture.
    if (p.captured_minor < 0 || p.authorised_minor < 0 || p.captured_minor + p.authorised_minor > p.amount_minor)
      problems.push(`payment ${p.transaction_id}: captured ${p.captured_minor} and still held ${p.authorised_minor} of ${p.amount_minor} authorised`);
    if (p.status === 'authorised' && p.authorised_minor !== p.amount_minor)
      problems.push(`payment ${p.transaction_id}: authorised, holding ${p.authorised_minor} of ${p.amount_minor}`);
    if (!APPROVED.has(p.status) && p.captured_minor > 0) problems.push(`payment ${p.transaction_id}: ${p.status} with ${p.captured_minor} captured`);
    if (settled && p.status === 'processing') problems.push(`payment ${p.transaction_id} still processing`);
  }
  for (const [intent, tids] of approved) if (tids.length > 1) problems.push(`intent ${intent} has ${tids.length} approved payments: ${tids.join(', ')}`);
  for (const [tid, intent] of b.links)
    if (!byTid.has(tid) && (settled || !b.openAttempts.has(tid)))
      problems.push(`intent ${intent}'s claim ${tid} has no payment${settled ? '' : ' nor attempt'}`);
  const intents = new Map(b.intents.map((i) => [i.id, i]));
  for (const [tid, intent] of b.links) if (!intents.has(intent)) problems.push(`claim ${tid} of an intent ${intent} that does not exist`);
  for (const i of b.intents)
    if (i.state === 'confirmed' && b.links.get(i.transaction_id) !== i.id)
      problems.push(`intent ${i.id} confirmed as ${i.transaction_id} without its claim row`);
  return problems;
}

export async function paymentIntentCrash(engine: Engine, o: IntentCrashOptions): Promise<void> {
  o.log(`\n# PaymentIntent confirm and capture during kill -9 on ${engine}: ${o.rounds} rounds of ${o.intents} new intents, and captures`);
  const fresh: FreshDatabase = await freshDatabase(engine, 'crashpi');
  let gw: GatewayProcess | null = null;
  let store: Store | null = null;
  try {
    const env = gatewayEnv(fresh, await freePort(), {
      TOLLGATE_WORKERS: engine === 'postgres' ? '2' : '1',
      TOLLGATE_API_RATE_LIMIT: '100000',
      // A payment or capture a kill left at the processor is due to the sweeper 2 s after it was sent.
      TOLLGATE_PROCESSOR_TIMEOUT_MS: '2000',
    });
    const m = createMerchant(env, 'crash-intents');
    const account = m.account_id;
    const operator = (args: string[]) => {
      const r = cli(env, args);
      if (r.status !== 0) throw new Error(`tollgate ${args.join(' ')}: ${(r.stderr || r.stdout).trim().slice(0, 300)}`);
      return r.stdout;
    };
    const key = (JSON.parse(operator(['apikey', 'create', '--account', account, '--json']).trim().split('\n').pop() as string) as { secret: string }).secret;
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

    const book = new Map<string, Req>();
    /** Intent id → what the clients asked of it (its tag's requests), for the checks. */
    const intentOfTag = new Map<string, string>();
    const captures = new Map<string, Req>();
    /** Tag → the intent's amount. */
    const amounts = new Map<string, number>();
    const totals = { answers: 0, lost: 0, resent: 0, released: 0, busy: 0, kills: 0, midFlight: 0, declined: 0, raced: 0, raceRefused: 0, capturePending: 0 };
    let n = 0;
    const t0 = Date.now();

    const add = (req: Req): Req => {
      book.set(`${req.kind}:${req.tag}:${req.idempotency_key}`, req);
      return req;
    };
    const newCreate = (): Req[] => {
      const tag = `I${n++}-${randomUUID().slice(0, 8)}`;
      const declines = Math.random() < 0.1;
      const manual = Math.random() < 0.4;
      const body = {
        amount: 100 + Math.floor(Math.random() * 9900),
        currency: 'usd',
        payment_method: declines ? 'pm_card_chargeDeclined' : Math.random() < 0.5 ? 'pm_card_visa' : 'pm_card_mastercard',
        ...(manual ? { capture_method: 'manual' } : {}),
        metadata: { req: tag },
      };
      amounts.set(tag, body.amount);
      if (Math.random() < 0.8) {
        return [add({ kind: 'create', tag, idempotency_key: randomUUID(), path: '/v1/payment_intents', body: { ...body, confirm: true }, declines })];
      }
      // Two-step: created, then (once acknowledged) confirmed by two racing confirms.
      return [add({ kind: 'open', tag, idempotency_key: randomUUID(), path: '/v1/payment_intents', body, declines })];
    };
    /** The confirms of an acknowledged open intent: two at once, under their own keys. */
    const confirmsOf = (open: Req): Req[] => {
      const id = open.ack?.id as string;
      totals.raced++;
      return [0, 1].map(() =>
        add({
          kind: 'confirm',
          tag: open.tag,
          idempotency_key: randomUUID(),
          path: `/v1/payment_intents/${id}/confirm`,
          body: {},
          declines: open.declines,
          intent: id,
        }),
      );
    };
    const newCapture = (): Req | null => {
      const ready = [...book.values()].filter(
        (r) => (r.kind === 'create' || r.kind === 'confirm') && r.ack?.status === 'requires_capture' && !captures.has(r.ack.id),
      );
      const r = ready[Math.floor(Math.random() * ready.length)];
      if (!r?.ack) return null;
      const amount = amounts.get(r.tag) ?? 0;
      const part = Math.random() < 0.4 && amount > 1 ? 1 + Math.floor(Math.random() * (amount - 1)) : undefined;
      const req = add({
        kind: 'capture',
        tag: r.tag,
        idempotency_key: randomUUID(),
        path: `/v1/payment_intents/${r.ack.id}/capture`,
        body: part === undefined ? {} : { amount_to_capture: part },
        declines: false,
        intent: r.ack.id,
      });
      captures.set(r.ack.id, req);
      return req;
    };

    /** Records an answer; false when the request is still without one (sent again later). */
    const record = (req: Req, r: Answer, where: string): boolean => {
      if (!r) return false;
      const code = String(r.body.error?.code ?? '');
      // A key still leased by a run the kill cut off, or an intent another request is changing: ask again later.
      if (
        r.status === 409 &&
        (code === 'idempotency_key_in_use' || code === 'lock_timeout' || String(r.body.error?.message).includes('still being processed'))
      ) {
        if (req.kind === 'confirm' && code === 'lock_timeout' && !req.cut) {
          // The racing confirm that lost: refused, which is an answer.
          totals.raceRefused++;
          req.refused = code;
          return true;
        }
        totals.busy++;
        return false;
      }
      if (r.status >= 500) {
        violations.push(`${where} ${req.kind} ${req.tag}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
        return false;
      }
      totals.answers++;
      const intent = (r.status === 402 ? r.body.error?.payment_intent : r.body) as Record<string, any> | undefined;
      if ((r.status === 200 || r.status === 402) && intent?.object === 'payment_intent') {
        const id = String(intent.id);
        if (intent.metadata?.req !== req.tag) violations.push(`${where} ${req.kind} ${req.tag}: answered ${id} tagged ${intent.metadata?.req}`);
        if (req.intent && req.intent !== id) violations.push(`${where} ${req.kind} ${req.tag}: at ${req.intent}, answered ${id}`);
        const prior = intentOfTag.get(req.tag);
        if (prior && prior !== id) violations.push(`${where} ${req.kind} ${req.tag}: answered ${id}, the tag's intent is ${prior} (made twice?)`);
        intentOfTag.set(req.tag, id);
        if (r.status === 402) {
          totals.declined++;
          // A kill while the processor had an approved card's payment: the sweeper asks again, the restarted sandbox forgot it (declined).
          if (!req.declines && !req.cut)
            violations.push(`${where} ${req.kind} ${req.tag}: an approved card declined without a kill: ${JSON.stringify(r.body.error).slice(0, 200)}`);
        } else if (req.kind === 'capture' && intent.status === 'requires_capture' && req.cut) {
          // The re-run of a capture the kill left at the processor: still pending there (capturePayment's
          // 'pending'), answered as the intent stands. The client asks again with a new key once it is settled.
          totals.capturePending++;
          req.refused = 'pending';
          const again = add({ ...req, idempotency_key: randomUUID(), refused: undefined });
          captures.set(id, again);
          return true;
        } else if (req.kind === 'capture' && intent.status !== 'succeeded') violations.push(`${where} capture ${req.tag}: answered ${intent.status}`);
        if (req.ack && req.ack.id !== id) violations.push(`${where} ${req.kind} ${req.tag}: answered ${id}, earlier ${req.ack.id}`);
        if (req.refused) violations.push(`${where} ${req.kind} ${req.tag}: answered ${id}, earlier refused ${req.refused}`);
        req.ack = {
          id,
          status: String(intent.status),
          charge: typeof intent.latest_charge === 'string' ? intent.latest_charge : null,
          amount_received: Number(intent.amount_received ?? 0),
        };
        return true;
      }
      // A confirm that lost the race to the other one, answered after the winner's payment: refused, unexpected state.
      if (req.kind === 'confirm' && r.status === 400 && code === 'payment_intent_unexpected_state') {
        totals.raceRefused++;
        req.refused = code;
        return true;
      }
      // A new capture while the one a kill cut off is still open at the processor (the restarted sandbox forgot it, so
      // the sweeper cannot settle it): refused, and rightly, since the first may still land. An answer, not a violation.
      if (
        req.kind === 'capture' &&
        r.status === 400 &&
        code === 'payment_intent_unexpected_state' &&
        String(r.body.error?.message).includes('pending at the processor')
      ) {
        totals.capturePending++;
        req.refused = 'pending';
        return true;
      }
      violations.push(`${where} ${req.kind} ${req.tag}: HTTP ${r.status} ${code} ${String(r.body.error?.message).slice(0, 200)}`);
      req.refused = code || String(r.status);
      return true;
    };

    type Task = { req: () => Req[]; resend: boolean };
    let carried: Task[] = [];
    for (let round = 1; round <= o.rounds; round++) {
      const next: Req[] = [];
      let answeredNow = 0;
      let inflight = 0;
      const stop = { now: false };
      const work: Array<() => Req[]> = [];
      for (let i = 0; i < o.intents; i++) {
        work.push(newCreate);
        if (Math.random() < 0.4) work.push(() => [newCapture()].filter((x): x is Req => x !== null));
      }
      const queue: Task[] = [...carried, ...work.sort(() => Math.random() - 0.5).map((f) => ({ req: f, resend: false }))];
      carried = [];
      let qi = 0;
      const send = async (req: Req, resend: boolean): Promise<void> => {
        inflight++;
        const r = await call('POST', req.path, req.body, req.idempotency_key);
        inflight--;
        if (resend) totals.resent++;
        if (record(req, r, resend ? 'resend' : 'first')) {
          answeredNow++;
          // An acknowledged open intent: its two confirms race (in this lane), unless the kill came.
          if (req.kind === 'open' && !stop.now && req.ack) {
            const confirms = confirmsOf(req);
            await Promise.all(confirms.map((c) => send(c, false)));
          }
        } else {
          if (!r) totals.lost++;
          req.cut = true;
          next.push(req);
        }
      };
      const lanes = Array.from({ length: LANES }, async () => {
        while (qi < queue.length && !stop.now) {
          const task = queue[qi++] as Task;
          for (const req of task.req()) await send(req, task.resend);
        }
      });
      const target = Math.max(1, Math.floor(queue.length * (0.2 + Math.random() * 0.5)));
      const deadline = Date.now() + 30_000;
      while (answeredNow < target && qi < queue.length && Date.now() < deadline) await later(2);
      const inflightAtKill = inflight;
      stop.now = true;
      await (gw as GatewayProcess).crash();
      totals.kills++;
      await Promise.all(lanes);
      const mid = inflightAtKill > 0 && answeredNow > 0;
      if (mid) totals.midFlight++;

      // The gateway is down: the books as the kill left them.
      const books = await readBooks(st, account);
      const problems = booksProblems(books, false);
      const ledger = await verifyLedger(st.db);
      o.check(
        `round ${round}: killed with ${inflightAtKill} requests in flight${mid ? ' (mid-flight)' : ''}; ${books.intents.length} intents, ${books.payments.length} payments, ${books.links.size} claims (${books.openAttempts.size} at the processor); no intent with two approved payments, no payment without its claim, captured ≤ authorised; ledger verifies (${ledger.postings} postings)`,
        problems.length === 0 && ledger.ok,
        [...problems, ...ledger.problems.slice(0, 3)].slice(0, 5).join('; '),
      );
      // Their keys' leases (60 s) made due: the resends run the handler again under the same key.
      const released = await st.transaction((tx) =>
        tx.updateTable('idempotency_keys').set({ locked_until: 0 }).where('status', '=', 'started').returning('id').execute(),
      );
      totals.released += released.length;
      o.log(
        `  round ${round}: ${answeredNow} answers, ${next.length} cut off, ${queue.length - qi} not sent yet; ${released.length} Idempotency-Keys released`,
      );
      carried = [...next.map((r) => ({ req: () => [r], resend: true })), ...queue.slice(qi)];
      gw = await startGateway(env);
    }

    // Recovery: every request without an answer is resent (same key and body) until answered;
    // open intents acknowledged only now get their confirms.
    for (let attempt = 0; attempt < 20; attempt++) {
      const confirmed = new Set([...book.values()].filter((r) => r.kind === 'confirm').map((r) => r.tag));
      const pending = [
        ...[...book.values()].filter((r) => !r.ack && !r.refused),
        ...[...book.values()].filter((r) => r.kind === 'open' && r.ack && !confirmed.has(r.tag)).flatMap(confirmsOf),
      ];
      if (pending.length === 0) break;
      if (attempt > 0) await later(1_000); // a key still leased, or a confirm at the processor: the sweeper settles it
      for (let i = 0; i < pending.length; i += LANES)
        await Promise.all(
          pending.slice(i, i + LANES).map(async (req) => {
            const r = await call('POST', req.path, req.body, req.idempotency_key);
            totals.resent++;
            record(req, r, 'recovery');
          }),
        );
    }
    // A capture still without an answer is fine only while a capture of its intent is open at the processor (a kill cut it
    // off there, and the restarted sandbox forgot it): the gateway rightly holds the next one until that one is settled.
    const atProcessor = await readBooks(st, account);
    const stuck = (r: Req) => {
      if (r.kind !== 'capture' || !r.intent) return false;
      const row = atProcessor.intents.find((i) => i.id === r.intent);
      return row?.transaction_id !== undefined && atProcessor.openAttempts.has(row.transaction_id);
    };
    const unanswered = [...book.values()].filter((r) => !r.ack && !r.refused && !stuck(r)).map((r) => `${r.kind} ${r.tag}`);
    o.check(`every request sent was answered after the resends (${book.size})`, unanswered.length === 0, unanswered.slice(0, 5).join(', '));

    // What a kill left at the processor is settled by the sweeper of the restarted gateway.
    let books = await readBooks(st, account);
    const settleBy = Date.now() + 60_000;
    while ((books.openAttempts.size > 0 || books.payments.some((p) => p.status === 'processing')) && Date.now() < settleBy) {
      await later(1_000);
      books = await readBooks(st, account);
    }
    o.check(
      'every payment and attempt a kill left at the processor is settled by the sweeper',
      books.openAttempts.size === 0 && !books.payments.some((p) => p.status === 'processing'),
      `${books.openAttempts.size} attempts open, ${books.payments.filter((p) => p.status === 'processing').length} payments processing after 60 s`,
    );

    // Each acknowledged intent as the API shows it now, against its payment.
    const byTid = new Map(books.payments.map((p) => [p.transaction_id, p]));
    const intentRows = new Map(books.intents.map((i) => [i.id, i]));
    const ids = [...new Set(intentOfTag.values())];
    const now = new Map<string, Record<string, any>>();
    for (let i = 0; i < ids.length; i += LANES)
      await Promise.all(
        ids.slice(i, i + LANES).map(async (id) => {
          const r = await call('GET', `/v1/payment_intents/${id}`);
          if (r?.status === 200) now.set(id, r.body);
          else violations.push(`GET ${id}: ${r ? `HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}` : 'no answer'}`);
        }),
      );
    const inconsistent: string[] = [];
    for (const [id, pi] of now) {
      const row = intentRows.get(id);
      const p = row?.transaction_id ? byTid.get(row.transaction_id) : undefined;
      const want: Record<string, (p: PaymentRow | undefined) => boolean> = {
        succeeded: (x) => x !== undefined && ['captured', 'partially_refunded', 'refunded'].includes(x.status) && x.captured_minor > 0,
        requires_capture: (x) => x?.status === 'authorised' && x.captured_minor === 0,
        requires_payment_method: (x) => x === undefined || x.status === 'declined',
        requires_confirmation: (x) => x === undefined,
      };
      const ok = want[String(pi.status)];
      if (!ok?.(p)) inconsistent.push(`${id} ${pi.status} with payment ${p ? `${p.transaction_id} ${p.status} captured ${p.captured_minor}` : 'none'}`);
      if (p && pi.latest_charge !== `ch_${p.transaction_id}`) inconsistent.push(`${id}: latest_charge ${pi.latest_charge}, claim ${p.transaction_id}`);
      if (p && Number(pi.amount_received) !== p.captured_minor) inconsistent.push(`${id}: amount_received ${pi.amount_received}, captured ${p.captured_minor}`);
    }
    // What was answered stays true: succeeded stays succeeded, requires_capture is captured only by a capture sent.
    for (const r of book.values()) {
      if (!r.ack || r.kind === 'open') continue;
      const pi = now.get(r.ack.id);
      if (!pi) continue;
      const captureSent = captures.has(r.ack.id);
      if (r.ack.status === 'succeeded' && pi.status !== 'succeeded') inconsistent.push(`${r.kind} ${r.tag}: answered succeeded, now ${pi.status}`);
      if (r.ack.status === 'requires_capture' && !(pi.status === 'requires_capture' || (captureSent && pi.status === 'succeeded')))
        inconsistent.push(`${r.kind} ${r.tag}: answered requires_capture, now ${pi.status}${captureSent ? '' : ' (no capture sent)'}`);
      if (r.kind === 'capture') {
        const want = r.body.amount_to_capture;
        if (pi.status !== 'succeeded' || (want !== undefined && Number(pi.amount_received) !== want))
          inconsistent.push(`capture ${r.tag} of ${want ?? 'all'} acknowledged: now ${pi.status}, received ${pi.amount_received}`);
      }
      // (A charge answered while at the processor may be settled declined after a kill, and the intent confirmed again.)
      if (r.ack.charge && (r.ack.status === 'succeeded' || r.ack.status === 'requires_capture') && pi.latest_charge !== r.ack.charge)
        inconsistent.push(`${r.kind} ${r.tag}: answered charge ${r.ack.charge}, now ${pi.latest_charge}`);
    }
    o.check(
      `every acknowledged intent's status agrees with its payment and with what was answered (${now.size} intents)`,
      inconsistent.length === 0,
      inconsistent.slice(0, 5).join('; '),
    );

    // A replay of every acknowledged create's key answers the same intent.
    const acked = [...book.values()].filter((r) => (r.kind === 'create' || r.kind === 'open') && r.ack);
    const badReplays: string[] = [];
    for (let i = 0; i < acked.length; i += LANES)
      await Promise.all(
        acked.slice(i, i + LANES).map(async (req) => {
          const r = await call('POST', req.path, req.body, req.idempotency_key);
          const id = r?.status === 402 ? r.body.error?.payment_intent?.id : r?.body.id;
          if (!r || id !== req.ack?.id || !r.replayed)
            badReplays.push(
              `${req.tag}: ${r ? `HTTP ${r.status} ${id ?? r.body.error?.code} replayed ${r.replayed}` : 'no answer'}, acknowledged ${req.ack?.id}`,
            );
        }),
      );
    o.check(
      `a replay of each acknowledged create's Idempotency-Key answers its intent (${acked.length})`,
      badReplays.length === 0,
      badReplays.slice(0, 3).join('; '),
    );
    await (gw as GatewayProcess).stop();
    gw = null;

    books = await readBooks(st, account);
    const problems = booksProblems(books, true);
    const made = new Map<string, string[]>();
    for (const i of books.intents) made.set(tagOf(i.metadata), [...(made.get(tagOf(i.metadata)) ?? []), i.id]);
    const tags = new Set([...book.values()].map((r) => r.tag));
    const twice = [...made.entries()].filter(([, xs]) => xs.length > 1).map(([tag, xs]) => `${tag}: ${xs.join(', ')}`);
    const strangers = [...made.keys()].filter((tag) => !tags.has(tag));
    const wrong = [...intentOfTag.entries()]
      .filter(([tag, id]) => (made.get(tag) ?? []).join() !== id)
      .map(([tag, id]) => `${tag}: ${id} stored as [${made.get(tag) ?? ''}]`);
    o.check(
      `every acknowledged intent exists exactly once with its id, none the clients never asked for (${intentOfTag.size})`,
      wrong.length + twice.length + strangers.length === 0,
      [...wrong, ...twice, ...strangers].slice(0, 5).join('; '),
    );
    const claimed = books.intents.filter((i) => i.transaction_id !== '').length;
    o.check(
      `payments = claimed confirms (${books.payments.length} payments, ${books.links.size} claims on ${claimed} confirmed intents); no intent with two approved payments; captured ≤ authorised`,
      problems.length === 0 && books.payments.length === books.links.size,
      problems.slice(0, 5).join('; '),
    );
    o.check('no 5xx and no contradicting answer', violations.length === 0, violations.slice(0, 5).join('; '));
    const verified = await verifyLedger(st.db);
    o.check(`the ledger verifies (${verified.postings} postings)`, verified.ok, verified.problems.slice(0, 3).join('; '));
    const r = cli(env, ['ledger', 'verify']);
    o.check('tollgate ledger verify', r.status === 0, (r.stdout + r.stderr).trim().split('\n').slice(-3).join(' | '));
    o.check(`at least one kill landed mid-flight (${totals.midFlight} of ${totals.kills})`, totals.midFlight > 0);
    const capturedAcks = [...captures.values()].filter((c) => c.ack).length;
    o.log(
      `  intent totals: ${books.intents.length} intents, ${books.payments.length} payments (${books.payments.filter((p) => APPROVED.has(p.status)).length} approved, ${totals.declined} declines answered), ${captures.size} captures (${capturedAcks} acknowledged, ${totals.capturePending} answered pending after a kill and sent again), ${totals.raced} confirm races (${totals.raceRefused} confirms refused); ${totals.answers} answers, ${totals.lost} cut off and ${totals.resent} resent (${totals.released} keys released, ${totals.busy} found busy); ${totals.kills} kills (${totals.midFlight} mid-flight); ${Math.round((Date.now() - t0) / 1000)} s`,
    );
  } finally {
    if (gw) await gw.crash();
    if (store) await store.close();
    await fresh.drop();
  }
}
