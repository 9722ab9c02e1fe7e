// Fuzz of the shopper-facing pages of the hosted checkout and the APM issuer (docs/contract.md §14,
// §15; issue 10 item 6): the loading page's form (POST /v1/checkout/:id), the payment page
// and its forms (GET and POST /pay/:id, /pay/:id/apm, /pay/:id/cancel, GET /pay/:id/return)
// and the sandbox issuer's page (GET and POST /issuer/:id). These are not signed: the ids and
// form tokens are the credentials, so every generator mixes real sessions and pages (with
// their own token, another one's, a hostile one or none) with near-miss and hostile ids. A
// real id with its own token and valid fields pays, starts a method or cancels: accepted, a
// change. The pool of real ids grows during the run: sessions the fuzzed POST /v1/checkout
// opened and issuer pages the fuzzed APM form started are added (see `observe`).
import fc from 'fast-check';
import type { TollgateClient } from '../../client/index.js';
import type { CreatedMerchant } from '../../merchants/service.js';
import type { TestGateway } from '../harness.js';
import { type Case, CONTENT_TYPES, encodeLoose, hostileValue, mutate, mutation, pageIdArb, RAW, setField } from './inputs.js';

/** An answer as the fuzz reads it. */
export interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/** What fuzz.ts lends this module: its checked case runner and its property wrapper. */
export interface Fuzzer {
  /** One counted case through every invariant (no 5xx, refusals write nothing, CSP, no card echo). */
  run(label: string, c: Case): Promise<Answer>;
  /** A request that only reads what a case opened (a session's page, for its form token): it must write nothing. */
  quiet(c: Case): Promise<Answer>;
  property(label: string, what: string, prop: fc.IAsyncProperty<any>, numRuns: number): Promise<void>;
  /** Optional hostile request headers (idempotency key, request id). */
  headers: fc.Arbitrary<Record<string, string> | undefined>;
}

/** The routes this module fuzzes (each a counted endpoint label). */
export const SHOPPER_ROUTES = [
  'POST /v1/checkout/:id',
  'GET /pay/:id',
  'POST /pay/:id',
  'POST /pay/:id/apm',
  'POST /pay/:id/cancel',
  'GET /pay/:id/return',
  'GET /issuer/:id',
  'POST /issuer/:id',
] as const;

export interface Runs {
  /** Generated form posts (or ids, for a GET) per route. */
  forms: number;
  /** Raw payloads per POST route, at a real id. */
  raw: number;
}

interface SessionRef {
  id: string;
  signInfo: string;
  /** The payment page's form token ('' when the page could not be read: the session had ended). */
  form_token: string;
}

interface IssuerRef {
  id: string;
  form_token: string;
}

/** Real ids for the generators; grows during the run up to the caps. */
export class ShopperPool {
  sessions: SessionRef[] = [];
  issuer: IssuerRef[] = [];
  harvestedSessions = 0;
  harvestedPages = 0;
}

/** The pool never grows past these: bounded work however many fuzzed requests are accepted. */
const MAX_HARVESTED_SESSIONS = 150;
const MAX_HARVESTED_PAGES = 100;

export const CPF = '529.982.247-25';
const CNPJ = '11.222.333/0001-81';
const YEAR = String(new Date().getUTCFullYear() + 2);
const SESSION_ID = /action="\/v1\/checkout\/(cs_[A-Za-z0-9_-]{32})"/;
const ISSUER_PATH = /\/issuer\/([A-Za-z0-9_-]{32})$/;
const tokenIn = (html: string) => /name="form_token" value="([^"]*)"/.exec(html)?.[1] ?? '';
const signInfoIn = (html: string) => /name="signInfo" value="([^"]*)"/.exec(html)?.[1] ?? '';

const formCase = (path: string, fields: Record<string, string>): Case => ({
  method: 'POST',
  path,
  payload: new URLSearchParams(fields).toString(),
  contentType: 'application/x-www-form-urlencoded',
});

/** Where each method's fields are valid: the session's currency and country. */
const PLACES = [
  { currency: 'USD', amount: '42.00', billing_country: 'US' },
  { currency: 'BRL', amount: '120.50', billing_country: 'BR' },
  { currency: 'EUR', amount: '25.00', billing_country: 'NL' },
  { currency: 'JPY', amount: '4200', billing_country: 'JP' },
] as const;

/** The payer fields each method needs, valid (the generators mutate them). */
const PERSON: Record<string, Record<string, string>> = {
  pix: { document_number: CPF, email: 'ana@example.com' },
  boleto: {
    document_number: CNPJ,
    address_street: 'Avenida Paulista',
    address_number: '1000',
    address_postal_code: '01310-100',
    address_city: 'São Paulo',
    address_state: 'SP',
    address_country: 'BR',
  },
  ideal: {},
};

/**
 * Opens sessions and issuer pages before the checksum is taken (their writes are setup):
 * sessions in four currencies and countries through the client's signed checkout form and
 * the loading page's form, a few of them already paid, declined, in a challenge, cancelled
 * or with a method started (so result pages and /return are reached with real ids), and APM
 * payments through POST /v1/authorise with their issuer pages.
 */
export async function seedShopper(gw: TestGateway, m: CreatedMerchant): Promise<ShopperPool> {
  const pool = new ShopperPool();
  const client = gw.client(m);
  const inject = async (c: Case): Promise<Answer> => {
    const r = await gw.app.inject({
      method: c.method,
      url: c.path,
      ...(c.payload === undefined ? {} : { payload: c.payload }),
      headers: c.contentType ? { 'content-type': c.contentType } : {},
      remoteAddress: '198.51.100.7',
    });
    return { statusCode: r.statusCode, headers: r.headers, body: r.body };
  };
  const expect = (r: Answer, status: number, what: string) => {
    if (r.statusCode !== status) throw new Error(`seeding: ${what} answered ${r.statusCode}, expected ${status}: ${r.body.slice(0, 300)}`);
  };
  const counts = [16, 10, 8, 2]; // USD, BRL, EUR, JPY
  let n = 0;
  for (const [i, place] of PLACES.entries()) {
    for (let k = 0; k < (counts[i] as number); k++) {
      const form = client.checkoutForm({
        order_no: `SEED-CO-${n++}`,
        ...place,
        return_url: 'https://shop.example/done?cart=3',
        cancel_url: 'https://shop.example/cart',
        shopper_email: 'ana@example.com',
        first_name: 'Ana',
        last_name: 'Silva',
        ...(k % 3 === 0 ? { default_lang: ['pt-BR', 'de', 'fr', 'es'][k % 4] as string } : {}),
      });
      const loading = await inject(formCase('/v1/checkout', Object.fromEntries(form.fields)));
      expect(loading, 200, 'POST /v1/checkout');
      const id = SESSION_ID.exec(loading.body)?.[1];
      const signInfo = signInfoIn(loading.body);
      if (!id || !signInfo) throw new Error(`seeding: no session id or signInfo on the loading page: ${loading.body.slice(0, 300)}`);
      expect(await inject(formCase(`/v1/checkout/${id}`, { signInfo })), 303, 'the loading page’s form');
      const page = await inject({ method: 'GET', path: `/pay/${id}`, contentType: '' });
      expect(page, 200, 'GET /pay/:id');
      pool.sessions.push({ id, signInfo, form_token: tokenIn(page.body) });
    }
  }
  // Sessions are in PLACES order: the first counts[0] are USD, then BRL, then EUR.
  const base = { BRL: counts[0] as number, EUR: (counts[0] as number) + (counts[1] as number) };
  const usd = (k: number) => pool.sessions[k] as SessionRef;
  const card = (s: SessionRef, number: string) =>
    inject(
      formCase(`/pay/${s.id}`, {
        form_token: s.form_token,
        card_number: number,
        expiry_month: '12',
        expiry_year: YEAR,
        security_code: '123',
        holder: 'Ana Silva',
      }),
    );
  // Ended sessions and one in a challenge: the result page, the return and "paid once" are reached with real ids.
  expect(await card(usd(0), '4242 4242 4242 4242'), 303, 'a card payment');
  expect(await card(usd(1), '4242424242424242'), 303, 'a card payment');
  expect(await card(usd(2), '4000000000000002'), 303, 'a declined card');
  expect(await card(usd(3), '4000000000003220'), 303, 'a 3-D Secure card');
  for (const s of [usd(4), usd(5)]) expect(await inject(formCase(`/pay/${s.id}/cancel`, { form_token: s.form_token })), 303, 'cancel');
  // Methods started from the payment page: issuer pages that return to the session.
  const fromPage = async (s: SessionRef, method: string, fields: Record<string, string>) => {
    const r = await inject(formCase(`/pay/${s.id}/apm`, { form_token: s.form_token, payment_method: method, ...fields }));
    expect(r, 303, `POST /pay/:id/apm (${method})`);
    await addIssuerPage(pool, String(r.headers.location ?? ''), inject);
  };
  const bracket = (person: Record<string, string>) => Object.fromEntries(Object.entries(person).map(([k, v]) => [`person[${k}]`, v]));
  for (let k = 0; k < 3; k++) await fromPage(pool.sessions[base.BRL + k] as SessionRef, 'pix', bracket(PERSON.pix as Record<string, string>));
  for (let k = 3; k < 5; k++) await fromPage(pool.sessions[base.BRL + k] as SessionRef, 'boleto', bracket(PERSON.boleto as Record<string, string>));
  for (let k = 0; k < 2; k++) await fromPage(pool.sessions[base.EUR + k] as SessionRef, 'ideal', { bank_code: 'INGBNL2A' });
  // APM payments of the merchant's own (POST /v1/authorise with payment_method).
  const direct: Array<[string, Record<string, unknown>]> = [
    // Single use: enough that valid answers do not use them all up early in the run.
    ...Array.from({ length: 12 }, () => ['pix', { ...PLACES[1], person: PERSON.pix }] as [string, Record<string, unknown>]),
    ...Array.from({ length: 8 }, () => ['boleto', { ...PLACES[1], person: PERSON.boleto }] as [string, Record<string, unknown>]),
    ...Array.from({ length: 8 }, () => ['ideal', { ...PLACES[2], bank_code: 'ABNANL2A' }] as [string, Record<string, unknown>]),
  ];
  for (const [payment_method, fields] of direct) {
    const x = await client.authoriseApm({
      order_no: `SEED-APM-${n++}`,
      payment_method,
      return_url: 'https://shop.example/back?cart=9',
      ...fields,
    } as never);
    if (!x.issuer_url) throw new Error(`seeding: ${payment_method} answered no issuer_url (${x.result_info})`);
    await addIssuerPage(pool, x.issuer_url, inject);
  }
  return pool;
}

/**
 * For the part over a real socket: the shopper page routes at a real session (opened by the
 * client's signed form, as a browser posts it) and a real issuer page (a Pix payment), so
 * hostile bodies there reach the form parsing behind the id checks.
 */
export async function socketPagePaths(base_url: string, client: TollgateClient): Promise<Array<[label: string, path: string]>> {
  const request = client.checkoutForm({ order_no: 'FUZZ-SOCKET-CO', ...PLACES[1], return_url: 'https://shop.example/done' });
  const loading = await fetch(`${base_url}/v1/checkout`, {
    method: 'POST',
    body: new URLSearchParams(request.fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  const id = SESSION_ID.exec(await loading.text())?.[1];
  if (!id) throw new Error(`no session over the socket: POST /v1/checkout answered ${loading.status}`);
  const apm = await client.authoriseApm({
    order_no: 'FUZZ-SOCKET-APM',
    ...PLACES[1],
    payment_method: 'pix',
    person: PERSON.pix,
    return_url: 'https://shop.example/back',
  } as never);
  const issuer = ISSUER_PATH.exec(apm.issuer_url)?.[1];
  if (!issuer) throw new Error(`no issuer page over the socket (${apm.result_info})`);
  return [
    ['POST /v1/checkout/:id', `/v1/checkout/${id}`],
    ['POST /pay/:id', `/pay/${id}`],
    ['POST /pay/:id/apm', `/pay/${id}/apm`],
    ['POST /pay/:id/cancel', `/pay/${id}/cancel`],
    ['POST /issuer/:id', `/issuer/${issuer}`],
  ];
}

/** Reads an issuer page's form token (GET) and adds the page to the pool. */
async function addIssuerPage(pool: ShopperPool, issuer_url: string, get: (c: Case) => Promise<Answer>): Promise<boolean> {
  const id = ISSUER_PATH.exec(issuer_url)?.[1];
  if (!id || pool.issuer.some((p) => p.id === id)) return false;
  const page = await get({ method: 'GET', path: `/issuer/${id}`, contentType: '' });
  if (page.statusCode !== 200) throw new Error(`the issuer page of a started method answered ${page.statusCode}: ${page.body.slice(0, 200)}`);
  pool.issuer.push({ id, form_token: tokenIn(page.body) });
  return true;
}

/**
 * Called by fuzz.ts after every checked case: a session the fuzzed POST /v1/checkout
 * opened, or an issuer page the fuzzed APM form started, joins the pool (its page read with
 * a quiet GET, which must write nothing).
 */
export function observer(pool: ShopperPool, fz: Pick<Fuzzer, 'quiet'>): (c: Case, a: Answer) => Promise<void> {
  return async (c, a) => {
    if (c.path === '/v1/checkout' && a.statusCode === 200 && pool.harvestedSessions < MAX_HARVESTED_SESSIONS) {
      const id = SESSION_ID.exec(a.body)?.[1];
      if (!id || pool.sessions.some((s) => s.id === id)) return;
      const page = await fz.quiet({ method: 'GET', path: `/pay/${id}`, contentType: '' });
      pool.sessions.push({ id, signInfo: signInfoIn(a.body), form_token: tokenIn(page.body) });
      pool.harvestedSessions++;
    } else if (c.path.endsWith('/apm') && a.statusCode === 303 && pool.harvestedPages < MAX_HARVESTED_PAGES) {
      if (await addIssuerPage(pool, String(a.headers.location ?? ''), (q) => fz.quiet(q))) pool.harvestedPages++;
    }
  };
}

/** Extra form fields: the names the mutations use (prototype keys, brackets, empty) with hostile values. */
const extras = fc.oneof(
  { weight: 3, arbitrary: fc.constant([] as Array<{ name: string; value: unknown }>) },
  { weight: 1, arbitrary: fc.array(fc.record({ name: mutation.map((mu) => mu.name), value: hostileValue }), { minLength: 1, maxLength: 2 }) },
);
const format = fc.constantFrom('form', 'form', 'form', 'json', 'xml') as fc.Arbitrary<'json' | 'form' | 'xml'>;
const contentType = fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: undefined, freq: 4 });
const idKind = fc.constantFrom('real', 'real', 'real', 'hostile');
const tokenKind = fc.constantFrom('own', 'own', 'own', 'other', 'hostile', 'missing');
/** A value drawn from `good` mostly, else a near miss, hostile or absent. */
const field = (good: string[], bad: string[] = []) =>
  fc.oneof(
    // Mostly good, so that whole forms often pass and the paying, method and answer paths are reached.
    { weight: 12, arbitrary: fc.constantFrom(...good) },
    ...(bad.length ? [{ weight: 2, arbitrary: fc.constantFrom<unknown>(...bad) }] : []),
    { weight: 2, arbitrary: hostileValue },
    { weight: 1, arbitrary: fc.constant<unknown>(undefined) },
  );
/** Accept-Language drives the pages' language: real tags, wildcards, junk and a very long one. */
const pageHeaders = fc.option(
  fc.record(
    {
      'accept-language': fc.constantFrom('pt-BR,pt;q=0.9', 'de', '*', 'en;q=abc', 'zz-ZZ', ';;,,', `${'en-US,'.repeat(400)}de`, '<script>', 'x'.repeat(5000)),
      'x-request-id': fc.constantFrom('r'.repeat(500), 'a b c', '../x'),
    },
    { requiredKeys: [] },
  ),
  { nil: undefined },
);

function withFields(body: Record<string, unknown>, xs: Array<{ name: string; value: unknown }>): Record<string, unknown> {
  for (const x of xs) setField(body, x.name, x.value);
  return body;
}

/** Drops the fields a generator left absent (undefined). */
function present(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}

export async function fuzzShopperPages(fz: Fuzzer, pool: ShopperPool, runs: Runs, log: (line: string) => void, casesSoFar: () => number): Promise<void> {
  const session = (pick: number) => pool.sessions[pick % pool.sessions.length] as SessionRef;
  const page = (pick: number) => pool.issuer[pick % pool.issuer.length] as IssuerRef;
  const sessionIds = pageIdArb(
    fc.nat().map((i) => session(i).id),
    35,
    'form_token=x&card_number=4242424242424242',
    [
      fc.stringMatching(/^cs_[A-Za-z0-9_-]{32}$/), // well formed, no such session
      fc.nat().map((i) => (pool.issuer.length ? page(i).id : 'cs_')), // an issuer page's id where a session's belongs
    ],
  );
  const issuerIds = pageIdArb(
    fc.nat().map((i) => page(i).id),
    32,
    'outcome=approve&form_token=x',
    [fc.stringMatching(/^[A-Za-z0-9_-]{32}$/), fc.nat().map((i) => session(i).id)],
  );
  const token = (kind: string, own: string, other: string, hostile: unknown): unknown =>
    kind === 'own' ? own : kind === 'other' ? other : kind === 'hostile' ? hostile : undefined;
  const query = fc.option(
    fc.constantFrom('?q=%3Cscript%3E', '?lang=de', '?form_token=x&outcome=approve', '?card_number=4242424242424242', '?a[b][c]=1', '?%zz'),
    { nil: '' },
  );

  const section = async (body: () => Promise<void>) => {
    const before = casesSoFar();
    const t0 = Date.now();
    await body();
    log(`    ${casesSoFar() - before} cases, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  };
  /** GET of a page route at hostile and real ids, with hostile headers. */
  const getRoute = (label: string, path: (id: string) => string, ids: fc.Arbitrary<string>) =>
    section(() =>
      fz.property(
        label,
        'ids',
        fc.asyncProperty(ids, query, pageHeaders, async (id, q, headers) => {
          await fz.run(label, { method: 'GET', path: `${path(id)}${q}`, contentType: '', headers: headers as Record<string, string> | undefined });
        }),
        runs.forms + runs.raw,
      ),
    );
  /** A POST route: generated forms, then raw payloads at a real id. */
  const postRoute = async <T>(label: string, what: string, arb: fc.Arbitrary<T>, toCase: (x: T) => Case, rawPath: (pick: number) => string) =>
    section(async () => {
      await fz.property(
        label,
        what,
        fc.asyncProperty(arb, async (x) => {
          await fz.run(label, toCase(x));
        }),
        runs.forms,
      );
      await fz.property(
        label,
        'raw payloads',
        fc.asyncProperty(fc.nat(), fc.constantFrom(...RAW), fc.constantFrom(...CONTENT_TYPES), async (pick, payload, ct) => {
          await fz.run(label, { method: 'POST', path: rawPath(pick), payload, contentType: ct });
        }),
        runs.raw,
      );
    });
  const encoded = (path: string, body: Record<string, unknown>, f: 'json' | 'form' | 'xml', ct: string | undefined, headers?: Record<string, string>): Case => {
    const enc = encodeLoose(present(body), f);
    return { method: 'POST', path, payload: enc.payload, contentType: ct ?? enc.contentType, ...(headers ? { headers } : {}) };
  };

  // Reading routes first (they change nothing), then the forms that use sessions up.
  await getRoute('GET /pay/:id', (id) => `/pay/${id}`, sessionIds);
  await getRoute('GET /pay/:id/return', (id) => `/pay/${id}/return`, sessionIds);

  await postRoute(
    'POST /v1/checkout/:id',
    'loading-page forms',
    fc.record({
      pick: fc.nat(),
      idKind,
      hostileId: sessionIds,
      signKind: fc.constantFrom('own', 'own', 'own', 'other', 'hostile', 'missing', 'form_token'),
      hostileSign: hostileValue,
      // The loading page's own fields (fixed inputs, aliases, allParams) with hostile values.
      loading: fc.array(
        fc.record({ name: fc.constantFrom('gbc_id', 'merNo', 'orderAmount', 'allParams', 'signInfo[0]', 'to_pass_page', 'returnUrl'), value: hostileValue }),
        {
          maxLength: 3,
        },
      ),
      extras,
      format,
      contentType,
    }),
    (x) => {
      const own = session(x.pick);
      const body: Record<string, unknown> = {
        signInfo: x.signKind === 'form_token' ? own.form_token : token(x.signKind, own.signInfo, session(x.pick + 1).signInfo, x.hostileSign),
      };
      withFields(body, [...x.loading, ...x.extras]);
      return encoded(`/v1/checkout/${x.idKind === 'real' ? own.id : x.hostileId}`, body, x.format, x.contentType);
    },
    (pick) => `/v1/checkout/${session(pick).id}`,
  );

  await postRoute(
    'POST /pay/:id',
    'card forms',
    fc.record({
      pick: fc.nat(),
      idKind,
      hostileId: sessionIds,
      tokenKind,
      hostileToken: hostileValue,
      card_number: field(
        ['4242 4242 4242 4242', '4242424242424242', '4242-4242-4242-4242', '4000000000000002', '4000000000003220', '5555555555554444', '378282246310005'],
        ['4242424242424241', '4242', '42424242424242424242', '', '   ', '0000000000000000', '4242 4242 4242 4242 4242 4242 4242'],
      ),
      expiry_month: field(['12', '1', '01', '07'], ['13', '0', '00', ' 7 ', '-1', '1.5']),
      expiry_year: field([YEAR, YEAR.slice(2)], ['2020', '1999', '9999', '0', '20250', '２０３０']),
      security_code: field(['123', '1234'], ['12', '12345', 'abc', ' 123 ']),
      holder: field(['Ana Silva', 'Ana', ''], ['A'.repeat(129), 'Ana\u0000Silva']),
      extras,
      format,
      contentType,
    }),
    (x) => {
      const own = session(x.pick);
      const body: Record<string, unknown> = {
        form_token: token(x.tokenKind, own.form_token, session(x.pick + 1).form_token, x.hostileToken),
        card_number: x.card_number,
        expiry_month: x.expiry_month,
        expiry_year: x.expiry_year,
        security_code: x.security_code,
        holder: x.holder,
      };
      return encoded(`/pay/${x.idKind === 'real' ? own.id : x.hostileId}`, withFields(body, x.extras), x.format, x.contentType);
    },
    (pick) => `/pay/${session(pick).id}`,
  );

  await postRoute(
    'POST /pay/:id/apm',
    'method forms',
    fc.record({
      pick: fc.nat(),
      idKind,
      hostileId: sessionIds,
      tokenKind,
      hostileToken: hostileValue,
      payment_method: field(['pix', 'pix', 'boleto', 'ideal'], ['card', 'PIX', 'paypal', '', 'pix ']),
      // The method's valid payer fields, mutated (a field deleted, replaced or added), or a hostile value.
      person: fc.oneof(
        { weight: 4, arbitrary: fc.record({ of: fc.constantFrom('pix', 'boleto', 'ideal'), muts: fc.array(mutation, { maxLength: 2 }) }) },
        { weight: 1, arbitrary: hostileValue.map((value) => ({ value })) },
      ),
      bank_code: field(['INGBNL2A', 'ABNANL2A', 'RABONL2U'], ['XXXXNL2A', 'ingbnl2a', '']),
      extras,
      format,
      contentType,
    }),
    (x) => {
      const own = session(x.pick);
      const person = 'of' in x.person ? mutate(PERSON[x.person.of] ?? {}, x.person.muts) : x.person.value;
      const body: Record<string, unknown> = {
        form_token: token(x.tokenKind, own.form_token, session(x.pick + 1).form_token, x.hostileToken),
        payment_method: x.payment_method,
        person,
        bank_code: x.bank_code,
      };
      return encoded(`/pay/${x.idKind === 'real' ? own.id : x.hostileId}/apm`, withFields(body, x.extras), x.format, x.contentType);
    },
    (pick) => `/pay/${session(pick).id}/apm`,
  );

  await getRoute('GET /issuer/:id', (id) => `/issuer/${id}`, issuerIds);
  await postRoute(
    'POST /issuer/:id',
    'answers',
    fc.record({
      pick: fc.nat(),
      idKind,
      hostileId: issuerIds,
      tokenKind,
      hostileToken: hostileValue,
      outcome: field(['approve', 'approve', 'decline'], ['complete', 'APPROVE', '', 'approve,decline']),
      extras,
      format,
      contentType,
    }),
    (x) => {
      const own = page(x.pick);
      const body: Record<string, unknown> = { form_token: token(x.tokenKind, own.form_token, page(x.pick + 1).form_token, x.hostileToken), outcome: x.outcome };
      return encoded(`/issuer/${x.idKind === 'real' ? own.id : x.hostileId}`, withFields(body, x.extras), x.format, x.contentType);
    },
    (pick) => `/issuer/${page(pick).id}`,
  );

  // Last: a valid cancel ends its session for every later case.
  await postRoute(
    'POST /pay/:id/cancel',
    'cancel forms',
    fc.record({ pick: fc.nat(), idKind, hostileId: sessionIds, tokenKind, hostileToken: hostileValue, extras, format, contentType }),
    (x) => {
      const own = session(x.pick);
      const body: Record<string, unknown> = { form_token: token(x.tokenKind, own.form_token, session(x.pick + 1).form_token, x.hostileToken) };
      return encoded(`/pay/${x.idKind === 'real' ? own.id : x.hostileId}/cancel`, withFields(body, x.extras), x.format, x.contentType);
    },
    (pick) => `/pay/${session(pick).id}/cancel`,
  );
  log(
    `  shopper pages: ${pool.sessions.length} sessions (${pool.harvestedSessions} opened by the fuzzed POST /v1/checkout), ${pool.issuer.length} issuer pages (${pool.harvestedPages} started by the fuzzed method form)`,
  );
}
