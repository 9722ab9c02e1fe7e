// The remote sandbox's webhooks (docs/remote-sandbox.md): the signature (HMAC-SHA256 over
// `<t>.<raw body>`, Stripe's scheme, so the timestamp cannot be changed without the secret),
// its check (constant time, 5 minutes' tolerance), and the sender that delivers them with
// bounded retries and plays the webhook faults: duplicated, delayed, reordered, lost.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WireNotification } from './protocol.js';

/** A signature older or newer than this is refused (a replayed capture of an old delivery). */
export const SIGNATURE_TOLERANCE_S = 300;

/** `t=<unix seconds>,v1=<hex>` for `raw` signed at `at_s`. */
export function signWebhook(secret: string, raw: string, at_s: number): string {
  return `t=${at_s},v1=${createHmac('sha256', secret).update(`${at_s}.${raw}`).digest('hex')}`;
}

export type SignatureCheck = 'ok' | 'missing' | 'malformed' | 'stale' | 'mismatch';

/** Checks a signature header against the raw body, in constant time for the comparison. */
export function checkWebhookSignature(secret: string, header: string | undefined, raw: Buffer, now_s: number): SignatureCheck {
  if (!header) return 'missing';
  let t = Number.NaN;
  const given: Buffer[] = [];
  for (const part of header.split(',')) {
    const [k, v = ''] = part.trim().split('=', 2);
    if (k === 't' && /^\d{1,12}$/.test(v)) t = Number(v);
    if (k === 'v1' && /^[0-9a-f]{64}$/i.test(v)) given.push(Buffer.from(v, 'hex'));
  }
  if (!Number.isFinite(t) || given.length === 0) return 'malformed';
  if (Math.abs(now_s - t) > SIGNATURE_TOLERANCE_S) return 'stale';
  const want = createHmac('sha256', secret).update(`${t}.`).update(raw).digest();
  // Any v1 may match (a secret being rotated signs twice); each compared in constant time.
  return given.some((g) => g.length === want.length && timingSafeEqual(g, want)) ? 'ok' : 'mismatch';
}

export interface WebhookSenderOptions {
  url: string;
  secret: string;
  /** `delay-webhooks`: a delivery waits up to this long (uniformly). */
  delay_max_ms: number;
  /** `reorder-webhooks`: a held delivery goes after the next one, or after this long. */
  reorder_hold_ms: number;
  random: () => number;
  now_ms?: () => number;
}

/** At most this many deliveries wait (in timers or retries); more are dropped and counted (docs/style.md §9). */
const MAX_WAITING = 10_000;
/** Tries of one delivery: at once, then after 0.5, 1, 2, 4 s. */
const MAX_TRIES = 5;
const TRY_TIMEOUT_MS = 10_000;

export interface WebhookStats {
  queued: number;
  /** Not sent at all (`drop-webhooks`). */
  lost: number;
  delivered: number;
  failed: number;
  dropped: number;
  duplicated: number;
  delayed: number;
  reordered: number;
}

/** Delivers notifications one POST each (`{ notifications: [one] }`), signed, with the faults asked for. */
export class WebhookSender {
  readonly stats: WebhookStats = { queued: 0, lost: 0, delivered: 0, failed: 0, dropped: 0, duplicated: 0, delayed: 0, reordered: 0 };
  private waiting = 0;
  private held: { go: () => void; timer: NodeJS.Timeout } | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(private readonly o: WebhookSenderOptions) {}

  send(n: WireNotification, faults: { dup: boolean; delay: boolean; reorder: boolean; drop: boolean }): void {
    if (this.closed) return;
    // `drop-webhooks`: lost on the way, as deliveries sometimes are; the status query still knows.
    if (faults.drop) {
      this.stats.lost++;
      return;
    }
    this.stats.queued++;
    const copies = faults.dup ? 2 : 1;
    if (faults.dup) this.stats.duplicated++;
    const go = () => {
      for (let i = 0; i < copies; i++) this.later(() => this.deliver(n, 1), i * 50);
    };
    if (faults.delay) {
      this.stats.delayed++;
      this.later(() => this.release(go, faults.reorder), Math.round(this.o.random() * this.o.delay_max_ms));
    } else this.release(go, faults.reorder);
  }

  /** Stops every timer; deliveries not made yet are dropped. */
  close(): void {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    if (this.held) clearTimeout(this.held.timer);
    this.held = undefined;
  }

  /** `reorder`: this one waits for the next (or its hold time); the one held before goes right after this one. */
  private release(go: () => void, reorder: boolean): void {
    const before = this.held;
    if (reorder && !before) {
      this.stats.reordered++;
      const timer = setTimeout(() => {
        this.held = undefined;
        go();
      }, this.o.reorder_hold_ms);
      this.held = { go, timer };
      return;
    }
    go();
    if (before) {
      clearTimeout(before.timer);
      this.held = undefined;
      before.go();
    }
  }

  private later(fn: () => void, ms: number): void {
    if (this.waiting >= MAX_WAITING) {
      this.stats.dropped++;
      return;
    }
    this.waiting++;
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.waiting--;
      fn();
    }, ms);
    this.timers.add(t);
  }

  private async deliver(n: WireNotification, attempt: number): Promise<void> {
    if (this.closed) return;
    const raw = JSON.stringify({ notifications: [n] });
    const now_s = Math.floor((this.o.now_ms?.() ?? Date.now()) / 1000);
    let ok = false;
    try {
      const res = await fetch(this.o.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'sandbox-signature': signWebhook(this.o.secret, raw, now_s) },
        body: raw,
        signal: AbortSignal.timeout(TRY_TIMEOUT_MS),
      });
      await res.arrayBuffer().catch(() => undefined);
      ok = res.status >= 200 && res.status < 300;
    } catch {
      ok = false;
    }
    if (ok) this.stats.delivered++;
    else if (attempt >= MAX_TRIES) this.stats.failed++;
    else this.later(() => this.deliver(n, attempt + 1), 250 * 2 ** attempt);
  }
}
