// Fuzz of the merchant portal (issue 14 item 6): every route the portal registers (read from
// PORTAL_ROUTES, so a new page is fuzzed without a change here), signed out and signed in as
// each role, with the session's CSRF token, a wrong one or none, path ids of the portal
// merchant, of another merchant and hostile ones, bodies and queries built from the route's
// own schema with hostile values, and raw payloads in every media type.
//
// Invariants, besides fuzz.ts's for every case (no 5xx; every HTML answer carries the page
// layer's CSP; no card number echoed; a refusal changes no table) — here a refusal may
// write only the audit log and a user's failed sign-in count, as the portal must record
// both:
// - signed out, no route but the public ones answers 2xx (a GET is sent to the sign-in page);
// - a POST without the session's CSRF token is refused and writes nothing but the audit log;
// - a role never does what it may not (a viewer's POST to an operate/manage/users route is
//   refused);
// - another merchant's id in a path never answers 2xx or a redirect;
// - no answer shows another merchant's ids.
// Sign-out routes get only refused cases (a valid one would end the fuzz's own sessions).
import fc from 'fast-check';
import { openDispute } from '../../disputes/service.js';
import type { CreatedMerchant } from '../../merchants/service.js';
import { PORTAL_ROUTES } from '../../portal/plugin.js';
import { formFields, type PortalAgent, signedInUser } from '../../portal/testing.js';
import { paymentRequest, readXml, type TestGateway } from '../harness.js';
import type { GenericFuzzer } from './generic.js';
import { CONTENT_TYPES, hostileValue, INJECTIONS, RAW } from './inputs.js';
import type { Answer } from './shopper.js';

interface Session {
  role: string;
  cookie: string;
  csrf: string;
}

export interface PortalSeed {
  own: CreatedMerchant;
  foreign: CreatedMerchant;
  sessions: Session[];
  /** Ids of the portal merchant (transactions, users, …) and of the other one. */
  ownIds: string[];
  foreignIds: string[];
}

/** Before the checksum: a merchant with payments and a user per role (signed in), another merchant with payments and an owner. */
export async function seedPortal(gw: TestGateway): Promise<PortalSeed> {
  const own = await gw.newMerchant({ name: 'fuzz-portal', capture_method: 'manual' });
  const foreign = await gw.newMerchant({ name: 'fuzz-portal-other' });
  const pay = async (m: CreatedMerchant, card: string) =>
    String(
      readXml(await gw.post('/v1/authorise', { merchant_id: m.merchant_id, account_id: m.account_id, ...paymentRequest({ card }) }, { merchant: m }))
        .transaction_id,
    );
  const ownIds = [await pay(own, '4242424242424242'), await pay(own, '4000000000009235'), await pay(own, '5555555555554444')];
  const foreignIds = [await pay(foreign, '4242424242424242'), await pay(foreign, '4000000000009235')];
  const sessions: Session[] = [];
  for (const role of ['owner', 'admin', 'operator', 'viewer']) {
    const u = await signedInUser(gw, { role, merchant_id: own.merchant_id, email: `fuzz-${role}@portal.example` });
    sessions.push(sessionOf(role, u.agent, (await u.agent.get('/portal/profile')).body));
  }
  // The users routes (role, disable, enable, reset) act on these, not on the fuzz's own
  // signed-in users: an owner's case that promoted the operator, or disabled or reset the
  // viewer, would change what the later cases of that role may do (CI's seed 325890412: an
  // operator promoted to owner by one case disabled a user in a later one, correctly).
  for (const role of ['owner', 'admin', 'operator', 'viewer']) {
    const u = await signedInUser(gw, { role, merchant_id: own.merchant_id, email: `fuzz-target-${role}@portal.example` });
    ownIds.push(u.user_id);
  }
  const other = await signedInUser(gw, { role: 'owner', merchant_id: foreign.merchant_id, email: 'fuzz-other-owner@portal.example' });
  foreignIds.push(other.user_id);
  // Disputes of captured payments, so the dispute pages and forms meet real ones (a chargeback and an inquiry of this
  // merchant, a chargeback of the other).
  ownIds.push(await disputeOf(gw, own, true, 'chargeback'), await disputeOf(gw, own, true, 'inquiry'));
  foreignIds.push(await disputeOf(gw, foreign, false, 'chargeback'));
  return { own, foreign, sessions, ownIds, foreignIds };
}

/** A captured payment of `m` (captured by the API when the merchant captures by hand) disputed as `kind`: its dispute id. */
async function disputeOf(gw: TestGateway, m: CreatedMerchant, manual: boolean, kind: 'chargeback' | 'inquiry'): Promise<string> {
  const ids = { merchant_id: m.merchant_id, account_id: m.account_id };
  const paid = readXml(await gw.post('/v1/authorise', { ...ids, ...paymentRequest({ card: '4242424242424242' }) }, { merchant: m }));
  if (manual) {
    const order = { transaction_id: paid.transaction_id, order_no: paid.order_no, currency: 'USD', amount: '10.00' };
    const r = await gw.post('/v1/capture', { ...ids, capture_orders: [order] }, { merchant: m });
    if (r.statusCode !== 200) throw new Error(`seeding a dispute: the capture failed: ${r.body}`);
  }
  const { deps } = gw.runtime;
  const payment = await deps.store.db.selectFrom('payments').selectAll().where('transaction_id', '=', String(paid.transaction_id)).executeTakeFirstOrThrow();
  const notice = { connector: 'sandbox', processor_ref: `fuzz-${payment.transaction_id}`, payment, kind, reason: 'fraudulent' };
  return (await openDispute(deps, notice, deps.now())).dispute.dispute_id;
}

function sessionOf(role: string, agent: PortalAgent, page: string): Session {
  return { role, cookie: [...agent.jar].map(([k, v]) => `${k}=${v}`).join('; '), csrf: formFields(page, '/portal/signout').csrf ?? '' };
}

const WRITES_A_REFUSAL_MAY_MAKE = /^portal_(audit|users) /;
const ROLE_CAN: Record<string, string[]> = {
  read: ['owner', 'admin', 'operator', 'viewer'],
  operate: ['owner', 'admin', 'operator'],
  manage: ['owner', 'admin'],
  users: ['owner'],
  processors: ['owner'],
};

/** Field names of a TypeBox object schema. */
function fieldsOf(schema: unknown): string[] {
  const props = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return props ? Object.keys(props) : [];
}

export interface PortalTally {
  cases: number;
  routes: number;
  statuses: Map<number, number>;
  csrfRefused: number;
  foreignRefused: number;
  roleRefused: number;
}

export async function fuzzPortal(fz: GenericFuzzer, seed: PortalSeed, runsPerRoute: number, rawPerRoute: number): Promise<PortalTally> {
  const tally: PortalTally = { cases: 0, routes: 0, statuses: new Map(), csrfRefused: 0, foreignRefused: 0, roleRefused: 0 };
  const routes = PORTAL_ROUTES.filter((r) => r.method === 'GET' || r.method === 'POST');
  const foreignIds = new Set(seed.foreignIds);
  const idArb = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...seed.ownIds) },
    { weight: 3, arbitrary: fc.constantFrom(...seed.foreignIds) },
    { weight: 2, arbitrary: fc.constantFrom(...INJECTIONS) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
    { weight: 1, arbitrary: fc.constantFrom('0', 'x'.repeat(300), '..', '%2e%2e', 'pay_', 'usr_') },
  );
  const valueArb = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '1.00',
        '0.01',
        '25.00',
        '999999999.99',
        '-1',
        '0',
        'accept',
        'reject',
        'owner',
        'viewer',
        'fuzz@example.com',
        '10.0.0.0/8',
        'https://shop.example',
        '2026-11-25',
        '4242',
        'captured',
      ),
    },
    { weight: 2, arbitrary: fc.constantFrom(...seed.ownIds, ...seed.foreignIds) },
    { weight: 3, arbitrary: hostileValue.map((v) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))) },
  );
  const authArb = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...seed.sessions.map((s) => s.role)) },
    { weight: 1, arbitrary: fc.constantFrom('none', 'garbage') },
  );
  const csrfArb = fc.oneof({ weight: 6, arbitrary: fc.constant('right') }, { weight: 1, arbitrary: fc.constantFrom('missing', 'wrong') });

  for (const r of routes) {
    tally.routes++;
    const label = `portal ${r.method} ${r.url}`;
    const params = [...r.url.matchAll(/:(\w+)/g)].map((m) => m[1] ?? '');
    const fields = fieldsOf(r.method === 'POST' ? r.body : r.querystring).filter((f) => f !== 'csrf');
    const signOut = /\/signout/.test(r.url);
    const caseArb = fc.record({
      auth: authArb,
      csrf: signOut ? fc.constantFrom('missing', 'wrong') : csrfArb,
      ids: fc.array(idArb, { minLength: params.length, maxLength: params.length }),
      values: fc.array(fc.option(valueArb, { nil: undefined }), { minLength: fields.length, maxLength: fields.length }),
      extra: fc.option(fc.tuple(fc.constantFrom('__proto__', 'role', 'merchant_id', 'account_id', 'x[y]', 'csrf'), valueArb), { nil: undefined }),
      format: fc.constantFrom('form', 'form', 'form', 'json'),
    });
    await fz.property(
      label,
      `(${runsPerRoute} generated requests: roles, CSRF, own/foreign/hostile ids, schema fields)`,
      fc.asyncProperty(caseArb, async (k) => {
        const session = seed.sessions.find((s) => s.role === k.auth);
        const cookie = session ? session.cookie : k.auth === 'garbage' ? 'tollgate_portal=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' : '';
        let path = r.url;
        let foreignPath = false;
        params.forEach((p, i) => {
          const id = k.ids[i] ?? '';
          if (foreignIds.has(id)) foreignPath = true;
          let enc: string;
          try {
            enc = encodeURIComponent(id);
          } catch {
            enc = '%ED%A0%80';
          }
          path = path.replace(`:${p}`, enc || 'x');
        });
        const data: Record<string, string> = {};
        fields.forEach((f, i) => {
          const v = k.values[i];
          if (v !== undefined) data[f] = v;
        });
        if (k.extra) data[k.extra[0]] = k.extra[1];
        const headers: Record<string, string> = cookie ? { cookie } : {};
        let a: Answer;
        if (r.method === 'GET') {
          const q = new URLSearchParams(data).toString();
          a = await fz.run(label, { method: 'GET', path: q ? `${path}?${q}` : path, contentType: '', headers }, mayWrite);
        } else {
          if (k.csrf === 'right' && session) data.csrf = session.csrf;
          else if (k.csrf === 'wrong') data.csrf = 'A'.repeat(32);
          data.form_token ??= `fz${Math.random().toString(36).slice(2)}`;
          const payload = k.format === 'json' ? JSON.stringify(data) : new URLSearchParams(data).toString();
          const contentType = k.format === 'json' ? 'application/json' : 'application/x-www-form-urlencoded';
          a = await fz.run(label, { method: 'POST', path, payload, contentType, headers }, mayWrite);
        }
        tally.cases++;
        tally.statuses.set(a.statusCode, (tally.statuses.get(a.statusCode) ?? 0) + 1);
        const ok = a.statusCode < 400;
        const body = String(a.body ?? '');
        if (
          ok &&
          r.access !== 'public' &&
          r.access !== 'second' &&
          !session &&
          !(a.statusCode === 303 && /\/portal\/signin/.test(String(a.headers.location ?? '')))
        )
          throw new Error(`signed out, ${label} answered ${a.statusCode}`);
        if (r.method === 'POST' && ok && k.csrf !== 'right' && r.access !== 'public')
          throw new Error(`a POST without the session's CSRF token answered ${a.statusCode} on ${label}`);
        if (r.method === 'POST' && !ok && k.csrf !== 'right') tally.csrfRefused++;
        if (session && r.method === 'POST' && ok && ROLE_CAN[r.access] && !ROLE_CAN[r.access]?.includes(session.role))
          throw new Error(`a ${session.role} did ${label} (${r.access}) and got ${a.statusCode}${a.headers.location ? ` to ${a.headers.location}` : ''}`);
        if (session && ROLE_CAN[r.access] && !ROLE_CAN[r.access]?.includes(session.role) && !ok) tally.roleRefused++;
        if (foreignPath && session && ok) throw new Error(`another merchant's id in ${path} answered ${a.statusCode} (${label})`);
        if (foreignPath && !ok) tally.foreignRefused++;
        // A page may echo what the request carried (a search field, the audit log's record of what a user typed).
        const sent = JSON.stringify(data) + path;
        if (r.url !== '/portal/audit')
          for (const id of foreignIds)
            if (body.includes(id) && !sent.includes(id) && !sent.includes(encodeURIComponent(id)))
              throw new Error(`${label} showed another merchant's id ${id}`);
      }),
      runsPerRoute,
    );
    if (r.method === 'POST') {
      await fz.property(
        label,
        '(raw payloads)',
        fc.asyncProperty(
          fc.constantFrom(...RAW),
          fc.constantFrom(...CONTENT_TYPES),
          fc.constantFrom(...seed.sessions.map((s) => s.role)),
          async (payload, contentType, role) => {
            const session = seed.sessions.find((s) => s.role === role);
            const path = r.url.replace(/:(\w+)/g, () => encodeURIComponent(seed.ownIds[0] ?? 'x'));
            const a = await fz.run(label, { method: 'POST', path, payload, contentType, headers: session ? { cookie: session.cookie } : {} }, mayWrite);
            tally.cases++;
            tally.statuses.set(a.statusCode, (tally.statuses.get(a.statusCode) ?? 0) + 1);
            if (a.statusCode < 400) throw new Error(`a raw payload without the CSRF token answered ${a.statusCode} on ${label}`);
          },
        ),
        rawPerRoute,
      );
    }
  }
  return tally;

  function mayWrite(): boolean {
    return fz.changed().every((t) => WRITES_A_REFUSAL_MAY_MAKE.test(t));
  }
}
