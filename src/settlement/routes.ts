// `POST /v1/retrievalSettlement` (docs/contract.md §23; issue 35 item 2): an account's settlement
// batches of a range of days with their lines, as signed JSON, or with the report as CSV text in
// the signed answer. Signed like every acquiring endpoint; only the account's registered IP
// addresses may read it back.
import { text as readText } from 'node:stream/consumers';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { acquiringHooks, sendSigned } from '../web/acquiring.js';
import type { Deps } from '../web/context.js';
import { invalid } from '../web/errors.js';
import { IP_REFUSAL, withIpAllowList } from '../web/ip-allow.js';
import { answers, answersAreStrings, REQUEST_MEDIA_TYPES, SIGNED, SIGNED_REFUSALS } from '../web/route-schema.js';
import { batchRecord, lineRecord, listBatches, REPORT_BATCHES_MAX, reportCsv, reportLines } from './report.js';
import { RetrievalSettlementAnswer, RetrievalSettlementBody, type RetrievalSettlementInput } from './schema.js';

/** Days one request may span at most. */
const MAX_DAYS = 100;

const schema = () => ({
  operationId: 'retrievalSettlement',
  summary: 'Settlement batches and their lines',
  description: `The account's daily settlement batches from \`start_date\` to \`end_date\` (UTC days, at most ${MAX_DAYS}), at most ${REPORT_BATCHES_MAX} batches, oldest first: each with gross, fee, net, its pending part and when it becomes available, and (format \`json\`) its lines: every balance movement of its day with gross, fee and net. Format \`csv\` answers the same lines as CSV text in \`csv\` (columns: docs/finance.md). Only IP addresses registered for the account may call it.`,
  tags: ['settlement'],
  security: SIGNED,
  consumes: REQUEST_MEDIA_TYPES,
  body: RetrievalSettlementBody,
  response: answers({ media: 'json', ok: RetrievalSettlementAnswer, ok_description: 'The batches, signed.', refusals: { ...SIGNED_REFUSALS, ...IP_REFUSAL } }),
});

/** YYYYMMDD as YYYY-MM-DD, checked to be a real day. */
function dayOf(field: string, v: string): string {
  const iso = `${v.slice(0, 4)}-${v.slice(4, 6)}-${v.slice(6, 8)}`;
  const t = Date.parse(`${iso}T00:00:00Z`);
  if (Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== iso) throw invalid(field, 'is not a real day shaped YYYYMMDD');
  return iso;
}

async function retrievalSettlement(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const body = request.body as RetrievalSettlementInput;
  const from = dayOf('start_date', body.start_date);
  const to = dayOf('end_date', body.end_date);
  if (to < from) throw invalid('end_date', 'is before start_date');
  if (Date.parse(to) - Date.parse(from) >= MAX_DAYS * 86_400_000) throw invalid('end_date', `is more than ${MAX_DAYS} days after start_date`);
  const creds = request.account!;
  const db = deps.store.db;
  const batches = await listBatches(db, { account_id: creds.account.account_id, from, to, currency: body.currency?.toUpperCase() });
  const format = body.format ?? 'json';
  const head = { merchant_id: creds.account.merchant_id, account_id: creds.account.account_id, return_status: '1', return_message: 'OK', format };
  if (format === 'csv') return sendSigned(request, reply, { ...head, batches: batches.map(batchRecord), csv: await readText(reportCsv(db, batches)) });
  const records = [];
  for (const b of batches) records.push({ ...batchRecord(b), items: (await reportLines(db, b)).map((l) => lineRecord(b, l)) });
  return sendSigned(request, reply, { ...head, batches: records });
}

export function registerSettlementRoutes(app: FastifyInstance, deps: Deps): void {
  app.post(
    '/v1/retrievalSettlement',
    { schema: schema(), config: { answer: 'json' }, ...answersAreStrings, ...withIpAllowList(acquiringHooks(deps, RetrievalSettlementBody)) },
    (request, reply) => retrievalSettlement(deps, request, reply),
  );
}
