// Per-key rate limit of the generic interface (issue 13): a token bucket per key holding
// `rate` tokens, refilled at `rate` per second, so a key may burst to `rate` requests and
// sustain `rate` per second. Per process: with several processes (cluster) each keeps its
// own buckets. Bounded: at most MAX_BUCKETS keys are tracked; idle full buckets go first.

const MAX_BUCKETS = 50_000;

export interface RateDecision {
  allowed: boolean;
  /** Seconds until one token is back (whole seconds, at least 1), when refused. */
  retry_after_s: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at_ms: number }>();

  /** `capacity`: the burst (default one second's worth); a rate below 1/s needs one of at least 1. */
  private readonly capacity: number;
  constructor(
    private readonly rate_per_s: number,
    capacity?: number,
  ) {
    this.capacity = capacity ?? rate_per_s;
  }

  take(key: string, now_ms: number): RateDecision {
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size >= MAX_BUCKETS) this.evict(now_ms);
      b = { tokens: this.capacity, at_ms: now_ms };
      this.buckets.set(key, b);
    }
    const elapsed_s = Math.max(0, now_ms - b.at_ms) / 1000;
    b.tokens = Math.min(this.capacity, b.tokens + elapsed_s * this.rate_per_s);
    b.at_ms = now_ms;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { allowed: true, retry_after_s: 0 };
    }
    return { allowed: false, retry_after_s: Math.max(1, Math.ceil((1 - b.tokens) / this.rate_per_s)) };
  }

  private evict(now_ms: number): void {
    for (const [k, b] of this.buckets) {
      if (b.tokens + ((now_ms - b.at_ms) / 1000) * this.rate_per_s >= this.capacity) this.buckets.delete(k);
    }
    if (this.buckets.size >= MAX_BUCKETS) this.buckets.clear();
  }
}
