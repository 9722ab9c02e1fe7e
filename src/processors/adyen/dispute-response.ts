// A merchant's answer to a dispute at Adyen (issue 34 item 3; docs/processors.md#adyen), over the
// Disputes API v30 (../shared/vendor/adyen/DisputeService-v30.json): `accept` is
// `/acceptDispute`; `defend` asks `/retrieveApplicableDefenseReasons`, sends the evidence with
// `/supplyDefenseDocument` (files as they are, a receipt as `TIDorInvoice` and anything else as
// `DefenseMaterial`; the text fields as one PDF of `DefenseMaterial`) and defends with
// `/defendDispute` under the reason those documents satisfy. Each call carries its own
// Idempotency-Key (the attempt id and the step), so a repeat of the whole answer sends
// nothing twice. Adyen's `disputeServiceResult.success: false` is a refusal with its
// `errorMessage`; a 4xx refuses too (asking again will not mend it); no answer, or a 5xx, is
// `unknown`.
import type { DisputeEvidence, DisputeResponseInput, DisputeResponseOutcome } from '../types.js';
import { textPdf } from './text-pdf.js';

/** One call to the Disputes API: its HTTP status and parsed body, or why there is none. */
export type DisputeReply = { kind: 'answer'; status: number; body: unknown } | { kind: 'failed'; reason: string };

export interface DisputeApi {
  merchant_account: string;
  /** POSTs `body` to the Disputes API's `path`, with Idempotency-Key `key`. */
  send(path: string, body: unknown, key: string): Promise<DisputeReply>;
  /** One line for the operator when our credentials are refused. */
  refused(status: number): void;
}

interface DefenseDocument {
  defenseDocumentTypeCode: string;
  contentType: string;
  content: string;
}

interface DefenseReason {
  defenseReasonCode: string;
  defenseDocumentTypes?: Array<{ defenseDocumentTypeCode: string; requirementLevel: string }>;
}

type Step = { kind: 'ok'; body: Record<string, unknown> } | Exclude<DisputeResponseOutcome, { kind: 'approved' }>;

/** Adyen's answer to one step: the body when it succeeded, else the refusal or `unknown`. */
async function step(api: DisputeApi, path: string, body: unknown, key: string): Promise<Step> {
  const reply = await api.send(path, body, key);
  if (reply.kind === 'failed') return { kind: 'unknown', reason: reply.reason };
  const b = (reply.body ?? {}) as Record<string, any>;
  if (reply.status === 401 || reply.status === 403) {
    api.refused(reply.status);
    return { kind: 'declined', reason: 'Adyen refused our credentials', credentials_refused: true };
  }
  if (reply.status >= 500) return { kind: 'unknown', reason: `Adyen answered ${reply.status} to ${path}` };
  const code = typeof b.errorCode === 'string' ? ` (errorCode ${b.errorCode.slice(0, 20)})` : '';
  if (reply.status !== 200) return { kind: 'declined', reason: `Adyen refused ${path.slice(1)}: ${reply.status}${code}` };
  const result = b.disputeServiceResult as { success?: unknown; errorMessage?: unknown } | undefined;
  if (result?.success !== true) {
    const why = typeof result?.errorMessage === 'string' ? result.errorMessage.slice(0, 200) : 'no reason given';
    return { kind: 'declined', reason: `Adyen refused ${path.slice(1)}: ${why}` };
  }
  return { kind: 'ok', body: b };
}

/** The evidence as Adyen's defence documents: files as given (a receipt is the invoice), the text as one PDF. */
export function defenseDocuments(evidence: readonly DisputeEvidence[]): DefenseDocument[] {
  const docs: DefenseDocument[] = [];
  const texts: Array<{ heading: string; text: string }> = [];
  for (const e of evidence) {
    if ('text' in e) texts.push({ heading: e.field.replaceAll('_', ' '), text: e.text });
    else
      docs.push({
        defenseDocumentTypeCode: e.field === 'receipt' ? 'TIDorInvoice' : 'DefenseMaterial',
        contentType: e.content_type,
        content: e.bytes.toString('base64'),
      });
  }
  if (texts.length > 0) docs.push({ defenseDocumentTypeCode: 'DefenseMaterial', contentType: 'application/pdf', content: textPdf(texts).toString('base64') });
  return docs;
}

/**
 * The reason to defend under: the first one whose required documents are all among `docs`
 * (and, for `OneOrMore`, at least one of them), else the first Adyen offers.
 */
export function chooseReason(reasons: readonly DefenseReason[], docs: readonly DefenseDocument[]): string | undefined {
  const have = new Set(docs.map((d) => d.defenseDocumentTypeCode));
  const fits = (r: DefenseReason) => {
    const types = r.defenseDocumentTypes ?? [];
    const required = types.filter((t) => t.requirementLevel === 'Required');
    const oneOf = types.filter((t) => t.requirementLevel === 'OneOrMore');
    return required.every((t) => have.has(t.defenseDocumentTypeCode)) && (oneOf.length === 0 || oneOf.some((t) => have.has(t.defenseDocumentTypeCode)));
  };
  return (reasons.find(fits) ?? reasons[0])?.defenseReasonCode;
}

/** Sends the merchant's answer to Adyen: approved once Adyen took it all, else its refusal or `unknown`. */
export async function respondAtAdyen(api: DisputeApi, input: DisputeResponseInput, attempt_id: string): Promise<DisputeResponseOutcome> {
  const ref = { merchantAccountCode: api.merchant_account, disputePspReference: input.processor_ref };
  const done: DisputeResponseOutcome = { kind: 'approved', reference: input.processor_ref };
  if (input.action === 'accept') {
    const r = await step(api, '/acceptDispute', ref, attempt_id);
    return r.kind === 'ok' ? done : r;
  }
  const asked = await step(api, '/retrieveApplicableDefenseReasons', ref, `${attempt_id}.reasons`);
  if (asked.kind !== 'ok') return asked;
  const reasons = Array.isArray(asked.body.defenseReasons) ? (asked.body.defenseReasons as DefenseReason[]) : [];
  const docs = defenseDocuments(input.evidence);
  const reason = chooseReason(reasons, docs);
  if (!reason) return { kind: 'declined', reason: 'Adyen offers no defense reason for this dispute (it may no longer be defendable)' };
  if (docs.length > 0) {
    const supplied = await step(api, '/supplyDefenseDocument', { ...ref, defenseDocuments: docs }, `${attempt_id}.documents`);
    if (supplied.kind !== 'ok') return supplied;
  }
  const defended = await step(api, '/defendDispute', { ...ref, defenseReasonCode: reason }, attempt_id);
  return defended.kind === 'ok' ? done : defended;
}
