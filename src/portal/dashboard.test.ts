// The portal's dashboard (docs/contract.md §19; issue 14): charts drawn on the server as SVG from
// the account's payments (volume and approval rate per day), the period selector, the
// balances from the ledger; and the chart functions themselves (pure, table-driven).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { topUp } from '../payouts/admin.js';
import { paymentRequest, readXml, type TestGateway, testGateway } from '../test/harness.js';
import { barChart, type ChartSpec, labelledIndexes, lineChart, niceCeiling } from './charts.js';
import { APPROVED, axisAmount, DAY_MS, dailyPaymentStats, isoDay, seriesOf } from './dashboard.js';
import { signedInUser } from './testing.js';

describe('charts (pure)', () => {
  const spec = (over: Partial<ChartSpec> = {}): ChartSpec => ({
    id: 'chart-x',
    title: 'Things per day',
    description: 'Things counted each day.',
    points: [
      { label: '2026-11-01', value: 10 },
      { label: '2026-11-02', value: null },
      { label: '2026-11-03', value: 40, note: '4 of 10' },
    ],
    format: (v) => `${v} things`,
    columns: ['Day', 'Things', 'Note'],
    ...over,
  });

  const ceilings: Array<[number, number]> = [
    [0, 1],
    [-5, 1],
    [0.3, 0.5],
    [1, 1],
    [7, 10],
    [12, 20],
    [21, 25],
    [4100, 5000],
    [99_999, 100_000],
  ];
  for (const [n, want] of ceilings) test(`niceCeiling(${n}) = ${want}`, () => assert.equal(niceCeiling(n), want));

  const labelled: Array<[number, number[]]> = [
    [0, []],
    [1, [0]],
    [7, [0, 1, 2, 3, 4, 5, 6]],
    [30, [0, 4, 8, 12, 16, 20, 24, 28]],
    [90, [0, 12, 24, 36, 48, 60, 72, 84]],
  ];
  for (const [n, want] of labelled) test(`${n} days → ${want.length} x labels`, () => assert.deepEqual(labelledIndexes(n), want));

  test('a bar chart: svg with its id, <title> and <desc>, y ticks, one bar per non-empty point with a tooltip, the data table', () => {
    const out = barChart(spec()).toString();
    assert.match(out, /<svg id="chart-x" role="img" aria-labelledby="chart-x-title chart-x-desc"/);
    assert.match(out, /<title id="chart-x-title">Things per day<\/title><desc id="chart-x-desc">Things counted each day.<\/desc>/);
    assert.equal((out.match(/<rect class="bar"/g) ?? []).length, 2, 'no bar for the null point');
    assert.match(out, /<title>2026-11-03: 40 things \(4 of 10\)<\/title>/);
    // y axis 0..50 in 4 ticks
    for (const t of ['0 things', '12.5 things', '25 things', '50 things']) assert.ok(out.includes(`>${t}</text>`), t);
    assert.match(out, />11-01<\/text>/, 'x labels are short dates');
    assert.match(out, /<table id="chart-x-table">/);
    assert.match(out, /<tr><th scope="row">2026-11-02<\/th><td class="num">—<\/td><td><\/td><\/tr>/);
    // the tallest bar reaches 40/50 of the plot height (192 px)
    assert.match(out, /height="153.6"/);
  });

  test('a line chart is broken at a point without value; yMax fixes the axis', () => {
    const out = lineChart(spec({ yMax: 100 })).toString();
    assert.equal((out.match(/<polyline/g) ?? []).length, 2, 'two runs around the gap');
    assert.equal((out.match(/<circle class="dot"/g) ?? []).length, 2);
    assert.ok(out.includes('>100 things</text>'));
  });

  test('labels are escaped (a merchant-controlled string cannot become markup)', () => {
    const out = barChart(spec({ title: '<script>x</script>', points: [{ label: '"><svg onload=1>', value: 1 }] })).toString();
    assert.doesNotMatch(out, /<script>/);
    assert.doesNotMatch(out, /<svg onload/);
    assert.match(out, /&lt;script&gt;/);
  });

  test('no points: an empty but valid chart', () => {
    const out = lineChart(spec({ points: [] })).toString();
    assert.match(out, /<svg id="chart-x"/);
    assert.doesNotMatch(out, /<polyline/);
  });

  test('series: zero-filled days, approval over all currencies, main currency first', () => {
    const days = [100, 101, 102];
    const s = seriesOf(
      [
        { day: 100, currency: 'EUR', attempted: 2, approved: 1, approved_minor: 500 },
        { day: 102, currency: 'USD', attempted: 4, approved: 3, approved_minor: 3000 },
        { day: 102, currency: 'EUR', attempted: 1, approved: 1, approved_minor: 100 },
        { day: 99, currency: 'USD', attempted: 9, approved: 9, approved_minor: 9 },
      ],
      days,
    );
    assert.deepEqual(s.currencies, ['USD', 'EUR']);
    assert.deepEqual(s.volume.get('USD'), [0, 0, 3000]);
    assert.deepEqual(s.volume.get('EUR'), [500, 0, 100]);
    assert.deepEqual(s.attempted, [2, 0, 5]);
    assert.deepEqual(s.approved, [1, 0, 4]);
  });

  const axis: Array<[number, string, string]> = [
    [0, 'USD', '0'],
    [250_000, 'USD', '2500'],
    [12_345, 'USD', '123.45'],
    [1200, 'JPY', '1200'],
    [1500, 'KWD', '1.500'],
  ];
  for (const [minor, cur, want] of axis) test(`axis label ${minor} ${cur} → ${want}`, () => assert.equal(axisAmount(minor, cur), want));
});

describe('GET /portal/dashboard', () => {
  const NOW = Date.UTC(2026, 10, 24, 12, 0, 0);
  let gw: TestGateway;
  before(async () => {
    gw = await testGateway({ start_ms: NOW });
  });
  after(() => gw.close());

  const pay = async (overrides: Record<string, unknown> = {}) => {
    const m = gw.merchant;
    const res = await gw.post('/v1/authorise', { merchant_id: m.merchant_id, account_id: m.account_id, ...paymentRequest(), ...overrides });
    assert.equal(res.statusCode, 200, res.body);
    return readXml(res);
  };

  test('both charts drawn from API payments, the period selector, the balances from the ledger', async () => {
    // Two days ago: 2 approved USD (10.00 + 15.00), 1 declined. Today: 1 approved USD 20.00, 1 approved EUR 5.00.
    gw.clock.now = NOW - 2 * DAY_MS;
    assert.equal((await pay()).result_info, '0000:Success');
    await pay({ amount: '15.00' });
    assert.match((await pay({ card: '4000000000000002' })).result_info, /^1/);
    gw.clock.now = NOW;
    await pay({ amount: '20.00' });
    await pay({ amount: '5.00', currency: 'EUR' });
    await topUp(gw.runtime.store, { account_id: gw.merchant.account_id, currency: 'USD', amount: '1000.00' }, gw.clock.now);

    const { agent } = await signedInUser(gw, { role: 'viewer' });
    const page = await agent.get('/portal/dashboard?period=7');
    assert.equal(page.status, 200, page.body);
    const volume = /<svg id="chart-volume"[\s\S]*?<\/svg>/.exec(page.body)?.[0] ?? '';
    const approval = /<svg id="chart-approval"[\s\S]*?<\/svg>/.exec(page.body)?.[0] ?? '';
    assert.ok(volume && approval, 'both SVG charts are on the page');
    assert.match(volume, /<title id="chart-volume-title">Approved volume per day \(USD\)<\/title>/, 'the main currency');
    assert.equal((volume.match(/<rect class="bar"/g) ?? []).length, 2);
    assert.ok(volume.includes(`<title>${isoDay(Math.floor(NOW / DAY_MS) - 2)}: 25</title>`), volume);
    assert.ok(volume.includes(`${isoDay(Math.floor(NOW / DAY_MS))}: 20</title>`));
    assert.ok(approval.includes(`${isoDay(Math.floor(NOW / DAY_MS) - 2)}: 66.7% (2 of 3 approved)</title>`), approval);
    assert.ok(approval.includes(`${isoDay(Math.floor(NOW / DAY_MS))}: 100% (2 of 2 approved)</title>`));
    assert.equal((approval.match(/<circle class="dot"/g) ?? []).length, 2, 'days without payments have no point');
    assert.match(page.body, /<table id="chart-volume-table">/, 'the text alternative');
    assert.match(page.body, /<table id="chart-approval-table">/);
    assert.match(page.body, /id="period-7"[^>]*aria-current="true"/);
    // The period is offered once (the links), not again in a form; the form chooses the currency only.
    assert.equal((page.body.match(/>30 days</g) ?? []).length, 1, 'one period chooser');
    assert.doesNotMatch(page.body, /name="period"(?! value)/);
    assert.match(page.body, /<form method="get" action="\/portal\/dashboard" class="inline" id="currency-form"><input type="hidden" name="period" value="7">/);
    assert.match(page.body, /id="total-attempted">5</);

    const eur = await agent.get('/portal/dashboard?period=7&currency=EUR');
    assert.match(eur.body, /Approved volume per day \(EUR\)/);
    assert.equal((await agent.get('/portal/dashboard?period=5')).status, 400, 'only 7, 30 or 90 days');

    // Balances: what GET /v1/balance reads (ledger sums), per currency.
    const balances = /<table id="balances">[\s\S]*?<\/table>/.exec(page.body)?.[0] ?? '';
    const usd = /<tr data-currency="USD">[\s\S]*?<\/tr>/.exec(balances)?.[0] ?? '';
    assert.match(usd, /class="num available">1000.00</, usd);
    assert.match(usd, /class="num pending">[1-9]/, 'captured payments are pending settlement');
    assert.match(balances, /<tr data-currency="EUR">/);
  });

  test('another account’s payments are not counted', async () => {
    const other = await gw.newMerchant();
    gw.clock.now = NOW;
    await gw.post(
      '/v1/authorise',
      { merchant_id: other.merchant_id, account_id: other.account_id, ...paymentRequest({ amount: '999.00' }) },
      { merchant: other },
    );
    const { agent } = await signedInUser(gw, { role: 'viewer' });
    const page = await agent.get('/portal/dashboard?period=7');
    assert.doesNotMatch(page.body, /999/);
  });

  test('the day aggregation reads only the range and the statuses it names', async () => {
    const today = Math.floor(NOW / DAY_MS);
    const rows = await dailyPaymentStats(gw.runtime.store.db, gw.merchant.account_id, (today - 1) * DAY_MS, (today + 1) * DAY_MS);
    assert.deepEqual(
      rows.sort((a, b) => a.currency.localeCompare(b.currency)),
      [
        { day: today, currency: 'EUR', attempted: 1, approved: 1, approved_minor: 500 },
        { day: today, currency: 'USD', attempted: 1, approved: 1, approved_minor: 2000 },
      ],
    );
    assert.ok(APPROVED.includes('captured'));
  });
});
