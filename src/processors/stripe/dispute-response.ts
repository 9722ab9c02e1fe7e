// A dispute's evidence as Stripe takes it (docs/contract.md §22): the pure mapping from our
// evidence pieces to `POST /v1/disputes/:id`'s `evidence` hash, checked against Stripe's limits
// before any call, so evidence that cannot fit is refused with the field that does not fit and
// nothing is half sent. Stripe's evidence fields and limits: its API reference ("Update a
// dispute") and spec3.json's `dispute_evidence_params` (maxLength per text field; the combined
// text at most 150,000 characters); files are uploaded first (`POST /v1/files`, purpose
// `dispute_evidence`: PDF, JPEG or PNG) and named by their `file_…` id, one file per field.
import type { DisputeEvidence } from '../types.js';

/** Stripe's text evidence fields and the most characters each takes (spec3.json maxLength). */
export const STRIPE_TEXT_MAX: Readonly<Record<string, number>> = {
  access_activity_log: 20_000,
  billing_address: 5_000,
  cancellation_policy_disclosure: 20_000,
  cancellation_rebuttal: 20_000,
  customer_email_address: 5_000,
  customer_name: 5_000,
  customer_purchase_ip: 5_000,
  duplicate_charge_explanation: 20_000,
  duplicate_charge_id: 5_000,
  product_description: 20_000,
  refund_policy_disclosure: 20_000,
  refund_refusal_explanation: 20_000,
  service_date: 5_000,
  shipping_address: 5_000,
  shipping_carrier: 5_000,
  shipping_date: 5_000,
  shipping_tracking_number: 5_000,
  uncategorized_text: 20_000,
};

/** Stripe's file evidence fields (each the id of one uploaded file). */
export const STRIPE_FILE_FIELDS: ReadonlySet<string> = new Set([
  'cancellation_policy',
  'customer_communication',
  'customer_signature',
  'duplicate_charge_documentation',
  'receipt',
  'refund_policy',
  'service_documentation',
  'shipping_documentation',
  'uncategorized_file',
]);

/** All text evidence of one dispute, at most (characters; Stripe: "the combined character count of all fields"). */
export const STRIPE_TEXT_TOTAL_MAX = 150_000;

export type EvidenceFile = Extract<DisputeEvidence, { bytes: Buffer }>;

/** The evidence as it will be sent: the text fields, and each file with the Stripe field its id goes in (in upload order). */
export interface StripeEvidencePlan {
  text: Record<string, string>;
  files: Array<{ stripe_field: string; file: EvidenceFile }>;
}

export type PlanResult = { kind: 'plan'; plan: StripeEvidencePlan } | { kind: 'declined'; reason: string };

/** Characters as Stripe counts them: code points, not UTF-16 units. */
const chars = (s: string) => [...s].length;
/** A field name as a reason shows it (ours come from a fixed list; bounded all the same). */
const named = (field: string) => field.replace(/[^a-z0-9_]/gi, '?').slice(0, 60);

/**
 * Our evidence as Stripe's fields, or why it cannot be sent. Texts of one field are joined by
 * a blank line; a text field Stripe has only as a file (customer_communication) goes into
 * uncategorized_text, labelled with its name; a second file of a field goes to
 * uncategorized_file when that is free.
 */
export function planStripeEvidence(evidence: readonly DisputeEvidence[]): PlanResult {
  const texts = textsByField(evidence);
  if ('reason' in texts) return { kind: 'declined', reason: texts.reason };
  const files = filesByField(evidence);
  if ('reason' in files) return { kind: 'declined', reason: files.reason };
  return { kind: 'plan', plan: { text: texts.text, files: files.files } };
}

function textsByField(evidence: readonly DisputeEvidence[]): { text: Record<string, string> } | { reason: string } {
  const parts = new Map<string, string[]>();
  for (const e of evidence) {
    if (!('text' in e) || e.text.trim() === '') continue;
    const direct = Object.hasOwn(STRIPE_TEXT_MAX, e.field);
    if (!direct && !STRIPE_FILE_FIELDS.has(e.field)) return { reason: `Stripe has no evidence field for ${named(e.field)}` };
    const field = direct ? e.field : 'uncategorized_text';
    const part = direct ? e.text : `${e.field}:\n${e.text}`;
    parts.set(field, [...(parts.get(field) ?? []), part]);
  }
  const text: Record<string, string> = {};
  let total = 0;
  for (const [field, list] of parts) {
    const joined = list.join('\n\n');
    const n = chars(joined);
    const max = STRIPE_TEXT_MAX[field] ?? 0;
    if (n > max) return { reason: `evidence text for ${field} is ${n} characters; Stripe takes at most ${max}` };
    text[field] = joined;
    total += n;
  }
  if (total > STRIPE_TEXT_TOTAL_MAX) return { reason: `evidence text is ${total} characters in all; Stripe takes at most ${STRIPE_TEXT_TOTAL_MAX}` };
  return { text };
}

function filesByField(evidence: readonly DisputeEvidence[]): { files: StripeEvidencePlan['files'] } | { reason: string } {
  const taken = new Set<string>();
  const placed: Array<{ stripe_field: string | undefined; file: EvidenceFile }> = [];
  // First each field's own first file (an explicit uncategorized_file included), then the rest.
  for (const e of evidence) {
    if (!('bytes' in e)) continue;
    if (!STRIPE_FILE_FIELDS.has(e.field)) return { reason: `Stripe has no file evidence field for ${named(e.field)}` };
    const free = !taken.has(e.field);
    if (free) taken.add(e.field);
    placed.push({ stripe_field: free ? e.field : undefined, file: e });
  }
  const files: StripeEvidencePlan['files'] = [];
  for (const p of placed) {
    if (p.stripe_field !== undefined) {
      files.push({ stripe_field: p.stripe_field, file: p.file });
      continue;
    }
    if (taken.has('uncategorized_file'))
      return { reason: `Stripe takes one file per evidence field: a second ${p.file.field} file does not fit (uncategorized_file is taken)` };
    taken.add('uncategorized_file');
    files.push({ stripe_field: 'uncategorized_file', file: p.file });
  }
  return { files };
}

/** Stripe's `evidence` hash: the texts and each uploaded file's id (`file_ids[i]` for `plan.files[i]`). */
export function stripeEvidenceParams(plan: StripeEvidencePlan, file_ids: readonly string[]): Record<string, string> {
  const evidence: Record<string, string> = { ...plan.text };
  plan.files.forEach((f, i) => {
    const id = file_ids[i];
    if (id !== undefined) evidence[f.stripe_field] = id;
  });
  return evidence;
}
