// Sending one logical request with bounded retries. The caller puts an Idempotency-Key on
// it (the same on every attempt), so a retry never does the work twice: the gateway answers
// a repeated key from its store (docs/contract.md §4). Retried: no answer (connection failure,
// timeout), 429 (after Retry-After) and 5xx. Never retried: any other answer, 4xx included.
import { setTimeout as sleep } from 'node:timers/promises';
import { NetworkError } from './errors.js';

export interface RetryOptions {
  /** Attempts after the first one. */
  max_retries: number;
  /** No new attempt starts later than this after the first one began. */
  max_elapsed_ms: number;
  /** Backoff before retry n (1-based) is between half and all of min(max_delay_ms, base_delay_ms × 2^(n-1)). */
  base_delay_ms: number;
  max_delay_ms: number;
}

export const DEFAULT_RETRY: Readonly<RetryOptions> = { max_retries: 3, max_elapsed_ms: 30_000, base_delay_ms: 250, max_delay_ms: 8_000 };
export const DEFAULT_TIMEOUT_MS = 30_000;

export type FetchLike = typeof fetch;

export interface RawAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** Attempts made, the answered one included. */
  attempts: number;
}

export interface SendOptions {
  /** Per attempt. */
  timeout_ms: number;
  retry: RetryOptions;
  /** The caller's own cancellation: never retried. */
  signal?: AbortSignal;
}

const retryableStatus = (status: number) => status === 429 || status >= 500;

/** Exponential backoff with jitter: no two clients retry in step. */
export function backoff_ms(retry: number, o: RetryOptions): number {
  const cap = Math.min(o.max_delay_ms, o.base_delay_ms * 2 ** Math.min(retry - 1, 30));
  return cap / 2 + Math.random() * (cap / 2);
}

/** Retry-After in ms (delta-seconds or an HTTP date), or null when absent or unreadable. */
export function retryAfter_ms(value: string | null, now_ms = Date.now()): number | null {
  if (!value) return null;
  if (/^\d{1,10}$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now_ms);
}

export async function send(fetchFn: FetchLike, url: string, init: { headers: Record<string, string>; body: string }, o: SendOptions): Promise<RawAnswer> {
  const started = Date.now();
  let lastError: unknown;
  for (let attempt = 1; ; attempt++) {
    let answer: RawAnswer | null = null;
    try {
      const timeout = AbortSignal.timeout(o.timeout_ms);
      const signal = o.signal ? AbortSignal.any([o.signal, timeout]) : timeout;
      const res = await fetchFn(url, { method: 'POST', headers: init.headers, body: init.body, signal, redirect: 'manual' });
      answer = { status: res.status, headers: res.headers, text: await res.text(), attempts: attempt };
      if (!retryableStatus(res.status)) return answer;
    } catch (e) {
      if (o.signal?.aborted) throw e;
      lastError = e;
    }
    const wait = (answer && retryAfter_ms(answer.headers.get('retry-after'))) ?? backoff_ms(attempt, o.retry);
    const outOfTime = Date.now() - started + wait > o.retry.max_elapsed_ms;
    if (attempt > o.retry.max_retries || outOfTime) {
      if (answer) return answer; // the caller raises the last 429/5xx as it is
      const why = lastError instanceof Error ? `${lastError.name}: ${lastError.message}` : String(lastError);
      throw new NetworkError(`no answer from ${url} after ${attempt} attempt(s): ${why}`, attempt, { cause: lastError });
    }
    await sleep(wait, undefined, o.signal ? { signal: o.signal } : undefined);
  }
}
