// Processor webhooks (docs/contract.md §20): `POST /hooks/<connector>/<processor_id>` takes a
// processor's own notifications. The connector reads and verifies the body as it arrived
// (its signature is over the raw bytes) and names the attempts whose outcome it reports;
// each outcome is settled by the function the sweeper uses, so a duplicate or a late one
// changes nothing twice. Every notification is kept (`processor_notifications`); one that
// names no attempt Tollgate knows is acknowledged, kept as `unmatched`, logged once and
// counted in `processor status`. Disputes it reports go to dispute-hooks.ts. A bad signature is
// refused and changes nothing.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProcessorConfigRow } from '../db/tables/processors.js';
import type { ProcessorNotification } from '../processors/types.js';
import type { Deps } from '../web/context.js';
import { takeDisputeNotice } from './dispute-hooks.js';
import { keepNotification } from './kept.js';
import { settleNotified } from './sweeper.js';

/** The most a webhook body may be (a processor batches notifications: Adyen sends up to a few hundred). */
const HOOK_BODY_LIMIT = 1_048_576;

export async function registerProcessorHooks(app: FastifyInstance, deps: Deps): Promise<void> {
  await app.register(async (scope) => {
    // The body as it arrived: the connector checks its signature over these bytes.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: HOOK_BODY_LIMIT }, (_request, body, done) => done(null, body));
    scope.post('/hooks/:connector/:processor_id', { schema: { hide: true } }, (request, reply) => takeWebhook(deps, request, reply));
  });
}

async function takeWebhook(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const { connector, processor_id } = request.params as { connector: string; processor_id: string };
  const found = deps.processors.byProcessorId(processor_id);
  if (!found || found.row.connector !== connector) return reply.code(404).type('text/plain').send('no such processor');
  const parse = found.processor.parseWebhook;
  if (!parse) return reply.code(404).type('text/plain').send(`the ${connector} connector sends no webhooks`);
  const headers: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(request.headers)) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(',') : v;
  const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const parsed = parse.call(found.processor, { headers, raw });
  if (parsed.kind === 'refused') {
    request.log.warn({ processor_id, status: parsed.status }, `processor webhook refused: ${parsed.message}`);
    return reply.code(parsed.status).type('text/plain').send(parsed.message);
  }
  for (const n of parsed.notifications) await takeNotification(deps, request, found.row, n);
  // Disputes it reports (src/attempts/dispute-hooks.ts): opened or moved, or kept aside; accepted all the same.
  for (const d of parsed.disputes ?? []) await takeDisputeNotice(deps, request.log, found.row, d);
  return reply.code(parsed.reply.status).type(parsed.reply.content_type).send(parsed.reply.body);
}

/** One notification: settled into its attempt (if it names one of this processor's account), then kept once (the delivery that moved it on record). */
async function takeNotification(deps: Deps, request: FastifyRequest, row: ProcessorConfigRow, n: ProcessorNotification): Promise<void> {
  const db = deps.store.db;
  const seen = await db
    .selectFrom('processor_notifications')
    .select('result')
    .where('processor_id', '=', row.processor_id)
    .where('notification_id', '=', n.id)
    .executeTakeFirst();
  if (seen) return;
  const attempt = await findAttempt(deps, row, n);
  let result: 'settled' | 'stale' | 'open' | 'unmatched' = 'unmatched';
  if (attempt) result = await settleNotified(deps, attempt, n.outcome as never, deps.now());
  else
    request.log.warn(
      { processor_id: row.processor_id, notification_id: n.id, operation: n.operation },
      'processor notification names no attempt Tollgate knows: kept as unmatched',
    );
  await keepNotification(deps, {
    processor_id: row.processor_id,
    notification_id: n.id.slice(0, 200),
    operation: n.operation,
    attempt_id: attempt?.attempt_id ?? n.attempt_id?.slice(0, 100) ?? '',
    reference: (n.reference ?? '').slice(0, 200),
    outcome: n.outcome.kind,
    result,
    received_at: deps.now(),
  });
}

/** The attempt a notification reports on: by our attempt id, else the latest of its operation on the object it names; only of the processor's account. */
async function findAttempt(deps: Deps, row: ProcessorConfigRow, n: ProcessorNotification) {
  const q = deps.store.db.selectFrom('processor_attempts').selectAll().where('account_id', '=', row.account_id).where('operation', '=', n.operation);
  if (n.attempt_id) return q.where('attempt_id', '=', n.attempt_id).executeTakeFirst();
  if (n.object_id) return q.where('object_id', '=', n.object_id).orderBy('created_at', 'desc').executeTakeFirst();
  return undefined;
}
