// The published test-card table and the sandbox agree (docs/contract.md §9): the docs hold the
// table generated from the data, and every listed card does what its row says.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { isSharedSuccessCard, sandboxRiskVerdict, TEST_CARDS, testCardsMarkdown } from './cards.js';
import { sandboxProcessor } from './index.js';

test('docs/interface.md holds the table generated from the sandbox data', () => {
  const doc = fs.readFileSync(new URL('../../../docs/interface.md', import.meta.url), 'utf8');
  assert.ok(doc.includes(testCardsMarkdown()), 'regenerate the table in docs/interface.md from testCardsMarkdown()');
});

test('every listed card: the issuer answers as its row says, shopper-present and merchant-initiated', async () => {
  const card = (pan: string) => ({ pan, brand: 'visa', exp_month: 12, exp_year: 2099 });
  // Each call its own attempt: the sandbox answers a repeated attempt id as the first time.
  let n = 0;
  const call = () => ({ attempt_id: `att_${++n}`, deadline_at: Date.now() + 1_000, signal: new AbortController().signal });
  for (const [pan, row] of Object.entries(TEST_CARDS)) {
    for (const merchant_initiated of [false, true]) {
      const out = await sandboxProcessor.authorise({ transaction_id: 'T', amount_minor: 1000, currency: 'USD', card: card(pan), merchant_initiated }, call());
      const want = (merchant_initiated ? row.merchant_initiated : undefined) ?? row.issuer;
      assert.equal(out.kind, want.kind, pan);
      if (want.kind === 'declined' && out.kind === 'declined') assert.equal(out.code, want.code, pan);
    }
  }
  const unlisted = await sandboxProcessor.authorise({ transaction_id: 'T', amount_minor: 1000, currency: 'USD', card: card('4000056655665556') }, call());
  assert.equal(unlisted.kind, 'approved');
});

test('shared success cards and fixed risk verdicts hold on test accounts only', () => {
  assert.equal(isSharedSuccessCard('test', '4242424242424242'), true);
  assert.equal(isSharedSuccessCard('live', '4242424242424242'), false);
  assert.equal(isSharedSuccessCard('test', '4000056655665556'), false);
  assert.equal(isSharedSuccessCard('test', '4000000000009235'), false);
  assert.deepEqual(
    ['4100000000000019', '4000000000009235', '4242424242424242'].map((p) => sandboxRiskVerdict('test', p)),
    ['REJECT', 'REVIEW', undefined],
  );
  assert.equal(sandboxRiskVerdict('live', '4100000000000019'), undefined);
});
