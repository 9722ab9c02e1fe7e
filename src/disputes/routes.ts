// `POST /v1/retrievalDispute`, `/v1/disputeEvidence`, `/v1/acceptDispute` (docs/contract.md §22;
// issue 34 item 4): signed like every acquiring endpoint, any body format, signed JSON answers.
// Only parses, calls the dispute core (service.ts) and answers; the core's refusals become the
// interface's error answers naming the request's field (nothing stored).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DisputeRow } from '../db/tables/disputes.js';
import { acquiringHooks, sendSigned } from '../web/acquiring.js';
import type { Deps } from '../web/context.js';
import { ApiError } from '../web/errors.js';
import { IP_REFUSAL, withIpAllowList } from '../web/ip-allow.js';
import { answers, answersAreStrings, REQUEST_MEDIA_TYPES, SIGNED, SIGNED_REFUSALS } from '../web/route-schema.js';
import {
  AcceptDisputeBody,
  DisputeAnswer,
  DisputeEvidenceBody,
  type DisputeEvidenceInput,
  EVIDENCE_TEXT_FIELDS,
  RetrievalDisputeAnswer,
  RetrievalDisputeBody,
  type RetrievalDisputeInput,
} from './schema.js';
import { disputeOfAccount, recordOf, searchDisputes } from './search.js';
import { acceptDispute, DisputeRefused, type EvidenceItem, giveEvidence } from './service.js';

/**
 * The body limit of `/v1/disputeEvidence`: 5 MB of files in base64 (~6.7 MB) and the text
 * fields, in any body format. Every other route keeps the operator's limit (1 MiB by default).
 */
export const EVIDENCE_BODY_LIMIT = 8 * 1024 * 1024;

const NOT_FOUND = { 404: '`0404:Record not found`: no dispute of this account has this `dispute_id` (`error_field` `dispute_id`).' } as const;

const retrievalDisputeSchema = () => ({
  operationId: 'retrievalDispute',
  summary: 'Search disputes',
  description:
    'Select by `dispute_ids`, `transaction_ids` or `order_nos` (at most 100 ids together), or by `start_date` and `end_date` over the dispute’s creation time; at most 100 disputes per answer, oldest first, `next_cursor` when there are more. A requested id that matches no dispute of the account (another account’s too) is answered with `query_result` `0`. Only IP addresses registered for the account may call it.',
  tags: ['disputes'],
  security: SIGNED,
  consumes: REQUEST_MEDIA_TYPES,
  body: RetrievalDisputeBody,
  response: answers({
    media: 'json',
    ok: RetrievalDisputeAnswer,
    ok_description: 'The matching disputes, signed.',
    refusals: { ...SIGNED_REFUSALS, ...IP_REFUSAL },
  }),
});

const disputeEvidenceSchema = () => ({
  operationId: 'disputeEvidence',
  summary: 'Give evidence for a dispute, and submit it',
  description: `Adds evidence to a dispute that asks for a response (\`needs_response\` or \`warning_needs_response\`): text fields (${EVIDENCE_TEXT_FIELDS.map((f) => `\`${f}\``).join(', ')}) and files in \`files[]\` (\`field\`, \`file_name\`, \`content_base64\`), each file a PDF, PNG or JPEG as its content says (never its name); at most 5 MB of evidence in all per dispute. \`submit\` \`1\` submits it: the dispute is then \`under_review\` until it is decided (\`won\` or \`lost\`, notified as \`dispute.closed\`): by the sandbox on a test account; otherwise the evidence is sent within seconds to the processor that holds the payment (Adyen: PDF and JPEG files only, a PNG is refused here), whose notification decides; if the processor refuses it, the dispute is back to \`needs_response\` with its reason in \`response_error\`. A refused request stores nothing. The body may be up to 8 MiB on this endpoint.`,
  tags: ['disputes'],
  security: SIGNED,
  consumes: REQUEST_MEDIA_TYPES,
  body: DisputeEvidenceBody,
  response: answers({
    media: 'json',
    ok: DisputeAnswer,
    ok_description: 'The dispute as it is now, with its evidence listed, signed.',
    refusals: {
      ...SIGNED_REFUSALS,
      400: 'A field breaks its rule, `content_base64` is not base64, a file is not a PDF, PNG or JPEG by its content (`error_field` `files[i].content_base64`), or the evidence would pass 5 MB in all (`error_field` `files`). Nothing was stored.',
      ...NOT_FOUND,
      409: '`0409:Conflict`: the dispute takes no evidence any more (it is under review or closed; `error_field` `dispute_id`), or the `Idempotency-Key` was used with another request. Nothing was stored.',
      413: 'The body is larger than 8 MiB.',
    },
  }),
});

const acceptDisputeSchema = () => ({
  operationId: 'acceptDispute',
  summary: 'Accept a dispute',
  description:
    'Accepts a dispute that asks for a response: it closes as `accepted` (lost without defence; the amount and the fee stay with the cardholder’s side), notified as `dispute.closed`. Accepting an accepted dispute answers it again; one under review or decided is refused with 409.',
  tags: ['disputes'],
  security: SIGNED,
  consumes: REQUEST_MEDIA_TYPES,
  body: AcceptDisputeBody,
  response: answers({
    media: 'json',
    ok: DisputeAnswer,
    ok_description: 'The dispute as it is now, signed.',
    refusals: {
      ...SIGNED_REFUSALS,
      ...NOT_FOUND,
      409: '`0409:Conflict`: the dispute is under review or decided (`error_field` `dispute_id`), or the `Idempotency-Key` was used with another request.',
    },
  }),
});

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The evidence of a request, in the core's terms, with where each item came from (for the refusal's field). */
function evidenceItems(body: DisputeEvidenceInput): { items: EvidenceItem[]; origin: string[] } {
  const items: EvidenceItem[] = [];
  const origin: string[] = [];
  for (const field of EVIDENCE_TEXT_FIELDS) {
    const text = body[field];
    if (text === undefined || text === '') continue;
    items.push({ field, text });
    origin.push(field);
  }
  for (const [i, f] of (body.files ?? []).entries()) {
    const b64 = f.content_base64.replace(/\s+/g, '');
    if (b64.length === 0 || b64.length % 4 !== 0 || !BASE64.test(b64))
      throw new ApiError('0400', `files[${i}].content_base64 is not well-formed base64`, `files[${i}].content_base64`);
    items.push({ field: f.field, file_name: f.file_name, bytes: Buffer.from(b64, 'base64') });
    origin.push(`files[${i}].content_base64`);
  }
  return { items, origin };
}

/** The core's refusal as the acquiring answer: 404, 409 or 400, naming the request's field. */
function refusalOf(e: unknown, origin: readonly string[] = []): unknown {
  if (!(e instanceof DisputeRefused)) return e;
  if (e.outcome === 'not_found') return new ApiError('0404', e.message, 'dispute_id');
  if (e.outcome === 'invalid_state') return new ApiError('0409', e.message, 'dispute_id');
  const at = /^evidence\[(\d+)\]$/.exec(e.field);
  const field = at
    ? (origin[Number(at[1])] ?? 'files')
    : e.field === 'evidence'
      ? origin.some((o) => o.startsWith('files['))
        ? 'files'
        : (origin[0] ?? 'files')
      : e.field;
  return new ApiError('0400', e.message, field);
}

async function found(deps: Deps, request: FastifyRequest, dispute_id: string): Promise<DisputeRow> {
  const d = await disputeOfAccount(deps.store.db, request.account!.account.account_id, dispute_id);
  if (!d) throw new ApiError('0404', `no dispute ${dispute_id} on this account`, 'dispute_id');
  return d;
}

async function answerDispute(deps: Deps, request: FastifyRequest, reply: FastifyReply, d: DisputeRow) {
  const creds = request.account!;
  return sendSigned(request, reply, {
    merchant_id: creds.account.merchant_id,
    account_id: creds.account.account_id,
    return_status: '1',
    return_message: 'OK',
    ...(await recordOf(deps.store.db, d)),
  });
}

/** POST /v1/retrievalDispute */
async function retrievalDisputeRoute(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const creds = request.account!;
  const { disputes, next_cursor } = await searchDisputes(deps.store.db, creds.account.account_id, request.body as RetrievalDisputeInput);
  return sendSigned(request, reply, {
    merchant_id: creds.account.merchant_id,
    account_id: creds.account.account_id,
    return_status: '1',
    return_message: 'OK',
    disputes,
    ...(next_cursor ? { next_cursor } : {}),
  });
}

/** POST /v1/disputeEvidence */
async function disputeEvidenceRoute(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const body = request.body as DisputeEvidenceInput;
  const d = await found(deps, request, body.dispute_id);
  const { items, origin } = evidenceItems(body);
  const submit = body.submit === '1';
  if (items.length === 0 && !submit) throw new ApiError('0400', 'give at least one evidence text field or file, or submit 1', 'files');
  try {
    // Under its Idempotency-Key a re-run after a crash is recognised by the key's record, and answered.
    const r = await giveEvidence(deps, d, items, submit, deps.now(), request.idempotency?.id ?? '');
    return answerDispute(deps, request, reply, r.dispute);
  } catch (e) {
    throw refusalOf(e, origin);
  }
}

/** POST /v1/acceptDispute */
async function acceptDisputeRoute(deps: Deps, request: FastifyRequest, reply: FastifyReply) {
  const d = await found(deps, request, (request.body as { dispute_id: string }).dispute_id);
  // Accepting an accepted dispute answers it again (a retry is safe).
  if (d.status === 'accepted') return answerDispute(deps, request, reply, d);
  try {
    return answerDispute(deps, request, reply, await acceptDispute(deps, d, deps.now()));
  } catch (e) {
    throw refusalOf(e);
  }
}

export function registerDisputeRoutes(app: FastifyInstance, deps: Deps): void {
  app.post(
    '/v1/retrievalDispute',
    { schema: retrievalDisputeSchema(), config: { answer: 'json' }, ...answersAreStrings, ...withIpAllowList(acquiringHooks(deps, RetrievalDisputeBody)) },
    (request, reply) => retrievalDisputeRoute(deps, request, reply),
  );
  app.post(
    '/v1/disputeEvidence',
    {
      schema: disputeEvidenceSchema(),
      config: { answer: 'json' },
      bodyLimit: Math.max(EVIDENCE_BODY_LIMIT, deps.settings.body_limit_bytes),
      ...answersAreStrings,
      ...acquiringHooks(deps, DisputeEvidenceBody),
    },
    (request, reply) => disputeEvidenceRoute(deps, request, reply),
  );
  app.post(
    '/v1/acceptDispute',
    { schema: acceptDisputeSchema(), config: { answer: 'json' }, ...answersAreStrings, ...acquiringHooks(deps, AcceptDisputeBody) },
    (request, reply) => acceptDisputeRoute(deps, request, reply),
  );
}
