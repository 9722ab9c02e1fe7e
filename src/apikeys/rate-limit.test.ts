// The token bucket of the generic interface's per-key rate limit (issue 13), on a given time:
// a burst of `rate`, then one request per 1/rate s, each key on its own, and Retry-After in
// whole seconds. src/generic/conventions.test.ts checks the same through HTTP.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TokenBuckets } from './rate-limit.js';

test('a burst of `rate` requests, then a refusal with Retry-After, then one token per 1/rate s', () => {
  const b = new TokenBuckets(5);
  const t0 = 1_000_000;
  for (let i = 0; i < 5; i++) assert.equal(b.take('k1', t0).allowed, true, `request ${i + 1}`);
  const sixth = b.take('k1', t0);
  assert.deepEqual(sixth, { allowed: false, retry_after_s: 1 });
  // 199 ms later the token is not back yet; at 200 ms it is, and only one.
  assert.equal(b.take('k1', t0 + 199).allowed, false);
  assert.equal(b.take('k1', t0 + 200).allowed, true);
  assert.equal(b.take('k1', t0 + 200).allowed, false);
  // Another key has a bucket of its own.
  for (let i = 0; i < 5; i++) assert.equal(b.take('k2', t0 + 200).allowed, true);
  // A long pause fills the bucket up to the burst, not past it.
  const later = t0 + 60_000;
  for (let i = 0; i < 5; i++) assert.equal(b.take('k1', later).allowed, true);
  assert.equal(b.take('k1', later).allowed, false);
  // A clock that goes back gives nothing.
  assert.equal(b.take('k1', later - 10_000).allowed, false);
});

test('a rate below one per second waits whole seconds', () => {
  const b = new TokenBuckets(0.5, 1);
  assert.equal(b.take('k', 0).allowed, true);
  assert.deepEqual(b.take('k', 0), { allowed: false, retry_after_s: 2 });
  assert.equal(b.take('k', 1_999).allowed, false);
  assert.equal(b.take('k', 2_000).allowed, true);
});
