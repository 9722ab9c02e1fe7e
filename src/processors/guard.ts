// Every configured processor is called through its guard (docs/contract.md §21): a circuit
// breaker (cockatiel) per processor, and the calls' latency and outcomes on /metrics. After
// `CIRCUIT_FAILURES` calls in a row that got no answer (timeout, reset, 5xx: `unknown`), the
// circuit opens and calls are not made for `CIRCUIT_HALF_OPEN_MS`: each answers `unknown`
// with `not_sent`, so a payment is routed to the next processor at once instead of waiting
// for a deadline (src/authorise/authorise.ts). Then one call is let through; an answer
// closes the circuit again. Declines are answers: they never open it. A processor without
// status queries (`status_queries: false`) answers the sweeper's questions `unknown`
// without a call: those pass by the breaker, uncounted (5 of them opened Adyen's circuit).
import { BrokenCircuitError, CircuitState, ConsecutiveBreaker, circuitBreaker, handleAll } from 'cockatiel';
import type { Processor, ProcessorCall } from './types.js';

export const CIRCUIT_FAILURES = 5;
export const CIRCUIT_HALF_OPEN_MS = 10_000;

/** Where a guard reports (src/ops/metrics.ts). */
export interface ProcessorObserver {
  call(labels: { connector: string; processor_id: string; operation: string; outcome: string }, seconds: number): void;
  circuit(labels: { connector: string; processor_id: string }, open: boolean): void;
}

/** A call's answer that opens no circuit, or a failure the breaker counts. */
class NoAnswer extends Error {
  constructor(readonly outcome: unknown) {
    super('no answer');
  }
}

type Method =
  | 'authorise'
  | 'authoriseStatus'
  | 'completeAuthentication'
  | 'capture'
  | 'cancel'
  | 'refund'
  | 'operationStatus'
  | 'startApm'
  | 'payout'
  | 'payoutStatus'
  | 'respondToDispute';

const kindOf = (answer: object): string | undefined => (answer as { kind?: string }).kind;

/**
 * `processor` behind a circuit breaker and metrics, as the processor `processor_id`. Webhook
 * parsing is not a call and passes through.
 */
export function guardProcessor(processor: Processor, processor_id: string, observer: ProcessorObserver | null): Processor {
  const breaker = circuitBreaker(handleAll, { halfOpenAfter: CIRCUIT_HALF_OPEN_MS, breaker: new ConsecutiveBreaker(CIRCUIT_FAILURES) });
  const labels = { connector: processor.name, processor_id };
  breaker.onStateChange((state) => observer?.circuit(labels, state === CircuitState.Open));

  async function guarded<T extends object>(operation: Method, fn: () => Promise<T>): Promise<T | { kind: 'unknown'; reason: string; not_sent: true }> {
    const t0 = performance.now();
    const done = (outcome: string) => observer?.call({ ...labels, operation, outcome }, (performance.now() - t0) / 1000);
    try {
      const r = await breaker.execute(async () => {
        const answer = await fn();
        if (kindOf(answer) === 'unknown') throw new NoAnswer(answer);
        return answer;
      });
      done((r as { credentials_refused?: boolean }).credentials_refused ? 'credentials_refused' : (kindOf(r) ?? 'started'));
      return r;
    } catch (e) {
      if (e instanceof NoAnswer) {
        done('unknown');
        return e.outcome as T;
      }
      if (e instanceof BrokenCircuitError) {
        done('circuit_open');
        return {
          kind: 'unknown',
          reason: `circuit open: ${CIRCUIT_FAILURES} calls in a row got no answer; not called (tried again after ${CIRCUIT_HALF_OPEN_MS / 1000} s)`,
          not_sent: true,
        };
      }
      done('error');
      throw e;
    }
  }

  const p = processor;
  const asked = p.status_queries !== false;
  const guardedProcessor: Processor = {
    name: p.name,
    processor_id,
    authorise: (input, call) => guarded('authorise', () => p.authorise(input, call)),
    authoriseStatus: (input, call) => (asked ? guarded('authoriseStatus', () => p.authoriseStatus(input, call)) : p.authoriseStatus(input, call)),
    capture: (input, call) => guarded('capture', () => p.capture(input, call)),
    cancel: (input, call) => guarded('cancel', () => p.cancel(input, call)),
    refund: (input, call) => guarded('refund', () => p.refund(input, call)),
    operationStatus: (input, call) => (asked ? guarded('operationStatus', () => p.operationStatus(input, call)) : p.operationStatus(input, call)),
  };
  if (!asked) Object.assign(guardedProcessor, { status_queries: false });
  if (p.completeAuthentication) {
    const complete = p.completeAuthentication.bind(p);
    guardedProcessor.completeAuthentication = (input, call) => guarded('completeAuthentication', () => complete(input, call));
  }
  if (p.startApm) {
    const startApm = p.startApm.bind(p);
    guardedProcessor.startApm = (input, call: ProcessorCall) => guarded('startApm', () => startApm(input, call));
  }
  if (p.payout) {
    const payout = p.payout.bind(p);
    guardedProcessor.payout = (input, call) => guarded('payout', () => payout(input, call));
  }
  if (p.payoutStatus) {
    const payoutStatus = p.payoutStatus.bind(p);
    guardedProcessor.payoutStatus = (input, call) => (asked ? guarded('payoutStatus', () => payoutStatus(input, call)) : payoutStatus(input, call));
  }
  if (p.respondToDispute) {
    const respond = p.respondToDispute.bind(p);
    guardedProcessor.respondToDispute = (input, call) => guarded('respondToDispute', () => respond(input, call));
  }
  if (p.parseWebhook) guardedProcessor.parseWebhook = p.parseWebhook.bind(p);
  return guardedProcessor;
}
