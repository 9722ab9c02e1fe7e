// The acquiring interface's dispute routes' request and answer schemas (docs/contract.md §22;
// issue 34 item 4): `/v1/retrievalDispute`, `/v1/disputeEvidence`, `/v1/acceptDispute`. One
// schema per endpoint validates the request and documents both (docs/style.md §2).
import { type TOptional, type TString, Type } from 'typebox';
import { IdList } from '../payments/query.js';
import { NextCursor, oneOf, ReturnMessage, ReturnStatus, Signature, SignedIdentity, text } from '../web/route-schema.js';
import { EVIDENCE_MAX_BYTES } from './service.js';

/** The evidence text fields a merchant may give (the platform family's names), each at most 20,000 characters. */
export const EVIDENCE_TEXT_FIELDS = [
  'uncategorized_text',
  'product_description',
  'customer_communication',
  'customer_name',
  'customer_email_address',
  'customer_purchase_ip',
  'billing_address',
  'shipping_address',
  'shipping_carrier',
  'shipping_date',
  'shipping_tracking_number',
  'service_date',
  'access_activity_log',
  'cancellation_policy_disclosure',
  'cancellation_rebuttal',
  'refund_policy_disclosure',
  'refund_refusal_explanation',
  'duplicate_charge_explanation',
  'duplicate_charge_id',
] as const;

/** What a file may stand for (`files[].field`). */
export const EVIDENCE_FILE_FIELDS = [
  'receipt',
  'customer_communication',
  'customer_signature',
  'shipping_documentation',
  'service_documentation',
  'cancellation_policy',
  'refund_policy',
  'duplicate_charge_documentation',
  'uncategorized_file',
] as const;

export const EVIDENCE_TEXT_MAX = 20_000;
export const EVIDENCE_FILES_MAX = 20;
/** Base64 of EVIDENCE_MAX_BYTES, with room for line breaks (the 5 MB are checked on the decoded bytes). */
const BASE64_MAX = Math.ceil(EVIDENCE_MAX_BYTES / 3) * 4 + 200_000;

const DisputeId = Type.String({ minLength: 1, maxLength: 64, description: 'the dispute’s `dispute_id` (`dp_…`)' });

export const RetrievalDisputeBody = Type.Object(
  {
    ...SignedIdentity,
    dispute_ids: Type.Optional(IdList),
    transaction_ids: Type.Optional(IdList),
    order_nos: Type.Optional(IdList),
    start_date: Type.Optional(Type.String({ pattern: '^\\d{14}$', description: 'YYYYMMDDhhmmss (UTC), over the dispute’s `created_at`' })),
    end_date: Type.Optional(Type.String({ pattern: '^\\d{14}$', description: 'YYYYMMDDhhmmss (UTC), inclusive' })),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: 'the `next_cursor` of the previous page' })),
  },
  { additionalProperties: false },
);

export interface RetrievalDisputeInput {
  dispute_ids?: string | string[];
  transaction_ids?: string | string[];
  order_nos?: string | string[];
  start_date?: string;
  end_date?: string;
  cursor?: string;
}

const textFields = Object.fromEntries(
  EVIDENCE_TEXT_FIELDS.map((f) => [
    f,
    Type.Optional(Type.String({ maxLength: EVIDENCE_TEXT_MAX, description: `evidence text, at most ${EVIDENCE_TEXT_MAX} characters` })),
  ]),
) as { [K in (typeof EVIDENCE_TEXT_FIELDS)[number]]: TOptional<TString> };

export const EvidenceFile = Type.Object(
  {
    field: oneOf(EVIDENCE_FILE_FIELDS, 'what the file shows'),
    file_name: Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'the file’s name, as shown with the evidence (its type is read from its content, never from the name)',
    }),
    content_base64: Type.String({
      minLength: 1,
      maxLength: BASE64_MAX,
      description: 'the file’s bytes in standard base64 (line breaks allowed): a PDF, PNG or JPEG',
    }),
  },
  { additionalProperties: false },
);

export const DisputeEvidenceBody = Type.Object(
  {
    ...SignedIdentity,
    dispute_id: DisputeId,
    ...textFields,
    files: Type.Optional(
      Type.Array(EvidenceFile, {
        maxItems: EVIDENCE_FILES_MAX,
        description: `at most ${EVIDENCE_FILES_MAX} files; with the text, at most 5 MB in all per dispute`,
      }),
    ),
    submit: Type.Optional(oneOf(['0', '1'], '`1`: send the evidence given so far (and this request’s) to the processor; the dispute is then `under_review`')),
  },
  { additionalProperties: false },
);

export type DisputeEvidenceInput = {
  dispute_id: string;
  submit?: '0' | '1';
  files?: Array<{ field: string; file_name: string; content_base64: string }>;
} & Partial<Record<(typeof EVIDENCE_TEXT_FIELDS)[number], string>>;

export const AcceptDisputeBody = Type.Object({ ...SignedIdentity, dispute_id: DisputeId }, { additionalProperties: false });

// ---- answers --------------------------------------------------------------------------

const STATUSES = ['warning_needs_response', 'needs_response', 'under_review', 'won', 'lost', 'accepted'] as const;

export const EvidenceEntry = Type.Object({
  field: text('the evidence field it answers'),
  type: oneOf(['text', 'file'], 'a text field or a file'),
  content_type: text('`text`, or the file’s type as read from its content: `application/pdf`, `image/png`, `image/jpeg`'),
  file_name: text('the file’s name as given; empty for text'),
  size: Type.Integer({ minimum: 0, description: 'bytes (UTF-8 for text)' }),
});

const recordFields = {
  dispute_id: text('the dispute’s id (`dp_…`)'),
  transaction_id: text('the disputed payment'),
  order_no: text('the disputed payment’s order number'),
  amount: text('the disputed amount'),
  currency: text('ISO 4217 code'),
  fee: text('the dispute fee charged to the account (it is not given back when the dispute is won)'),
  reason: text('the reason: `fraudulent`, `product_not_received`, `duplicate`, `general`, …'),
  kind: oneOf(['chargeback', 'inquiry'], '`chargeback` (the money has left the balance) or `inquiry` (a request for information: no money moved)'),
  status: oneOf(
    STATUSES,
    '`warning_needs_response` (an inquiry) or `needs_response`: answer by `evidence_due_by`; `under_review`: evidence submitted; `won`, `lost` or `accepted`: closed',
  ),
  evidence_due_by: text('ISO 8601 (UTC): evidence must be submitted before this, or the dispute is lost'),
  evidence_submitted_at: text('ISO 8601 (UTC) when evidence was submitted, or empty'),
  evidence: Type.Array(EvidenceEntry, { description: 'the evidence given, oldest first (its content is never answered)' }),
  response_error: text(
    'why the processor refused your last answer (the evidence, which is then back with you as `needs_response`, or the acceptance); empty when it took it or none was sent',
  ),
  created_at: text('ISO 8601 (UTC)'),
  closed_at: text('ISO 8601 (UTC) when it closed, or empty'),
};

const NotFoundOr = (values: readonly string[], description: string) => oneOf(['', ...values], `${description}; empty when not found`);

export const DisputeSearchItem = Type.Object({
  ...recordFields,
  kind: NotFoundOr(['chargeback', 'inquiry'], '`chargeback` or `inquiry`'),
  status: NotFoundOr(STATUSES, 'the dispute’s status'),
  query_result: oneOf(['0', '1'], '`1` found, `0` not found on this account (the item still names the requested id)'),
});

export const RetrievalDisputeAnswer = Type.Object({
  merchant_id: text('your merchant_id'),
  account_id: text('your account_id'),
  return_status: ReturnStatus,
  return_message: ReturnMessage,
  disputes: Type.Array(DisputeSearchItem, {
    description: 'the matching disputes (up to 100, oldest first), then one `query_result` `0` item per requested id that matches none',
  }),
  next_cursor: Type.Optional(NextCursor),
  encryption_data: Signature,
});

/** The answer of `/v1/disputeEvidence` and `/v1/acceptDispute`: the dispute as it is now. */
export const DisputeAnswer = Type.Object({
  merchant_id: text('your merchant_id'),
  account_id: text('your account_id'),
  return_status: ReturnStatus,
  return_message: ReturnMessage,
  ...recordFields,
  encryption_data: Signature,
});
