// Goal: the ranking orders methods by the posterior mean of a stated Beta prior, so a
// method with a few lucky attempts never outranks one measured thousands of times; empty
// history gives the prior with sample_size 0; ties are broken the same way every time; the
// best method and those within the margin are recommended. Pure: a table per rule.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { formatRate, type MethodHistory, PRIORS, posteriorMean, RECOMMEND_MARGIN, rankMethods } from './ranking.js';

const card = (payment_method: string, approved: number, attempts: number): MethodHistory => ({ payment_method, type: 'card', approved, attempts });
const apm = (payment_method: string, approved: number, attempts: number): MethodHistory => ({ payment_method, type: 'apm', approved, attempts });
const order = (h: MethodHistory[]) => rankMethods(h).map((m) => m.payment_method);

test('the priors: cards 0.85 and APMs 0.70, each worth 20 attempts', () => {
  assert.deepEqual(PRIORS, { card: { alpha: 17, beta: 3 }, apm: { alpha: 14, beta: 6 } });
  assert.equal(posteriorMean(PRIORS.card, 0, 0), 0.85);
  assert.equal(posteriorMean(PRIORS.apm, 0, 0), 0.7);
});

test('posterior mean: a table of counts', () => {
  const table: Array<[MethodHistory, string]> = [
    [card('visa', 0, 0), '0.8500'],
    [card('visa', 3, 3), '0.8696'], // 20/23
    [card('visa', 2900, 3000), '0.9659'], // 2917/3020
    [card('visa', 0, 20), '0.4250'], // 17/40
    [card('visa', 1000, 1000), '0.9971'], // 1017/1020
    [apm('pix', 0, 0), '0.7000'],
    [apm('pix', 10, 10), '0.8000'], // 24/30
    [apm('boleto', 50, 100), '0.5333'], // 64/120
  ];
  for (const [h, rate] of table) assert.equal(formatRate(rankMethods([h])[0]!.approval_rate), rate, JSON.stringify(h));
});

test('3 approvals out of 3 stay below 2,900 out of 3,000: the prior, not luck', () => {
  assert.deepEqual(order([card('jcb', 3, 3), card('visa', 2900, 3000)]), ['visa', 'jcb']);
  assert.deepEqual(order([apm('ideal', 3, 3), apm('pix', 2900, 3000)]), ['pix', 'ideal']);
  // The raw rates say the opposite (1.0 against 0.967): only the prior keeps them apart.
  assert.ok(3 / 3 > 2900 / 3000);
  // The luck is bounded, not forbidden: 30 of 30 is real evidence above a 0.85 brand.
  assert.deepEqual(order([card('visa', 2550, 3000), card('jcb', 30, 30)]), ['jcb', 'visa']);
});

test('a table of orders', () => {
  const table: Array<[MethodHistory[], string[]]> = [
    // decline rates measured on real history
    [
      [card('visa', 450, 500), card('mastercard', 250, 500)],
      ['visa', 'mastercard'],
    ],
    // untried methods sit at their prior: a card brand above an APM
    [
      [apm('pix', 0, 0), card('visa', 0, 0)],
      ['visa', 'pix'],
    ],
    // an APM the shoppers pay beats a card brand that declines
    [
      [card('visa', 100, 200), apm('pix', 190, 200)],
      ['pix', 'visa'],
    ],
    // a measured brand below its prior falls under an untried one
    [
      [card('visa', 700, 1000), card('jcb', 0, 0)],
      ['jcb', 'visa'],
    ],
  ];
  for (const [history, expected] of table) assert.deepEqual(order(history), expected, JSON.stringify(history));
});

test('ties: more evidence first, then the order given; stable', () => {
  // Equal rates: 17/20 (no history) and 34/40 (17 of 20), both 0.85.
  assert.deepEqual(order([card('visa', 0, 0), card('jcb', 17, 20)]), ['jcb', 'visa']);
  assert.deepEqual(order([card('visa', 0, 0), card('mastercard', 0, 0), card('discover', 0, 0)]), ['visa', 'mastercard', 'discover']);
  assert.deepEqual(order([card('discover', 0, 0), card('mastercard', 0, 0), card('visa', 0, 0)]), ['discover', 'mastercard', 'visa']);
});

test('empty history: the prior, sample_size 0; no methods: an empty list', () => {
  const [only] = rankMethods([apm('ideal', 0, 0)]);
  assert.deepEqual(only, { payment_method: 'ideal', type: 'apm', approval_rate: 0.7, sample_size: 0, recommended: true });
  assert.deepEqual(rankMethods([]), []);
});

test('recommended: the best, and every method within one percentage point of it', () => {
  assert.equal(RECOMMEND_MARGIN, 0.01);
  const ranked = rankMethods([
    card('visa', 900, 1000), // 917/1020 = 0.8990
    card('mastercard', 890, 1000), // 907/1020 = 0.8892 (0.0098 below)
    card('amex', 880, 1000), // 897/1020 = 0.8794 (0.0196 below)
    apm('pix', 0, 0), // 0.70
  ]);
  assert.deepEqual(
    ranked.map((m) => [m.payment_method, formatRate(m.approval_rate), m.sample_size, m.recommended]),
    [
      ['visa', '0.8990', 1000, true],
      ['mastercard', '0.8892', 1000, true],
      ['amex', '0.8794', 1000, false],
      ['pix', '0.7000', 0, false],
    ],
  );
});

test('counts that are not counts are refused', () => {
  for (const [a, n] of [
    [4, 3],
    [-1, 3],
    [1.5, 3],
    [0, Number.NaN],
  ])
    assert.throws(() => rankMethods([card('visa', a as number, n as number)]), RangeError);
});

test('the wire form: four decimals, 0 and 1 included', () => {
  assert.deepEqual([0, 1, 0.85, 0.123456, 0.99996].map(formatRate), ['0.0000', '1.0000', '0.8500', '0.1235', '1.0000']);
});

test('docs/interface.md states these priors, the margin and the worked example', () => {
  const doc = fs.readFileSync(new URL('../../docs/interface.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
  const { card: c, apm: a } = PRIORS;
  assert.ok(doc.includes(`(approvals + ${c.alpha}) / (attempts + ${c.alpha + c.beta}) for a card brand`));
  assert.ok(doc.includes(`(approvals + ${a.alpha}) / (attempts + ${a.alpha + a.beta}) for an alternative method`));
  assert.ok(
    doc.includes(`20 payments at ${(100 * c.alpha) / (c.alpha + c.beta)}% approval for a card brand and 20 at ${(100 * a.alpha) / (a.alpha + a.beta)}%`),
  );
  assert.ok(doc.includes('within one percentage point') && RECOMMEND_MARGIN === 0.01);
  const [three] = rankMethods([card('visa', 3, 3)]);
  const [many] = rankMethods([card('visa', 2900, 3000)]);
  assert.ok(doc.includes(`3 approvals out of 3 shows \`${formatRate(three!.approval_rate)}\``));
  assert.ok(doc.includes(`2,900 out of 3,000 (\`${formatRate(many!.approval_rate)}\`)`));
});
