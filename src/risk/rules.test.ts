// The risk rules (docs/contract.md §10), one test per rule of RULES, each through real payments:
// set up the history the rule looks at, make one more payment, read its risk_reasons.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { CreatedMerchant } from '../merchants/service.js';
import { directPayment, type TestGateway, testGateway } from '../test/harness.js';
import { authorise, mpiInfo, queryOrder, reasonsOf, statusOfRule } from '../threeds/testing.js';
import { HISTORY_CACHE_MS } from './engine.js';
import { DEFAULT_THRESHOLDS, type RiskFacts, RULES, score } from './rules.js';
import { addToBlocklist, setThresholds } from './settings.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(async () => {
  await gw.close();
});

/**
 * Luhn-valid cards the sandbox approves that are not its shared success cards, so every
 * rule applies to them in full (docs/contract.md §9).
 */
const OTHER_CARD = '4000056655665556';
const OTHER_CARD_2 = '5200828282828210';

/** open3d 0 so a REVIEW-band score is held rather than challenged: these tests read the reasons. */
const pay = (m: CreatedMerchant, overrides: Record<string, unknown> = {}) =>
  authorise(gw, directPayment(m, { open3d: '0', card: OTHER_CARD, ...overrides }), m);

async function times(n: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < n; i++) await fn(i);
}

interface RuleCase {
  rule: string;
  goal: string;
  /** Builds the history on a fresh account and returns the fields of the payment that should fire the rule. */
  setup(m: CreatedMerchant): Promise<Record<string, unknown>>;
  fires_as: 'REVIEW' | 'REJECT';
}

const CASES: RuleCase[] = [
  { rule: 'sandbox_test_card', goal: 'card 4100000000000019 is always rejected', fires_as: 'REJECT', setup: async () => ({ card: '4100000000000019' }) },
  { rule: 'sandbox_review_card', goal: 'card 4000000000009235 is always held', fires_as: 'REVIEW', setup: async () => ({ card: '4000000000009235' }) },
  {
    rule: 'blocklist',
    goal: 'a blocked e-mail address is rejected',
    fires_as: 'REJECT',
    setup: async (m) => {
      await addToBlocklist(gw.runtime.store, gw.runtime.keyring, m.account_id, 'email', 'Fraud@Example.com', gw.clock.now);
      return { shopper_email: 'fraud@example.com' };
    },
  },
  {
    rule: 'velocity_card',
    goal: 'a sixth attempt with one card within the hour',
    fires_as: 'REVIEW',
    setup: async (m) => {
      await times(5, () => pay(m));
      return {};
    },
  },
  {
    rule: 'velocity_email',
    goal: 'over 5000.00 with one e-mail in 24 hours, across cards',
    fires_as: 'REVIEW',
    setup: async (m) => {
      await pay(m, { amount: '4000.00', shopper_email: 'big@shop.test' });
      return { amount: '1500.00', shopper_email: 'BIG@shop.test', card: OTHER_CARD_2 };
    },
  },
  {
    rule: 'velocity_ip',
    goal: 'over 10000.00 from one IP address in 24 hours',
    fires_as: 'REVIEW',
    setup: async (m) => {
      await pay(m, { amount: '9000.00', shopper_ip: '8.8.8.8' });
      return { amount: '2000.00', shopper_ip: '8.8.8.8', card: OTHER_CARD_2 };
    },
  },
  {
    rule: 'velocity_device',
    goal: 'over 10000.00 from one device in 24 hours',
    fires_as: 'REVIEW',
    setup: async (m) => {
      await pay(m, { amount: '9000.00', device_fingerprint: 'dev-42' });
      return { amount: '2000.00', device_fingerprint: 'dev-42', card: OTHER_CARD_2 };
    },
  },
  {
    rule: 'country_mismatch',
    goal: 'billing US, US card, but the IP address is in GB',
    fires_as: 'REVIEW',
    setup: async () => ({ billing_country: 'US', shopper_ip: '81.2.69.10' }),
  },
  { rule: 'disposable_email', goal: 'an address at a disposable-mail domain', fires_as: 'REVIEW', setup: async () => ({ shopper_email: 'x@mailinator.com' }) },
  {
    rule: 'amount_above_history',
    goal: '10 times the median of ten earlier payments',
    fires_as: 'REVIEW',
    setup: async (m) => {
      await times(10, (i) => pay(m, { card: i % 2 ? OTHER_CARD_2 : OTHER_CARD, shopper_email: `h${i}@shop.test` }));
      gw.clock.advance(HISTORY_CACHE_MS + 1); // past this process's cached copy of the history
      return { amount: '100.00' };
    },
  },
  {
    rule: 'new_card_high_amount',
    goal: 'a card new to the account at 1000.00 with no history',
    fires_as: 'REVIEW',
    setup: async () => ({ amount: '1000.00' }),
  },
];

describe('each rule fires (docs/contract.md §10)', () => {
  test('every rule of the table has a case here, or its own test below', () => {
    const covered = new Set([...CASES.map((c) => c.rule), 'threeds_authenticated']);
    assert.deepEqual(
      RULES.map((r) => r.name).filter((n) => !covered.has(n)),
      [],
    );
  });

  test('a quiet payment fires nothing: score 0, every rule ACCEPT', async () => {
    const m = await gw.newMerchant();
    const x = await pay(m, { billing_country: 'US', shopper_ip: '8.8.8.8', shopper_email: 'a@shop.test' });
    assert.deepEqual([x.risk_action, x.risk_score], ['ACCEPT', '0']);
    assert.deepEqual(
      reasonsOf(x).map((r) => r.name),
      RULES.map((r) => r.name),
    );
    assert.ok(reasonsOf(x).every((r) => r.status === 'ACCEPT'));
  });

  for (const c of CASES) {
    test(`${c.rule}: ${c.goal}`, async () => {
      const m = await gw.newMerchant();
      const fields = await c.setup(m);
      const x = await pay(m, fields);
      assert.equal(statusOfRule(x, c.rule), c.fires_as, JSON.stringify(reasonsOf(x)));
      const weight = RULES.find((r) => r.name === c.rule)?.weight ?? 0;
      assert.ok(Number(x.risk_score) >= Math.min(weight, 100), `score ${x.risk_score} includes the rule's weight ${weight}`);
      if (c.fires_as === 'REJECT') assert.deepEqual([x.order_status, x.result_info, x.risk_action], ['0', '1008:Rejected by risk control', 'REJECT']);
    });
  }

  test('threeds_authenticated: a 3-D Secure result lowers the score', async () => {
    const m = await gw.newMerchant();
    const plain = await pay(m, { shopper_email: 'y@mailinator.com' });
    const authenticated = await pay(m, {
      shopper_email: 'z@mailinator.com',
      card: OTHER_CARD_2,
      additional_information: [{ mpi_info: mpiInfo({ eci: '02' }) }],
    });
    assert.equal(plain.risk_score, '30');
    assert.equal(authenticated.risk_score, '0');
  });
});

describe('blocklists (tollgate blocklist add)', () => {
  const table: Array<['card' | 'email' | 'ip' | 'bin', string, Record<string, unknown>]> = [
    ['card', '5555555555554444', { card: '5555555555554444' }],
    ['email', 'bad@shop.test', { shopper_email: 'bad@shop.test' }],
    ['ip', '::ffff:203.0.113.9', { shopper_ip: '203.0.113.9' }],
    ['bin', '555555', { card: '5555555555554444' }],
  ];
  for (const [type, value, fields] of table) {
    test(`a blocked ${type} is rejected before the processor, other payments are not`, async () => {
      const m = await gw.newMerchant();
      await addToBlocklist(gw.runtime.store, gw.runtime.keyring, m.account_id, type, value, gw.clock.now);
      const x = await pay(m, fields);
      assert.deepEqual([x.result_info, statusOfRule(x, 'blocklist')], ['1008:Rejected by risk control', 'REJECT']);
      assert.equal(statusOfRule(await pay(m), 'blocklist'), 'ACCEPT');
    });
  }

  test('a blocked card is stored only as its keyed fingerprint', async () => {
    const m = await gw.newMerchant();
    const stored = await addToBlocklist(gw.runtime.store, gw.runtime.keyring, m.account_id, 'card', '4242424242424242', gw.clock.now);
    const rows = await gw.runtime.store.db.selectFrom('risk_blocklist').selectAll().where('account_id', '=', m.account_id).execute();
    assert.deepEqual(
      rows.map((r) => r.value),
      [stored],
    );
    assert.ok(!stored.includes('4242'));
  });

  test('one account’s blocklist does not touch another account', async () => {
    const a = await gw.newMerchant();
    const b = await gw.newMerchant();
    await addToBlocklist(gw.runtime.store, gw.runtime.keyring, a.account_id, 'email', 'shared@shop.test', gw.clock.now);
    assert.equal((await pay(b, { shopper_email: 'shared@shop.test' })).risk_action, 'ACCEPT');
  });
});

describe('risk data in answers', () => {
  test('the order query carries antifraud_provider and one fraud_check_result per rule', async () => {
    const m = await gw.newMerchant();
    const x = await pay(m, { shopper_email: 'q@mailinator.com' });
    assert.deepEqual([x.risk_action, x.risk_score], ['ACCEPT', '30']);
    const order = await queryOrder(gw, m, x.transaction_id);
    assert.equal(order.antifraud_provider, 'tollgate-risk');
    assert.deepEqual(
      order.fraud_check_result,
      reasonsOf(x).map((r) => ({ check_items: r.name, status: r.status })),
    );
    assert.deepEqual(
      order.fraud_check_result.find((r: { check_items: string }) => r.check_items === 'disposable_email'),
      { check_items: 'disposable_email', status: 'REVIEW' },
    );
  });
});

describe('the sandbox test cards on a test account (docs/contract.md §9)', () => {
  test('one shopper pays 4242424242424242 two hundred times: two hundred successes', async () => {
    const m = await gw.newMerchant();
    const shopper = { shopper_email: 'suite@shop.test', shopper_ip: '8.8.8.8', device_fingerprint: 'ci-runner', billing_country: 'US' };
    const results: string[] = [];
    for (let i = 0; i < 200; i++) {
      const x = await authorise(gw, directPayment(m, { card: '4242424242424242', ...shopper }), m);
      results.push(`${x.order_status} ${x.result_info} ${x.risk_action}`);
    }
    assert.deepEqual(new Set(results), new Set(['1 0000:Success ACCEPT']));
    // …and the success card left no trace that counts against the shopper's next card.
    const next = await pay(m, shopper);
    assert.deepEqual([next.result_info, next.risk_score], ['0000:Success', '0']);
  });

  test('every shared success card pays again and again, at any amount', async () => {
    const m = await gw.newMerchant();
    for (const card of ['4242424242424242', '5555555555554444', '378282246310005', '6011111111111117', '3566002020360505']) {
      const security_code = card.startsWith('37') ? '1234' : '123';
      for (let i = 0; i < 8; i++) {
        const x = await authorise(gw, directPayment(m, { card, security_code, amount: '2500.00', shopper_email: 'same@shop.test' }), m);
        assert.equal(x.result_info, '0000:Success', `${card.slice(0, 6)} payment ${i + 1}: ${JSON.stringify(reasonsOf(x))}`);
      }
    }
  });

  test('4000000000009235 is held for review at once, without a 3-D Secure challenge', async () => {
    const m = await gw.newMerchant();
    for (let i = 0; i < 3; i++) {
      const x = await authorise(gw, directPayment(m, { card: '4000000000009235' }), m);
      assert.deepEqual([x.order_status, x.result_info, x.risk_action, x.threeds_url], ['3', '0004:Held for risk review', 'REVIEW', undefined]);
      const order = await queryOrder(gw, m, x.transaction_id);
      assert.equal(order.payment_status, '2100');
    }
  });

  test('another card from one shopper still trips the velocity rule', async () => {
    const m = await gw.newMerchant();
    const shopper = { shopper_email: 'busy@shop.test', open3d: '0' };
    const actions: string[] = [];
    for (let i = 0; i < 5; i++) actions.push((await pay(m, shopper)).risk_action);
    assert.deepEqual(actions.slice(0, 5), ['ACCEPT', 'ACCEPT', 'ACCEPT', 'ACCEPT', 'ACCEPT']);
    const sixth = await pay(m, shopper);
    assert.equal(statusOfRule(sixth, 'velocity_card'), 'REVIEW');
    assert.notEqual(sixth.risk_action, 'ACCEPT');
  });

  test('thresholds still apply to the success cards', async () => {
    const m = await gw.newMerchant();
    await setThresholds(gw.runtime.store, m.account_id, { review: 20, reject: 90 }, gw.clock.now);
    const x = await authorise(gw, directPayment(m, { card: '4242424242424242', shopper_email: 'x@mailinator.com', open3d: '0' }), m);
    assert.deepEqual([x.risk_score, x.risk_action, x.order_status], ['30', 'REVIEW', '3']);
  });
});

describe('scoring (pure)', () => {
  const quiet: RiskFacts = {
    mode: 'test',
    pan: '4242424242424242',
    shared_success_card: false,
    amount_minor: 1000,
    major_minor: 100,
    email: '',
    billing_country: null,
    card_country: 'US',
    ip_country: null,
    velocity: { card: null, email: null, ip: null, device: null },
    blocked: [],
    disposable_email: false,
    card_seen: true,
    history: { count: 0, median_minor: 0 },
    threeds_result: '',
  };
  const table: Array<[goal: string, facts: Partial<RiskFacts>, score: number, action: string]> = [
    ['nothing fires', {}, 0, 'ACCEPT'],
    ['one REVIEW rule below the review threshold', { disposable_email: true }, 30, 'ACCEPT'],
    ['two rules reach the review band', { disposable_email: true, billing_country: 'GB' }, 60, 'REVIEW'],
    ['three rules reach REJECT', { disposable_email: true, billing_country: 'GB', card_seen: false, amount_minor: 100_000 }, 85, 'REJECT'],
    ['a REJECT rule decides whatever the score', { blocked: ['ip'] }, 100, 'REJECT'],
    ['authentication never takes the score below 0', { threeds_result: 'Y' }, 0, 'ACCEPT'],
    ['authentication lowers a review score', { disposable_email: true, billing_country: 'GB', threeds_result: 'A' }, 30, 'ACCEPT'],
    ['the sandbox review card is held at the review threshold', { pan: '4000000000009235' }, 50, 'REVIEW'],
    ['the sandbox review card is held even when authenticated', { pan: '4000000000009235', threeds_result: 'Y' }, 50, 'REVIEW'],
    ['the sandbox review card still rejects when the score reaches REJECT', { pan: '4000000000009235', blocked: ['email'] }, 100, 'REJECT'],
    [
      'a shared success card skips velocity, history and new-card rules',
      {
        shared_success_card: true,
        card_seen: false,
        amount_minor: 500_000,
        history: { count: 20, median_minor: 100 },
        velocity: { card: { count_1h: 50, amount_24h_minor: 9_000_000 }, email: { count_1h: 50, amount_24h_minor: 0 }, ip: null, device: null },
      },
      0,
      'ACCEPT',
    ],
    ['a shared success card still meets the blocklist', { shared_success_card: true, blocked: ['card'] }, 100, 'REJECT'],
    ['a shared success card still meets the other rules', { shared_success_card: true, disposable_email: true, billing_country: 'GB' }, 60, 'REVIEW'],
    ['on a live account the sandbox cards are ordinary cards', { mode: 'live', pan: '4000000000009235' }, 0, 'ACCEPT'],
  ];
  for (const [goal, facts, s, action] of table) {
    test(goal, () => {
      const r = score({ ...quiet, ...facts }, DEFAULT_THRESHOLDS);
      assert.deepEqual([r.score, r.action], [s, action]);
      assert.equal(r.reasons.length, RULES.length);
    });
  }
});
