// Portal transactions (docs/contract.md §19; issue 14): the list with its filters, keyset pages and
// CSV export, the detail page, and the actions (capture, cancel, refund, review, replay)
// through the same domain code as the API, with roles, double submission and audit lines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery } from 'kysely';
import { setPricing } from '../ledger/pricing.js';
import type { CreatedMerchant } from '../merchants/service.js';
import { setThresholds } from '../risk/settings.js';
import { directPayment, type TestGateway, testGateway } from '../test/harness.js';
import { authorise } from '../threeds/testing.js';
import { chooseLead, type Lead, majorToMinor, orderedByCodePoint, parseFilters, searchPayments, searchQuery, successor, withOrderRange } from './search.js';
import { formFields, type PortalAgent, signedInUser } from './testing.js';

let gw: TestGateway;
before(async () => {
  gw = await testGateway();
});
after(() => gw.close());

const DAY_MS = 86_400_000;
const VISA = '4242424242424242';
const MASTERCARD = '5555555555554444';

async function pay(m: CreatedMerchant, overrides: Record<string, unknown> = {}): Promise<{ transaction_id: string; order_no: string }> {
  const x = await authorise(gw, directPayment(m, { open3d: '0', ...overrides }), m);
  assert.ok(x.transaction_id, JSON.stringify(x));
  return { transaction_id: x.transaction_id, order_no: x.order_no };
}

async function portal(m: CreatedMerchant, role = 'operator'): Promise<PortalAgent> {
  return (await signedInUser(gw, { role, merchant_id: m.merchant_id })).agent;
}

/** Submits the form posting to `action` on `page`, then the confirmation page's form (cancel and refund ask first). */
async function confirmed(agent: PortalAgent, page: string, action: string, fields: Record<string, string> = {}) {
  const asked = await agent.submit(page, action, fields);
  assert.equal(asked.status, 200, `the confirmation page: ${asked.body.slice(0, 400)}`);
  assert.match(asked.body, /id="confirm-question"/);
  return agent.request('POST', action, formFields(asked.body, action));
}

const payment = (transaction_id: string) =>
  gw.runtime.store.db.selectFrom('payments').selectAll().where('transaction_id', '=', transaction_id).executeTakeFirstOrThrow();
const refundsOf = (transaction_id: string) =>
  gw.runtime.store.db.selectFrom('refunds').selectAll().where('transaction_id', '=', transaction_id).orderBy('refund_reference_id').execute();

/** The rows of the list's table: each row's cells as text. */
function tableRows(page: string): string[][] {
  const table = /<table id="transactions"[^>]*>[\s\S]*?<\/table>/.exec(page)?.[0] ?? '';
  const body = /<tbody>([\s\S]*)<\/tbody>/.exec(table)?.[1] ?? '';
  const text = (s: string) =>
    s
      .replace(/<[^>]*>/g, '')
      .replace(/&amp;/g, '&')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'");
  return [...body.matchAll(/<tr\b[^>]*>([\s\S]*?)<\/tr>/g)].map((r) => [...(r[1] ?? '').matchAll(/<td\b[^>]*>([\s\S]*?)<\/td>/g)].map((c) => text(c[1] ?? '')));
}
const idsOf = (page: string) => [...page.matchAll(/<tr data-transaction-id="([^"]+)"/g)].map((m) => m[1]);
const href = (page: string, id: string) => {
  const m = new RegExp(`<a [^>]*href="([^"]+)"[^>]*id="${id}"|<a [^>]*id="${id}"[^>]*href="([^"]+)"`).exec(page);
  return (m?.[1] ?? m?.[2] ?? '').replace(/&amp;/g, '&');
};

/** Every page of the list, following next-page. */
async function wholeList(agent: PortalAgent, first: string): Promise<{ rows: string[][]; pages: number }> {
  const rows: string[][] = [];
  let url = first;
  let pages = 0;
  while (url && pages < 100) {
    const r = await agent.get(url);
    assert.equal(r.status, 200, r.body.slice(0, 500));
    rows.push(...tableRows(r.body));
    pages++;
    url = href(r.body, 'next-page');
  }
  return { rows, pages };
}

describe('the filters, read (pure)', () => {
  const cases: Array<[string, Record<string, string>, string | null]> = [
    ['nothing set', {}, null],
    ['empty values are "any"', { from: '', status: '', last4: '', amount: '' }, null],
    ['a real date', { from: '2025-02-28' }, null],
    ['not a calendar date', { from: '2025-02-30' }, 'from'],
    ['to before from', { from: '2025-03-02', to: '2025-03-01' }, 'to'],
    ['an unknown status', { status: 'paid' }, 'status'],
    ['three digits of a card', { last4: '424' }, 'last4'],
    ['an amount with five decimals', { amount: '1.00001' }, 'amount'],
    ['an amount in words', { amount: 'ten' }, 'amount'],
  ];
  for (const [what, input, field] of cases)
    test(`${what} → ${field ? `refused (${field})` : 'accepted'}`, () => {
      if (!field) return void parseFilters(input);
      assert.throws(
        () => parseFilters(input),
        (e: Error & { field?: string }) => e.field === field,
      );
    });

  test('an amount matches in every exponent it fits: 12.34 is 1234 cents or 12340 fils, never 1234 yen', () => {
    const f = parseFilters({ amount: '12.34' });
    const byExp = new Map(f.amounts?.map((a) => [a.exponent, a]));
    assert.equal(byExp.get(2)?.amount_minor, 1234);
    assert.ok(byExp.get(2)?.currencies.includes('USD'));
    assert.equal(byExp.get(3)?.amount_minor, 12340);
    assert.ok(byExp.get(3)?.currencies.includes('KWD'));
    assert.equal(byExp.has(0), false);
    assert.deepEqual([majorToMinor('12', 0), majorToMinor('12.3', 2), majorToMinor('12.345', 2)], [12, 1230, null]);
  });
});

describe('the list', () => {
  let m: CreatedMerchant;
  let agent: PortalAgent;
  const made: Record<string, { transaction_id: string; order_no: string }> = {};

  before(async () => {
    m = await gw.newMerchant({ capture_method: 'manual' });
    // Three days apart, so the date filter has something to tell apart.
    made.old = await pay(m, { amount: '12.34', card: VISA });
    gw.clock.advance(3 * DAY_MS);
    made.mid = await pay(m, { amount: '20.00', card: MASTERCARD });
    gw.clock.advance(1);
    made.yen = await pay(m, { amount: '1234', currency: 'JPY', card: VISA });
    gw.clock.advance(3 * DAY_MS);
    made.now = await pay(m, { amount: '12.34', card: MASTERCARD, currency: 'EUR' });
    agent = await portal(m, 'viewer');
    // One captured, so the status filter has two values to tell apart.
    const cap = await gw.post(
      '/v1/capture',
      {
        merchant_id: m.merchant_id,
        account_id: m.account_id,
        capture_orders: [{ transaction_id: made.mid.transaction_id, order_no: made.mid.order_no, currency: 'USD', amount: '20.00' }],
      },
      { merchant: m },
    );
    assert.equal(JSON.parse(cap.body).capture_orders[0].capture_status, '1', cap.body);
  });

  const list = async (q: string) => {
    const r = await agent.get(`/portal/transactions${q}`);
    assert.equal(r.status, 200, r.body.slice(0, 800));
    return r;
  };

  test('everything of the account, newest first, with the cards as BIN and last four only', async () => {
    const r = await list('');
    assert.deepEqual(
      idsOf(r.body),
      [made.now, made.yen, made.mid, made.old].map((x) => x?.transaction_id),
    );
    const rows = tableRows(r.body);
    assert.deepEqual(rows[0]?.slice(2), [made.now?.order_no, '', '12.34 EUR', 'authorised', '555555******4444', 'mastercard']);
    assert.deepEqual(rows[1]?.slice(4, 5), ['1234 JPY']);
    assert.match(rows[0]?.[0] ?? '', /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/, 'the time as YYYY-MM-DD hh:mm');
    assert.match(r.body, /<a href="\/portal\/transactions\/[0-9A-Z]+">/);
    assert.ok(href(r.body, 'export-csv').startsWith('/portal/transactions.csv'));
    assert.equal(href(r.body, 'next-page'), '', 'one page only');
  });

  test('by order no, transaction id, last four, status', async () => {
    assert.deepEqual(idsOf((await list(`?order_no=${made.mid?.order_no}`)).body), [made.mid?.transaction_id]);
    assert.deepEqual(idsOf((await list(`?transaction_id=${made.old?.transaction_id}`)).body), [made.old?.transaction_id]);
    assert.deepEqual(idsOf((await list('?last4=4444')).body), [made.now?.transaction_id, made.mid?.transaction_id]);
    assert.deepEqual(idsOf((await list('?last4=4242')).body), [made.yen?.transaction_id, made.old?.transaction_id]);
    assert.deepEqual(idsOf((await list('?status=captured')).body), [made.mid?.transaction_id]);
    assert.deepEqual(idsOf((await list('?status=refunded')).body), []);
    assert.deepEqual(idsOf((await list('?status=captured&last4=4444')).body), [made.mid?.transaction_id], 'filters combine');
  });

  test('by the beginning of an order number (exactly: case, `_` and `%` as written), and by the shopper e-mail, which the list shows', async () => {
    const shop = await gw.newMerchant();
    const a = await pay(shop, { order_no: 'SHOP-2026-001', shopper_email: 'Ana.Lima@Example.com' });
    gw.clock.advance(1);
    const b = await pay(shop, { order_no: 'SHOP-2026-002', shopper_email: 'bruno@example.org' });
    gw.clock.advance(1);
    const c = await pay(shop, { order_no: 'shop_2026%003' });
    const viewer = await portal(shop, 'viewer');
    const found = async (q: string) => {
      const r = await viewer.get(`/portal/transactions${q}`);
      assert.equal(r.status, 200, r.body.slice(0, 500));
      return idsOf(r.body);
    };
    assert.deepEqual(await found('?order_no=SHOP-2026-00'), [b.transaction_id, a.transaction_id], 'a prefix finds both');
    assert.deepEqual(await found('?order_no=SHOP-2026-002'), [b.transaction_id], 'a whole number finds its payment');
    assert.deepEqual(await found('?order_no=shop-'), [], 'case as written');
    assert.deepEqual(await found('?order_no=SHOP_'), [], '`_` is no wildcard');
    assert.deepEqual(await found(`?order_no=${encodeURIComponent('shop_2026%')}`), [c.transaction_id], '`%` is no wildcard, and is found as written');
    assert.deepEqual(await found('?email=ana.lima@example.com'), [a.transaction_id], 'an e-mail in any case');
    assert.deepEqual(await found('?email=BRUNO'), [b.transaction_id], 'the beginning of an e-mail');
    assert.deepEqual(await found('?email=example'), [], 'the beginning, not any part');
    assert.deepEqual(await found(`?email=${encodeURIComponent('%')}`), [], '`%` is no wildcard');
    assert.deepEqual(await found('?email=ana&order_no=SHOP-2026-002'), [], 'filters combine');
    const rows = tableRows((await viewer.get('/portal/transactions')).body);
    assert.deepEqual(
      rows.map((r) => r[3]),
      ['', 'bruno@example.org', 'Ana.Lima@Example.com'],
      'the e-mail column, as the shopper gave it',
    );
  });

  test('by amount in major units: 12.34 in any currency, but not 1234 yen; 1234 finds the yen', async () => {
    assert.deepEqual(idsOf((await list('?amount=12.34')).body), [made.now?.transaction_id, made.old?.transaction_id]);
    assert.deepEqual(idsOf((await list('?amount=1234')).body), [made.yen?.transaction_id]);
    assert.deepEqual(idsOf((await list('?amount=20')).body), [made.mid?.transaction_id]);
  });

  test('by date (UTC, both ends inclusive)', async () => {
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const now = gw.clock.now;
    assert.deepEqual(idsOf((await list(`?from=${day(now)}&to=${day(now)}`)).body), [made.now?.transaction_id]);
    assert.deepEqual(idsOf((await list(`?to=${day(now - 3 * DAY_MS)}`)).body), [made.yen?.transaction_id, made.mid?.transaction_id, made.old?.transaction_id]);
    assert.deepEqual(idsOf((await list(`?from=${day(now - 3 * DAY_MS)}&to=${day(now - 3 * DAY_MS)}`)).body), [
      made.yen?.transaction_id,
      made.mid?.transaction_id,
    ]);
  });

  test('with several filters the one with the fewest rows leads (its index is read), and every lead gives the same rows', async () => {
    const db = gw.runtime.store.db;
    const lead = (q: Record<string, string>) => chooseLead(db, m.account_id, parseFilters(q));
    assert.equal(await lead({ last4: '4242', status: 'refunded' }), 'status', 'no refunded payment: the status leads');
    assert.equal(await lead({ last4: '4444', status: 'authorised' }), 'last4', 'two 4444 cards, three authorised');
    assert.equal(await lead({ status: 'captured' }), undefined, 'one filter: nothing to choose');
    assert.equal(await lead({ transaction_id: 'x', status: 'captured', last4: '4444' }), undefined, 'a unique filter: its index');
    const day = new Date(gw.clock.now - 3 * DAY_MS).toISOString().slice(0, 10);
    const f = parseFilters({ last4: '4444', status: 'captured', amount: '20', from: day });
    const ids = async (l?: Lead) => (await searchPayments(db, m.account_id, f, undefined, 50, l)).map((r) => r.transaction_id);
    for (const l of [undefined, 'status', 'last4', 'amount', 'created'] as const) assert.deepEqual(await ids(l), [made.mid?.transaction_id], String(l));
  });

  test('each lead reads its own index in order: no sort of the range on either engine', async () => {
    const store = gw.runtime.store;
    for (const [q, lead] of [
      [{ last4: '4242', status: 'captured' }, 'last4'],
      [{ last4: '4242', status: 'captured' }, 'status'],
      [{ amount: '20' }, undefined],
      [{ last4: '4242' }, undefined],
      [{}, undefined],
    ] as const) {
      const f = parseFilters(q as Record<string, string>);
      const c = searchQuery(store.db, m.account_id, f, f.amounts?.[0], undefined, 51, lead as Lead | undefined).compile();
      const plan =
        store.engine === 'sqlite'
          ? (await store.db.executeQuery(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${c.sql}`, [...c.parameters]))).rows
          : await store.transaction(async (tx) => {
              await tx.executeQuery(CompiledQuery.raw('SET LOCAL enable_seqscan = off'));
              return (await tx.executeQuery(CompiledQuery.raw(`EXPLAIN ${c.sql}`, [...c.parameters]))).rows;
            });
      assert.doesNotMatch(JSON.stringify(plan), /TEMP B-TREE|Sort/, `${JSON.stringify(q)} lead ${lead}: ${JSON.stringify(plan)}`);
    }
  });

  test('an order-number prefix reads the (account_id, order_no) index range, not the whole account', async () => {
    const store = gw.runtime.store;
    assert.equal(await orderedByCodePoint(store.db), true, 'the test databases compare by code point (SQLite BINARY, PostgreSQL C.UTF-8)');
    const f = await withOrderRange(store.db, parseFilters({ order_no: 'ORD-' }));
    const c = searchQuery(store.db, m.account_id, f, undefined, undefined, 51).compile();
    const plan = JSON.stringify(
      store.engine === 'sqlite'
        ? (await store.db.executeQuery(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${c.sql}`, [...c.parameters]))).rows
        : (await store.db.executeQuery(CompiledQuery.raw(`EXPLAIN ${c.sql}`, [...c.parameters]))).rows,
    );
    assert.match(plan, /order_no/i, plan);
    assert.match(
      plan,
      store.engine === 'sqlite' ? /SEARCH payments USING (COVERING )?INDEX \S+ \(account_id=\? AND order_no>\? AND order_no<\?\)/ : /Index.*Cond.*order_no >=/s,
      plan,
    );
    // The range's upper end: the prefix with its last code point one higher.
    assert.deepEqual(['ORD-', 'a', 'a\u{10FFFF}', '\u{D7FF}', ''].map(successor), ['ORD.', 'b', 'b', '\u{E000}', undefined]);
  });

  test('a filter value the form cannot mean is a 400 naming the field, never a 500: on the list page above the form, as sent', async () => {
    // What a person can type is refused on the list page itself, in words (no pattern quoted).
    const typed: Array<[string, RegExp]> = [
      ['?last4=12', /^Card last four: must be the four last digits/],
      ['?last4=abcd', /^Card last four:/],
      ['?from=2025-13-01', /^From: "2025-13-01" is not a date/],
      ['?from=2025-02-30', /^From:/],
      ['?from=2025-03-02&to=2025-03-01', /^To: is before from/],
      ['?status=paid', /^Status: must be one of/],
      ['?amount=12,34', /^Amount: must be a decimal amount/],
      ['?amount=1.23456', /^Amount:/],
      ['?email=a%20b', /^Shopper e-mail:/],
    ];
    for (const [q, said] of typed) {
      const r = await agent.get(`/portal/transactions${q}`);
      assert.equal(r.status, 400, `${q}: ${r.body.slice(0, 300)}`);
      const text = /<p class="error" id="filter-error" role="alert">([^<]*)</.exec(r.body)?.[1] ?? '';
      assert.match(text.replace(/&quot;/g, '"'), said, q);
      assert.doesNotMatch(text, /\^|\\d|\$/, 'no regular expression');
      assert.match(r.body, /<form method="get" action="\/portal\/transactions" id="filters"/, 'the form is on the page');
      assert.equal(idsOf(r.body).length, 0, 'no rows for a refused filter');
      const csv = await agent.get(`/portal/transactions.csv${q}`);
      assert.equal(csv.status, 400, `csv ${q}`);
      assert.match((/<p id="message">([^<]*)</.exec(csv.body)?.[1] ?? '').replace(/&quot;/g, '"'), new RegExp(said.source.replace('^', '')), `csv ${q}`);
    }
    // What only a crafted URL can send is refused before the handler, still naming the field.
    const crafted: Array<[string, RegExp]> = [
      [`?order_no=${'x'.repeat(65)}`, /order_no/],
      ['?last4[a]=1', /last4/],
      ['?status=captured&status=refunded', /status/],
      ['?order_no=A%00B', /order_no/],
      ['?transaction_id=%0A', /transaction_id/],
    ];
    for (const [q, field] of crafted) {
      for (const path of ['/portal/transactions', '/portal/transactions.csv']) {
        const r = await agent.get(`${path}${q}`);
        assert.equal(r.status, 400, `${path}${q}: ${r.body.slice(0, 300)}`);
        assert.match(/<p id="message">([^<]*)</.exec(r.body)?.[1] ?? '', field, `${path}${q}`);
        assert.doesNotMatch(r.body, /must match pattern|\^\[/, 'no regular expression quoted');
      }
    }
    // The page cursor of the list (the CSV has none: it is every matching row).
    const r = await agent.get('/portal/transactions?after=NOPE');
    assert.equal(r.status, 400);
    assert.match(r.body, /after/);
  });

  test('another account: none of these payments is listed, and their detail pages are 404', async () => {
    const other = await gw.newMerchant();
    const theirs = await pay(other);
    const stranger = await portal(other, 'owner');
    const r = await stranger.get('/portal/transactions');
    assert.deepEqual(idsOf(r.body), [theirs.transaction_id]);
    assert.equal((await stranger.get(`/portal/transactions?transaction_id=${made.old?.transaction_id}`)).body.includes('data-transaction-id'), false);
    for (const x of Object.values(made)) assert.equal((await stranger.get(`/portal/transactions/${x.transaction_id}`)).status, 404);
    assert.equal((await agent.get(`/portal/transactions/${theirs.transaction_id}`)).status, 404, 'and the other way round');
    assert.equal((await agent.get('/portal/transactions/NO-SUCH-ID')).status, 404);
  });
});

describe('pages and the CSV', () => {
  let m: CreatedMerchant;
  let agent: PortalAgent;
  const ids: string[] = [];

  before(async () => {
    m = await gw.newMerchant();
    // 57 payments, several in the same millisecond: the keyset's tie-break on transaction_id is tested too.
    for (let i = 0; i < 57; i++) {
      if (i % 5 === 0) gw.clock.advance(1000);
      ids.push(
        (await pay(m, { amount: `${10 + (i % 3)}.00`, card: i % 2 ? VISA : MASTERCARD, order_no: i === 3 ? '=HYPERLINK("x")' : `PG-${i}` })).transaction_id,
      );
    }
    agent = await portal(m, 'viewer');
  });

  test('50 a page newest first, next-page to the rest, first-page back; each payment exactly once', async () => {
    const first = await agent.get('/portal/transactions');
    assert.equal(idsOf(first.body).length, 50);
    assert.equal(href(first.body, 'first-page'), '');
    const next = href(first.body, 'next-page');
    assert.match(next, /after=/);
    const second = await agent.get(next);
    assert.equal(idsOf(second.body).length, 7);
    assert.equal(href(second.body, 'next-page'), '');
    assert.equal(href(second.body, 'first-page'), '/portal/transactions');
    const seen = [...idsOf(first.body), ...idsOf(second.body)];
    assert.equal(new Set(seen).size, 57);
    const created = new Map(
      (await gw.runtime.store.db.selectFrom('payments').select(['transaction_id', 'created_at']).where('account_id', '=', m.account_id).execute()).map((r) => [
        r.transaction_id,
        Number(r.created_at),
      ]),
    );
    const expected = [...ids].sort((a, b) => (created.get(b) ?? 0) - (created.get(a) ?? 0) || (a < b ? 1 : a > b ? -1 : 0));
    assert.deepEqual(seen, expected);
  });

  test('the CSV holds exactly the rows and columns of the list, all pages of it (filtered or not); a formula-looking cell is quoted for spreadsheets', async () => {
    for (const q of ['', '?last4=4242', '?amount=11', '?amount=11&last4=4444']) {
      const { rows, pages } = await wholeList(agent, `/portal/transactions${q}`);
      if (q === '') assert.equal(pages, 2);
      const csv = await agent.get(`/portal/transactions.csv${q}`);
      assert.equal(csv.status, 200);
      assert.match(csv.headers['content-type'] ?? '', /^text\/csv/);
      assert.match(csv.headers['content-disposition'] ?? '', /^attachment; filename="transactions-.*\.csv"$/);
      const [header, ...records] = parseCsv(csv.body);
      // The first eight as the export always had them; the new ones after.
      assert.deepEqual(header, [
        'Created (UTC)',
        'Transaction ID',
        'Order no',
        'Amount',
        'Currency',
        'Status',
        'Card',
        'Method',
        'Shopper e-mail',
        'Captured',
        'Refunded',
        'Fee',
        'Result',
      ]);
      const unquoted = records.map((r) => r.map((cell) => cell.replace(/^'(?=[=+\-@])/, '')));
      // The list shows the same values, the time to the minute and the status in words.
      const shown = unquoted.map(([created, id, order, amount, currency, status, card, method, email]) => [
        (created ?? '').slice(0, 16).replace('T', ' '),
        id,
        order,
        email,
        `${amount} ${currency}`,
        (status ?? '').replace(/_/g, ' '),
        card,
        method,
      ]);
      assert.deepEqual(shown, rows, q);
      assert.ok(rows.length > 0);
    }
    const all = (await agent.get('/portal/transactions.csv')).body;
    assert.ok(all.includes(`"'=HYPERLINK(""x"")"`), 'the formula is written as text');
  });

  test('the CSV has the shopper e-mail, the captured and refunded amounts, the fee and the result of each payment', async () => {
    const shop = await gw.newMerchant();
    await setPricing(gw.runtime.store, { account_id: shop.account_id, currency: 'USD', percent: '2.9', fixed: '0.30' }, gw.clock.now);
    const x = await pay(shop, { amount: '100.00', shopper_email: '=cmd@example.com' });
    gw.clock.advance(1);
    const declined = await pay(shop, { amount: '5.00', card: '4000000000000002' });
    const operator = await portal(shop, 'operator');
    const path = `/portal/transactions/${x.transaction_id}`;
    assert.equal((await confirmed(operator, path, `${path}/refund`, { amount: '12.50' })).status, 303);
    const [header, ...records] = parseCsv((await operator.get('/portal/transactions.csv')).body);
    const byId = new Map(records.map((r) => [r[1], Object.fromEntries((header ?? []).map((h, i) => [h, r[i]]))]));
    const paid = byId.get(x.transaction_id) ?? {};
    assert.equal(paid['Shopper e-mail'], "'=cmd@example.com", 'a formula-looking e-mail is quoted for spreadsheets');
    assert.deepEqual(
      [paid.Amount, paid.Captured, paid.Refunded, paid.Fee, paid.Status, paid.Result],
      ['100.00', '100.00', '12.50', '3.20', 'partially_refunded', '0000 Success'],
      '2.9% of 100.00 plus 0.30',
    );
    const no = byId.get(declined.transaction_id) ?? {};
    assert.deepEqual([no.Captured, no.Refunded, no.Fee, no.Status], ['0.00', '0.00', '0.00', 'declined']);
    assert.match(no.Result ?? '', /^1\d{3} /, 'the decline code with its text');
  });

  test('no full card number on any page or in the CSV', async () => {
    const detail = await agent.get(`/portal/transactions/${ids[0]}`);
    for (const body of [(await agent.get('/portal/transactions')).body, detail.body, (await agent.get('/portal/transactions.csv')).body]) {
      assert.equal(body.includes(VISA), false);
      assert.equal(body.includes(MASTERCARD), false);
      assert.equal(/\d{13,19}/.test(body.replace(/[0-9A-Z]{26}/g, '')), false, 'no long digit run outside the ids');
    }
    assert.match(detail.body, /<dd id="card">555555\*{6}4444<\/dd>/);
  });
});

describe('the detail page and its actions', () => {
  let manual: CreatedMerchant;
  let auto: CreatedMerchant;
  let operator: PortalAgent;
  let autoOperator: PortalAgent;

  before(async () => {
    manual = await gw.newMerchant({ capture_method: 'manual' });
    auto = await gw.newMerchant();
    operator = await portal(manual, 'operator');
    autoOperator = await portal(auto, 'admin');
  });

  const detail = (agent: PortalAgent, id: string) => agent.get(`/portal/transactions/${id}`);
  const audits = (target: string) => gw.runtime.store.db.selectFrom('portal_audit').selectAll().where('target', '=', target).orderBy('audit_id').execute();

  test('the sections are there, and an authorised payment offers capture and cancel (not refund)', async () => {
    const x = await pay(manual, { amount: '30.00' });
    const r = await detail(operator, x.transaction_id);
    assert.equal(r.status, 200);
    for (const id of ['summary', 'timeline', 'risk', 'threeds', 'refunds', 'ledger', 'notifications'])
      assert.match(r.body, new RegExp(`<section id="${id}"`), id);
    assert.match(r.body, /<dd id="status">authorised<\/dd>/);
    assert.match(r.body, /id="capture"/);
    assert.match(r.body, /id="cancel"/);
    assert.doesNotMatch(r.body, /id="refund"/);
    assert.match(r.body, /<input[^>]*name="amount"[^>]*value="30.00"/, 'capture is prefilled with the capturable amount');
    assert.match(r.body, /authorise_hold|customer_holds/, 'the ledger shows the hold');
  });

  test('a partial capture, then two partial refunds, then a refund over what is left is refused and changes nothing', async () => {
    const x = await pay(manual, { amount: '30.00' });
    const path = `/portal/transactions/${x.transaction_id}`;
    const cap = await operator.submit(path, `${path}/capture`, { amount: '25' });
    assert.equal(cap.status, 303, cap.body);
    assert.equal(cap.location, `${path}?done=captured`);
    let row = await payment(x.transaction_id);
    assert.deepEqual([row.status, Number(row.captured_minor), Number(row.authorised_minor)], ['captured', 2500, 0]);
    const after = await operator.get(cap.location);
    assert.match(after.body, /id="notice">Captured\./);
    assert.doesNotMatch(after.body, /id="capture"/);

    for (const amount of ['10.00', '5.50']) {
      const r = await confirmed(operator, path, `${path}/refund`, { amount });
      assert.equal(r.status, 303, r.body);
      assert.equal(r.location, `${path}?done=refunded`);
    }
    row = await payment(x.transaction_id);
    assert.deepEqual([row.status, Number(row.refunded_minor)], ['partially_refunded', 1550]);
    assert.deepEqual(
      (await refundsOf(x.transaction_id)).map((f) => Number(f.refund_amount_minor)),
      [1000, 550],
    );

    // Over what is left: the detail page again, the error under the amount, the amount as typed; no confirmation asked.
    const over = await operator.submit(path, `${path}/refund`, { amount: '9.51', reason: 'broken' });
    assert.equal(over.status, 422, over.body.slice(0, 500));
    assert.match(over.body, /<p class="error" id="f-refund-amount-error">[^<]*9\.50 left to refund/);
    assert.match(over.body, /<input [^>]*id="f-refund-amount"[^>]*value="9.51"/);
    assert.match(over.body, /<input [^>]*id="f-refund-reason"[^>]*value="broken"/);
    assert.doesNotMatch(over.body, /id="confirm-question"/);
    // The same when the domain refuses at the confirmed step (the amount left changed in between).
    const late = await operator.request('POST', `${path}/refund`, {
      ...hiddenOf((await operator.get(path)).body, `${path}/refund`),
      amount: '9.51',
      confirm: 'yes',
    });
    assert.equal(late.status, 422, late.body.slice(0, 500));
    assert.match(late.body, /<p class="error" id="f-refund-amount-error">[^<]*9\.50/);
    row = await payment(x.transaction_id);
    assert.deepEqual([row.status, Number(row.refunded_minor)], ['partially_refunded', 1550]);
    assert.equal((await refundsOf(x.transaction_id)).length, 2);

    const page = await detail(operator, x.transaction_id);
    assert.match(page.body, /<dd id="refunded">15\.50 USD<\/dd>/);
    assert.match(page.body, /<dd id="status">partially refunded<\/dd>/, 'the status in words');
    assert.match(page.body, /<dd id="result-code">0000 Success<\/dd>/, 'the result code with its text');
    assert.match(page.body, /<dd id="created">\d{4}-\d{2}-\d{2} \d{2}:\d{2}<\/dd>/, 'the time as YYYY-MM-DD hh:mm');
    assert.match(page.body, new RegExp(`data-refund-id="${x.transaction_id}-01"`));
    assert.match(page.body, new RegExp(`data-refund-id="${x.transaction_id}-02"`));
    assert.match(page.body, /refund\.succeeded/);
    const log = await audits(x.transaction_id);
    assert.deepEqual(
      // One clock tick: the lines are compared as a set.
      log.map((a) => `${a.action}:${a.outcome}:${a.detail.split(':')[0]}`).sort(),
      [
        'payment.capture:ok:amount 25.00 USD',
        'payment.refund:ok:amount 10.00 USD',
        'payment.refund:ok:amount 5.50 USD',
        'payment.refund:refused:amount 9.51 USD',
      ],
    );
  });

  test('a capture over the authorised amount, or of no amount, is refused (422) on the detail page, under the amount as typed; nothing changes', async () => {
    const x = await pay(manual, { amount: '30.00' });
    const path = `/portal/transactions/${x.transaction_id}`;
    const r = await operator.submit(path, `${path}/capture`, { amount: '30.01' });
    assert.equal(r.status, 422);
    assert.match(r.body, /<section id="summary"/, 'the detail page, not a page of its own');
    assert.match(r.body, /<input [^>]*id="f-capture-amount"[^>]*value="30.01"[^>]*aria-invalid="true"/);
    assert.match(r.body, /<p class="error" id="f-capture-amount-error">[^<]*30\.01/);
    const junk = await operator.submit(path, `${path}/capture`, { amount: 'abc' });
    assert.equal(junk.status, 422);
    assert.match(junk.body, /<p class="error" id="f-capture-amount-error">amount: &quot;abc&quot; is not an amount in USD/);
    const row = await payment(x.transaction_id);
    assert.deepEqual([row.status, Number(row.captured_minor), Number(row.authorised_minor)], ['authorised', 0, 3000]);
  });

  test('cancel an authorised payment', async () => {
    const x = await pay(manual);
    const path = `/portal/transactions/${x.transaction_id}`;
    // The button asks first and changes nothing until confirmed.
    const asked = await operator.submit(path, `${path}/cancel`);
    assert.equal(asked.status, 200);
    assert.match(asked.body, /<p id="confirm-question">Cancel the payment of 10\.00 USD, order /);
    assert.match(asked.body, new RegExp(`<a class="button" href="${path}" id="back">`));
    assert.equal((await payment(x.transaction_id)).status, 'authorised');
    const r = await operator.request('POST', `${path}/cancel`, formFields(asked.body, `${path}/cancel`));
    assert.equal(r.status, 303, r.body);
    assert.equal((await payment(x.transaction_id)).status, 'cancelled');
    const page = await detail(operator, x.transaction_id);
    assert.match(page.body, /<dd id="status">cancelled<\/dd>/);
    assert.doesNotMatch(page.body, /id="cancel"|id="capture"|id="refund"/);
    // Posted anyway with a fresh form token: the domain refuses (409), nothing changes.
    const csrf = hiddenOf(page.body, '/portal/signout').csrf ?? '';
    const again = await operator.request('POST', `${path}/cancel`, { csrf, form_token: 'cancel-again' });
    assert.equal(again.status, 409, again.body.slice(0, 400));
    assert.match(again.body, /already cancelled|cannot cancel/);
  });

  test('the same form submitted twice refunds once', async () => {
    const x = await pay(auto, { amount: '40.00' });
    const path = `/portal/transactions/${x.transaction_id}`;
    const shown = await autoOperator.get(path);
    const fields = { ...hiddenOf(shown.body, `${path}/refund`), amount: '7.00', confirm: 'yes' };
    const [a, b] = [await autoOperator.request('POST', `${path}/refund`, fields), await autoOperator.request('POST', `${path}/refund`, fields)];
    assert.deepEqual([a.status, b.status], [303, 303]);
    assert.equal(b.location, a.location);
    assert.deepEqual(
      (await refundsOf(x.transaction_id)).map((f) => Number(f.refund_amount_minor)),
      [700],
    );
    assert.equal(Number((await payment(x.transaction_id)).refunded_minor), 700);
    assert.equal((await audits(x.transaction_id)).filter((l) => l.action === 'payment.refund').length, 1);
    // The same token with another amount is not a double submission but a reused form: 409, nothing more refunded.
    const reused = await autoOperator.request('POST', `${path}/refund`, { ...fields, amount: '8.00' });
    assert.equal(reused.status, 409, reused.body.slice(0, 300));
    assert.equal(Number((await payment(x.transaction_id)).refunded_minor), 700);
  });

  test('a viewer sees no action forms, and a refund it posts anyway is 403, changes nothing and is audited as refused', async () => {
    const x = await pay(auto, { amount: '40.00' });
    const path = `/portal/transactions/${x.transaction_id}`;
    const viewer = await portal(auto, 'viewer');
    const page = await detail(viewer, x.transaction_id);
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.body, /id="refund"|id="capture"|id="cancel"|id="review-accept"|\/replay"/);
    // The form of an operator's page, posted with the viewer's own session and CSRF token.
    const csrf = hiddenOf((await viewer.get('/portal/transactions')).body, '/portal/signout').csrf ?? '';
    const r = await viewer.request('POST', `${path}/refund`, { csrf, form_token: 'viewer-try-1', amount: '40.00' });
    assert.equal(r.status, 403, r.body.slice(0, 400));
    assert.equal(Number((await payment(x.transaction_id)).refunded_minor), 0);
    assert.equal((await refundsOf(x.transaction_id)).length, 0);
    const log = await audits(x.transaction_id);
    assert.deepEqual(
      log.map((a) => [a.action, a.outcome, a.detail]),
      [['payment.refund', 'refused', 'role viewer']],
    );
  });

  test('accept a payment held for review; the hold is gone from the page', async () => {
    // A merchant whose review band a disposable e-mail address alone (score 30) lands in.
    const held = await gw.newMerchant();
    await setThresholds(gw.runtime.store, held.account_id, { review: 25, reject: 90 }, gw.clock.now);
    const admin = await portal(held, 'admin');
    {
      const x = await pay(held, { shopper_email: 'r@mailinator.com', notify_url: 'http://127.0.0.1:9/hook' });
      assert.equal((await payment(x.transaction_id)).status, 'review');
      const path = `/portal/transactions/${x.transaction_id}`;
      const page = await detail(admin, x.transaction_id);
      assert.match(page.body, /id="review-accept"/);
      assert.match(page.body, /id="review-reject"/);
      assert.match(page.body, /<dd id="risk-action">REVIEW<\/dd>/);
      const r = await admin.submit(path, `${path}/review`, { decision: 'accept' });
      assert.equal(r.status, 303, r.body);
      assert.equal(r.location, `${path}?done=review_accepted`);
      const row = await payment(x.transaction_id);
      assert.deepEqual([row.status, Number(row.captured_minor)], ['captured', 1000]);
      const review = await gw.runtime.store.db.selectFrom('risk_reviews').selectAll().where('transaction_id', '=', x.transaction_id).executeTakeFirstOrThrow();
      assert.equal(review.decision, 'ACCEPT');
      const after = await detail(admin, x.transaction_id);
      assert.doesNotMatch(after.body, /id="review-accept"/);
      assert.match(after.body, /payment\.held[\s\S]*payment\.succeeded/, 'the timeline, in order');

      // Its notifications (to a closed port) can be sent again.
      const events = await gw.runtime.store.db.selectFrom('events').selectAll().where('object_id', '=', x.transaction_id).execute();
      const event = events.find((e) => e.event_type === 'payment.held');
      assert.ok(event);
      await gw.runtime.store.transaction((tx) =>
        tx.updateTable('events').set({ status: 'failed', attempts: 5 }).where('event_id', '=', event.event_id).execute(),
      );
      const replay = await admin.submit(path, `${path}/notifications/${event.event_id}/replay`);
      assert.equal(replay.status, 303, replay.body);
      assert.equal(replay.location, `${path}?done=notification_replayed`);
      const again = await gw.runtime.store.db.selectFrom('events').selectAll().where('event_id', '=', event.event_id).executeTakeFirstOrThrow();
      assert.deepEqual([again.status, again.attempts], ['pending', 0]);
    }
  });

  test("another merchant's transaction and event URLs are 404, for pages and actions alike", async () => {
    const x = await pay(manual, { amount: '30.00' });
    const other = await gw.newMerchant();
    const stranger = await portal(other, 'owner');
    const path = `/portal/transactions/${x.transaction_id}`;
    assert.equal((await stranger.get(path)).status, 404);
    const csrf = hiddenOf((await stranger.get('/portal/transactions')).body, '/portal/signout').csrf ?? '';
    for (const action of ['capture', 'cancel', 'refund']) {
      const fields = { csrf, form_token: `s-${action}`, ...(action === 'cancel' ? {} : { amount: '1.00' }) };
      assert.equal((await stranger.request('POST', `${path}/${action}`, fields)).status, 404, action);
    }
    const event = await gw.runtime.store.db.selectFrom('events').select('event_id').where('object_id', '=', x.transaction_id).executeTakeFirst();
    if (event) assert.equal((await stranger.request('POST', `${path}/notifications/${event.event_id}/replay`, { csrf, form_token: 's-r' })).status, 404);
    assert.equal((await payment(x.transaction_id)).status, 'authorised');
  });
});

function hiddenOf(page: string, action: string): Record<string, string> {
  const forms = page.match(/<form\b[^>]*>[\s\S]*?<\/form>/g) ?? [];
  const form = forms.find((f) => (/action="([^"]*)"/.exec(f)?.[1] ?? '') === action) ?? '';
  const out: Record<string, string> = {};
  for (const m of form.matchAll(/<input\b[^>]*type="hidden"[^>]*>/g)) {
    const name = /name="([^"]*)"/.exec(m[0])?.[1];
    if (name) out[name] = /value="([^"]*)"/.exec(m[0])?.[1] ?? '';
  }
  return out;
}

/** RFC 4180 as csv-stringify writes it (quoted fields, doubled quotes, CRLF records). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      record.push(cell);
      cell = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      record.push(cell);
      records.push(record);
      record = [];
      cell = '';
      i++;
    } else cell += ch;
  }
  if (cell !== '' || record.length) records.push([...record, cell]);
  return records;
}

describe('a refund refused where no refund form is shown', () => {
  test('the reason is shown on the page all the same (422 with an alert), and nothing is refunded', async () => {
    // A payment authorised and not captured has nothing to refund: its page shows no refund
    // form, and a refund posted anyway (a stale page, a crafted form) was answered with the
    // page and no word of why (CI's fuzz, seed 494275048).
    const m = await gw.newMerchant({ name: 'manual capture', capture_method: 'manual' });
    const { transaction_id } = await pay(m);
    const agent = await portal(m, 'admin');
    const page = `/portal/transactions/${transaction_id}`;
    const shown = await agent.request('GET', page);
    assert.doesNotMatch(shown.body, /id="refund-form"/);
    const secrets = formFields(shown.body, `${page}/capture`);
    const r = await agent.request('POST', `${page}/refund`, { csrf: secrets.csrf ?? '', form_token: secrets.form_token ?? '', amount: '-1', reason: 'x' });
    assert.equal(r.status, 422, r.body.slice(0, 300));
    assert.match(r.body, /<p class="error" id="refund-error" role="alert">amount: [^<]+<\/p>/);
    assert.deepEqual(await refundsOf(transaction_id), []);
  });
});
