// Idempotency-Key on every POST (docs/contract.md §4; field-facts "Idempotency"):
// - the first answer (status, media type, body) is stored before it is sent and replayed
//   for 24 h, marked `Idempotent-Replayed: true`;
// - the same key with another body (or path) gets HTTP 409 `0409:Conflict`;
// - of concurrent requests with one key, one runs; the others wait for its answer (a
//   bounded wait) and then replay it, or get 409 when it takes too long;
// - requests refused before any work (signature, schema) store nothing, and so do answers
//   other than 2xx (domain refusals write nothing either), so a corrected retry works;
// - keys are scoped per account: merchant_id + account_id of the authenticated caller.
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { newId } from '../crypto/ids.js';
import { Keyring } from '../crypto/keyring.js';
import { storageFault } from '../db/faults.js';
import type { Deps } from '../web/context.js';
import { ApiError } from '../web/errors.js';
import type { IdempotencyKeyRow } from './tables.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
/** How long a duplicate waits for the first request's answer (real time). */
export const IDEMPOTENCY_WAIT_MS = 5_000;
const POLL_MS = 15;
/** After this a `started` key whose request never answered (a crash) may be run again. */
export const IDEMPOTENCY_LEASE_MS = 60_000;
/** Printable ASCII, 1 to 255 characters (Stripe's limit). */
const KEY = /^[\x21-\x7E]{1,255}$/;

declare module 'fastify' {
  interface FastifyRequest {
    /** `rerun`: this request took over a key whose first request never answered (a crash, or a lease that lapsed). */
    idempotency?: { key: string; hash: string; id?: string; rerun?: boolean };
    /** Set by the error handler when the storage failed: whether the work committed is unknown. */
    storageFaulted?: boolean;
  }
}

/** The conflict of a key whose first request is still running (the generic interface answers it 409, another body 400). */
export const STILL_RUNNING = 'a request with this Idempotency-Key is still being processed; retry later';

type Claim = { kind: 'owner'; id: string; rerun: boolean } | { kind: 'replay'; row: IdempotencyKeyRow } | { kind: 'conflict'; detail: string };

/** Keys belong to the authenticated account; unauthenticated requests do no work to repeat. */
function scopeOf(request: FastifyRequest): string | null {
  const acct = request.account?.account;
  return acct ? `${acct.merchant_id}:${acct.account_id}` : null;
}

async function claim(deps: Deps, scope: string, key: string, hash: string): Promise<Claim> {
  const { store } = deps;
  const deadline = Date.now() + IDEMPOTENCY_WAIT_MS;
  for (let attempt = 0; attempt < 10_000; attempt++) {
    const now = deps.now();
    const id = newId('idempotency_record', now);
    // A claim cut off by a storage fault may still have committed (the connection lost at
    // COMMIT): then the key would stay `started` for the whole lease although nothing ran.
    // No work was done under it, so the key is let go as soon as the storage takes it.
    const inserted = await settledOnFault(deps, { kind: 'release', id }, () =>
      store.transaction(async (tx) => {
        const r = await tx
          .insertInto('idempotency_keys')
          .values({
            id,
            scope,
            idem_key: key,
            request_hash: hash,
            status: 'started',
            response_status: 0,
            response_type: '',
            response_body: '',
            locked_until: now + IDEMPOTENCY_LEASE_MS,
            created_at: now,
            expires_at: now + IDEMPOTENCY_TTL_MS,
          })
          .onConflict((oc) => oc.columns(['scope', 'idem_key']).doNothing())
          .executeTakeFirst();
        return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
      }),
    );
    if (inserted) return { kind: 'owner', id, rerun: false };
    const row = await store.db.selectFrom('idempotency_keys').selectAll().where('scope', '=', scope).where('idem_key', '=', key).executeTakeFirst();
    if (!row) continue; // its request failed and let the key go: try to take it
    if (Number(row.expires_at) <= now) {
      await store.transaction((tx) => tx.deleteFrom('idempotency_keys').where('id', '=', row.id).execute());
      continue;
    }
    if (row.request_hash !== hash) return { kind: 'conflict', detail: 'this Idempotency-Key was used with another request; use a new key for a new request' };
    if (row.status === 'done') return { kind: 'replay', row };
    if (Number(row.locked_until) <= now) {
      // Its first request never answered (the process died): run it again, once.
      // Cut off, the take-over may have renewed the lease without anyone running: end it.
      const taken = await settledOnFault(deps, { kind: 'expire', id: row.id }, () =>
        store.transaction(async (tx) => {
          const r = await tx
            .updateTable('idempotency_keys')
            .set({ locked_until: now + IDEMPOTENCY_LEASE_MS })
            .where('id', '=', row.id)
            .where('status', '=', 'started')
            .where('locked_until', '=', row.locked_until)
            .executeTakeFirst();
          return Number(r.numUpdatedRows) === 1;
        }),
      );
      if (taken) return { kind: 'owner', id: row.id, rerun: true };
    }
    if (Date.now() >= deadline) return { kind: 'conflict', detail: STILL_RUNNING };
    await sleep(POLL_MS);
  }
  return { kind: 'conflict', detail: STILL_RUNNING };
}

/** Runs `write`; when the storage fails under it, files `outcome` for repair (harmless if the write never landed) and rethrows. */
async function settledOnFault<T>(deps: Deps, outcome: KeyOutcome, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    if (storageFault(e)) repairs.add(deps, outcome);
    throw e;
  }
}

/**
 * Stored answers are encrypted under the master keyring (issue 29): they can hold a card
 * token, a payout's beneficiary or a portal page. A body stored before that is replayed as is.
 */
export function openBody(keyring: Keyring, stored: string): string {
  return Keyring.isSealed(stored) ? keyring.decrypt(stored) : stored;
}

function replay(deps: Deps, reply: FastifyReply, row: IdempotencyKeyRow): FastifyReply {
  return reply.code(Number(row.response_status)).type(row.response_type).header('idempotent-replayed', 'true').send(openBody(deps.keyring, row.response_body));
}

export function registerIdempotency(app: FastifyInstance, deps: Deps): void {
  // Application hooks run before route hooks: the body is still as the client sent it.
  app.addHook('preValidation', async (request) => {
    if (request.method !== 'POST') return;
    const given = request.headers['idempotency-key'];
    if (given === undefined) return;
    const key = Array.isArray(given) ? given[0] : given;
    if (!key || !KEY.test(key)) throw new ApiError('0400', 'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces', 'Idempotency-Key');
    // The path as sent, ids included: one key on /v1/transfers/A/reversals and then on
    // /v1/transfers/B/reversals is two requests (409), not a replay of A's answer.
    const path = request.url.split('?')[0] ?? request.url;
    // Keyed hash: bodies may hold card numbers (PCI DSS 3.5.1.1).
    const hash = deps.keyring.fingerprint(`POST ${path}\n${JSON.stringify(request.body ?? null)}`);
    request.idempotency = { key, hash };
  });

  // After the signature and the schema: refused requests never reach here and store nothing.
  app.addHook('preHandler', async (request, reply) => {
    const idem = request.idempotency;
    const scope = scopeOf(request);
    if (!idem || !scope) return;
    const outcome = await claim(deps, scope, idem.key, idem.hash);
    if (outcome.kind === 'owner') {
      idem.id = outcome.id;
      idem.rerun = outcome.rerun;
      return;
    }
    if (outcome.kind === 'conflict') throw new ApiError('0409', outcome.detail, 'Idempotency-Key');
    if (request.routeOptions.config.page) {
      reply.header('idempotent-replayed', 'true'); // the handler answers again (see `page` in src/web/acquiring.ts)
      return;
    }
    return replay(deps, reply, outcome.row);
  });

  // The answer is stored before it is sent, so a retry after a lost answer gets the same one.
  app.addHook('onSend', async (request, reply, payload) => {
    const idem = request.idempotency;
    const id = idem?.id;
    if (!idem || !id) return payload;
    idem.id = undefined; // once
    // A generic card decline (402) stored a declined payment: it is an answer, replayed like one.
    const done = (reply.statusCode >= 200 && reply.statusCode < 300) || (reply.statusCode === 402 && request.routeOptions.config.answer === 'generic');
    const keep = done && typeof payload === 'string';
    // After a storage fault the work may have committed (a connection lost at COMMIT): the
    // key is not released but its lease ended, so a retry takes over the same key (row id)
    // and finds what was made (refund, transfer, payment id) instead of doing it again.
    const outcome: KeyOutcome = keep
      ? { kind: 'store', id, status: reply.statusCode, type: String(reply.getHeader('content-type') ?? 'application/json'), body: payload as string }
      : request.storageFaulted
        ? { kind: 'expire', id }
        : { kind: 'release', id };
    try {
      await settleKey(deps, outcome);
    } catch (e) {
      // The storage failed between the work and its record (issue 17): the answer still goes
      // out, and the key's outcome is written as soon as the storage takes it again, so a
      // retry replays the answer (or runs the refused request) instead of waiting out the lease.
      if (!storageFault(e)) throw e;
      repairs.add(deps, outcome.kind === 'release' ? { kind: 'expire', id } : outcome);
    }
    return payload;
  });
}

type KeyOutcome = { kind: 'store'; id: string; status: number; type: string; body: string } | { kind: 'release' | 'expire'; id: string };

/**
 * Records what became of a claimed key: its answer (replayed for 24 h); nothing was done
 * (`release`: the key is free again); or unknown (`expire`: the lease ends now, the key
 * stays, and the next request with it re-runs under the same id).
 */
async function settleKey(deps: Deps, o: KeyOutcome): Promise<void> {
  await deps.store.transaction(async (tx) => {
    if (o.kind === 'store') {
      await tx
        .updateTable('idempotency_keys')
        .set({ status: 'done', response_status: o.status, response_type: o.type, response_body: deps.keyring.encrypt(o.body), locked_until: 0 })
        .where('id', '=', o.id)
        .execute();
    } else if (o.kind === 'release') {
      await tx.deleteFrom('idempotency_keys').where('id', '=', o.id).where('status', '=', 'started').execute();
    } else {
      await tx.updateTable('idempotency_keys').set({ locked_until: 0 }).where('id', '=', o.id).where('status', '=', 'started').execute();
    }
  });
}

/**
 * Key outcomes the storage refused, kept per gateway (its Deps) in the process that holds
 * them, and written by `repairKeyOutcomes` every REPAIR_EVERY_MS until the storage takes
 * them: a process-local task of the scheduler in every process that serves HTTP
 * (src/cli/background.ts). Bounded: past MAX_REPAIRS the oldest are left to the 60 s lease,
 * as after a crash.
 */
export const REPAIR_EVERY_MS = 200;
const MAX_REPAIRS = 10_000;
const pendingRepairs = new WeakMap<Deps, Map<string, KeyOutcome>>();
const repairs = {
  add(deps: Deps, outcome: KeyOutcome): void {
    const pending = pendingRepairs.get(deps) ?? new Map<string, KeyOutcome>();
    pendingRepairs.set(deps, pending);
    if (pending.size >= MAX_REPAIRS) {
      const oldest = pending.keys().next().value;
      if (oldest !== undefined) pending.delete(oldest);
    }
    pending.set(outcome.id, outcome);
  },
};

/** Writes the key outcomes the storage refused, oldest first; stops at the first the storage still refuses (the next run tries again). */
export async function repairKeyOutcomes(deps: Deps): Promise<void> {
  const pending = pendingRepairs.get(deps);
  if (!pending) return;
  for (const [id, outcome] of pending) {
    try {
      await settleKey(deps, outcome);
      pending.delete(id);
    } catch {
      return; // still down: the next run tries again
    }
  }
}

/** Removes keys past their 24 h; bounded per run. */
export async function purgeExpiredKeys(deps: Pick<Deps, 'store'>, now_ms: number, limit = 1000): Promise<number> {
  const ids = await deps.store.db.selectFrom('idempotency_keys').select('id').where('expires_at', '<=', now_ms).limit(limit).execute();
  if (ids.length === 0) return 0;
  await deps.store.transaction((tx) =>
    tx
      .deleteFrom('idempotency_keys')
      .where(
        'id',
        'in',
        ids.map((r) => r.id),
      )
      .execute(),
  );
  return ids.length;
}

/** A stored answer: what `runOnce` replays for the same key. */
export interface OnceAnswer {
  status: number;
  type: string;
  body: string;
}

/**
 * The same guarantee for callers that are not an API POST with a header (the portal's
 * form tokens): `work` runs at most once per (scope, key); a second submission gets the
 * first one's answer (`replayed`), one with another body or path gets 409, and a failed
 * `work` lets the key go (or, after a storage fault, ends its lease) as the hooks do.
 */
export async function runOnce(
  deps: Deps,
  scope: string,
  key: string,
  what: string,
  work: () => Promise<OnceAnswer>,
): Promise<{ answer: OnceAnswer; replayed: boolean }> {
  if (!KEY.test(key)) throw new ApiError('0400', 'the form token must be 1 to 255 printable ASCII characters', 'form_token');
  const outcome = await claim(deps, scope, key, deps.keyring.fingerprint(what));
  if (outcome.kind === 'conflict') throw new ApiError('0409', outcome.detail, 'form_token');
  if (outcome.kind === 'replay') {
    const row = outcome.row;
    return { answer: { status: Number(row.response_status), type: row.response_type, body: openBody(deps.keyring, row.response_body) }, replayed: true };
  }
  let answer: OnceAnswer;
  try {
    answer = await work();
  } catch (e) {
    const failed: KeyOutcome = storageFault(e) ? { kind: 'expire', id: outcome.id } : { kind: 'release', id: outcome.id };
    await settleKey(deps, failed).catch(() => repairs.add(deps, { kind: 'expire', id: outcome.id }));
    throw e;
  }
  await settleKey(deps, { kind: 'store', id: outcome.id, ...answer }).catch((e) => {
    if (!storageFault(e)) throw e;
    repairs.add(deps, { kind: 'store', id: outcome.id, ...answer });
  });
  return { answer, replayed: false };
}
