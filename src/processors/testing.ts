// A processor the tests steer (docs/attempts.md): what each call answers, what a status query
// says, and every call it received with its attempt id. Defaults answer like the sandbox. Its
// webhooks are `{ "notifications": [ProcessorNotification…] }` signed by `signTestWebhook`.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type {
  AttemptStatusAnswer,
  AuthoriseInput,
  AuthoriseOutcome,
  CancelInput,
  CaptureInput,
  MoneyOperation,
  OperationOutcome,
  OperationStatusAnswer,
  Processor,
  ProcessorCall,
  ProcessorNotification,
  RefundInput,
  WebhookParse,
  WebhookRequest,
} from './types.js';

/** The test processor's webhook signature: HMAC-SHA256 of the raw body, hex, in `x-test-signature`. */
export function signTestWebhook(secret: string, raw: string): string {
  return createHmac('sha256', secret).update(raw).digest('hex');
}

export class ScriptedProcessor implements Processor {
  readonly name = 'scripted';
  /** Set to `false` to play a processor without status queries (Adyen). */
  status_queries?: false;
  calls: Array<{ input: AuthoriseInput; call: ProcessorCall }> = [];
  operations: Array<{ operation: MoneyOperation; input: CaptureInput | CancelInput | RefundInput; call: ProcessorCall }> = [];
  statusAsked: string[] = [];
  cancels: Array<{ transaction_id: string; reference: string; attempt_id: string }> = [];
  answer: (input: AuthoriseInput) => Promise<AuthoriseOutcome> = async () => ({ kind: 'approved', reference: 'PSP-1' });
  status: AttemptStatusAnswer = { kind: 'unknown', reason: 'still not known' };
  /** What capture, cancel and refund answer (each may be overridden alone). */
  operation: (operation: MoneyOperation) => Promise<OperationOutcome> = async (op) => ({ kind: 'approved', reference: `PSP-${op}` });
  operationStatusAnswer: OperationStatusAnswer = { kind: 'unknown', reason: 'still not known' };
  cancelAnswer: OperationOutcome = { kind: 'approved', reference: 'PSP-void' };

  async authorise(input: AuthoriseInput, call: ProcessorCall): Promise<AuthoriseOutcome> {
    this.calls.push({ input, call });
    return this.answer(input);
  }
  async authoriseStatus(_input: { transaction_id: string }, call: ProcessorCall): Promise<AttemptStatusAnswer> {
    this.statusAsked.push(call.attempt_id);
    return this.status;
  }
  async capture(input: CaptureInput, call: ProcessorCall): Promise<OperationOutcome> {
    this.operations.push({ operation: 'capture', input, call });
    return this.operation('capture');
  }
  /** A merchant's cancel answers `operation('cancel')`; the sweeper's void of an unknown authorisation answers `cancelAnswer`. */
  async cancel(input: CancelInput, call: ProcessorCall): Promise<OperationOutcome> {
    if (call.attempt_id.endsWith('.void')) {
      this.cancels.push({ ...input, attempt_id: call.attempt_id });
      return this.cancelAnswer;
    }
    this.operations.push({ operation: 'cancel', input, call });
    return this.operation('cancel');
  }
  async refund(input: RefundInput, call: ProcessorCall): Promise<OperationOutcome> {
    this.operations.push({ operation: 'refund', input, call });
    return this.operation('refund');
  }
  async operationStatus(_input: { operation: MoneyOperation; transaction_id: string }, call: ProcessorCall): Promise<OperationStatusAnswer> {
    this.statusAsked.push(call.attempt_id);
    return this.operationStatusAnswer;
  }

  /** The secret its webhooks are signed with. */
  webhookSecret = 'whsec_test';

  parseWebhook(req: WebhookRequest): WebhookParse {
    const given = Buffer.from(req.headers['x-test-signature'] ?? '', 'hex');
    const want = Buffer.from(signTestWebhook(this.webhookSecret, req.raw.toString('utf8')), 'hex');
    if (given.length !== want.length || !timingSafeEqual(given, want)) return { kind: 'refused', status: 401, message: 'bad signature' };
    let body: { notifications?: ProcessorNotification[] };
    try {
      body = JSON.parse(req.raw.toString('utf8')) as typeof body;
    } catch {
      return { kind: 'refused', status: 400, message: 'not JSON' };
    }
    if (!Array.isArray(body.notifications)) return { kind: 'refused', status: 400, message: 'no notifications' };
    return { kind: 'accepted', notifications: body.notifications, reply: { status: 200, content_type: 'text/plain', body: '[accepted]' } };
  }
}

/** A call that never answers (the deadline decides). */
export const HANG = <T>() => new Promise<T>(() => {});
