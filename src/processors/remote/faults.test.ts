// Issue 31, "Bad input and faults", with the remote sandbox: every fault the sandbox can play
// (slow, hang after processing, 5xx before or after processing, a connection reset before,
// after, or either) on every operation that moves money (authorise, capture, cancel, refund,
// payout, deduction), run through the gateway's public interface and then the sweeper, leaves
// the merchant-visible state final and right (done when the sandbox acted, else failed or as
// it was, and then done once when sent again), the sandbox acting at most once, no attempt
// open, nothing `processing`, each posting and notification exactly once, and the ledger
// balanced (docs/attempts.md, docs/remote-sandbox.md, docs/contract.md §20). The sandbox's webhooks
// are dropped here so that only the sweeper settles; faults-webhooks.test.ts lets them race.
// The operations and checks: src/test/remote-faults.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ACTED,
  assertNothingStuck,
  eventsOf,
  FAULTS,
  OPERATIONS,
  postingsOf,
  sandbox,
  stats,
  sweepUntilSettled,
  useRemoteSandbox,
} from '../../test/remote-faults.js';

useRemoteSandbox();

describe('each fault on each operation: settled once, nothing stuck', () => {
  for (const op of OPERATIONS) {
    for (const fault of FAULTS) {
      test(`${op.name} × ${fault}`, async () => {
        const ctx = await op.setup();
        const before = stats();
        if (fault !== 'none') sandbox.queueFaults(op.wire, [fault, 'drop-webhooks']);
        else sandbox.queueFaults(op.wire, ['drop-webhooks']);
        const answer = await op.run(ctx);
        const during = stats();
        const fired = Object.keys(during.faults).filter((f) => (during.faults[f] ?? 0) > (before.faults[f] ?? 0) && f !== 'drop-webhooks');
        const effective = fault === 'reset' ? (fired.find((f) => f.startsWith('reset-')) ?? 'reset?') : fault;
        const acted = ACTED.has(effective);
        assert.equal(answer, effective === 'none' || effective === 'slow' ? op.answered : op.open, `the immediate answer (${effective})`);
        assert.equal((during.by_operation[op.wire] ?? 0) - (before.by_operation[op.wire] ?? 0), 1, 'one call reached the sandbox');
        assert.equal(during.acted - before.acted, acted ? 1 : 0, 'the sandbox acted once when it processed, else never');

        await sweepUntilSettled();
        const settled = stats();
        assert.equal(settled.acted, during.acted, 'the sweeper only asks: nothing acted again');
        const { money, events } = op.ids(ctx);
        const got = { state: await op.observe(ctx), postings: await postingsOf(money), events: await eventsOf(events) };
        assert.deepEqual(got, acted ? op.done : op.notDone, 'final, right, each posting and notification once');
        await assertNothingStuck();
        if (!acted && op.retry) {
          // Nothing stuck: the merchant sends it again and it is done, once.
          assert.equal(await op.run(ctx), op.answered);
          assert.equal(await op.observe(ctx), op.retry);
          assert.equal(stats().acted - settled.acted, 1);
          await assertNothingStuck();
        }
      });
    }
  }
});
