// Portal tests' browser without a browser: a cookie jar over `app.inject`, forms read from
// the page (their hidden CSRF and form tokens) and posted as a browser would.
import type { TestGateway } from '../test/harness.js';
import { totpCode } from './totp.js';
import { PortalUsers } from './users.js';

export interface PortalAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The Location of a redirect. */
  location: string;
}

const unescapeHtml = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#x([0-9a-f]+);/gi, (_, h) => String.fromCodePoint(Number.parseInt(h, 16)))
    .replace(/&#(\d+);/g, (_, d) => String.fromCodePoint(Number(d)))
    .replace(/&amp;/g, '&');

/** The hidden inputs of the first form on the page posting to `action`. */
export function formFields(page: string, action: string): Record<string, string> {
  const forms = page.match(/<form\b[^>]*>[\s\S]*?<\/form>/g) ?? [];
  const form = forms.find((f) => unescapeHtml(/action="([^"]*)"/.exec(f)?.[1] ?? '') === action);
  if (!form) throw new Error(`no form posting to ${action} on the page:\n${page.slice(0, 3000)}`);
  const fields: Record<string, string> = {};
  for (const m of form.matchAll(/<input\b[^>]*type="hidden"[^>]*>/g)) {
    const name = /name="([^"]*)"/.exec(m[0])?.[1];
    const value = /value="([^"]*)"/.exec(m[0])?.[1] ?? '';
    if (name) fields[unescapeHtml(name)] = unescapeHtml(value);
  }
  return fields;
}

export class PortalAgent {
  readonly jar = new Map<string, string>();
  constructor(
    readonly gw: TestGateway,
    readonly ip = '127.0.0.1',
  ) {}

  private cookieHeader(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(headers: Record<string, unknown>): void {
    const set = headers['set-cookie'];
    for (const c of Array.isArray(set) ? set : set ? [String(set)] : []) {
      const [pair] = String(c).split(';');
      const i = (pair ?? '').indexOf('=');
      const name = (pair ?? '').slice(0, i).trim();
      const value = (pair ?? '').slice(i + 1).trim();
      if (!name) continue;
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(String(c))) this.jar.delete(name);
      else this.jar.set(name, value);
    }
  }

  async request(method: 'GET' | 'POST', url: string, body?: Record<string, string> | string, headers: Record<string, string> = {}): Promise<PortalAnswer> {
    const payload = typeof body === 'string' ? body : body ? new URLSearchParams(body).toString() : undefined;
    const r = await this.gw.app.inject({
      method,
      url,
      remoteAddress: this.ip,
      headers: {
        ...(this.jar.size ? { cookie: this.cookieHeader() } : {}),
        ...(payload !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
      payload,
    });
    this.keep(r.headers as Record<string, unknown>);
    const h = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
    return { status: r.statusCode, headers: h, body: r.body, location: h.location ?? '' };
  }

  get(url: string): Promise<PortalAnswer> {
    return this.request('GET', url);
  }

  /** GETs `page`, fills the form that posts to `action` (its hidden fields plus `fields`), posts it. */
  async submit(page: string, action: string, fields: Record<string, string> = {}): Promise<PortalAnswer> {
    const shown = await this.get(page);
    if (shown.status !== 200) throw new Error(`GET ${page}: ${shown.status} ${shown.body.slice(0, 500)}`);
    return this.request('POST', action, { ...formFields(shown.body, action), ...fields });
  }
}

export const TEST_PASSWORD = 'violet-harbour-lantern-42';

/** A user of the gateway's merchant (or `merchant_id`), password set through the link, signed in (TOTP enrolled when `totp`). */
export async function signedInUser(
  gw: TestGateway,
  o: { role?: string; email?: string; merchant_id?: string; totp?: boolean } = {},
): Promise<{ agent: PortalAgent; email: string; user_id: string; merchant_id: string; totp_secret?: string }> {
  const users = new PortalUsers(gw.runtime.store, gw.runtime.keyring);
  const email = o.email ?? `${o.role ?? 'owner'}-${Math.random().toString(36).slice(2, 10)}@example.com`;
  const merchant_id = o.merchant_id ?? gw.merchant.merchant_id;
  const { user, token } = await users.create({ merchant_id, email, role: o.role ?? 'owner' }, gw.runtime.deps.now());
  const agent = new PortalAgent(gw);
  const set = await agent.submit(`/portal/setup/${token}`, `/portal/setup/${token}`, { password: TEST_PASSWORD, confirm: TEST_PASSWORD });
  if (set.status !== 303) throw new Error(`set password: ${set.status} ${set.body.slice(0, 500)}`);
  const signin = await agent.submit('/portal/signin', '/portal/signin', { merchant_id, email, password: TEST_PASSWORD });
  if (signin.status !== 303) throw new Error(`sign in: ${signin.status} ${signin.body.slice(0, 500)}`);
  let totp_secret: string | undefined;
  if (o.totp || signin.location === '/portal/totp') {
    const page = await enrolmentPage(agent);
    totp_secret = /id="totp-secret">([A-Z2-7]+)</.exec(page.body)?.[1];
    if (!totp_secret) throw new Error(`no TOTP secret on ${page.body.slice(0, 500)}`);
    const r = await agent.request('POST', '/portal/totp', { ...formFields(page.body, '/portal/totp'), code: totpCode(totp_secret, gw.runtime.deps.now()) });
    if (r.status !== 200) throw new Error(`enrol: ${r.status} ${r.body.slice(0, 500)}`);
  }
  return { agent, email, user_id: user.user_id, merchant_id, totp_secret };
}

/** The enrolment page with its key: GET /portal/totp writes nothing, its form starts the enrolment. */
export async function enrolmentPage(agent: PortalAgent): Promise<PortalAnswer> {
  const start = await agent.submit('/portal/totp', '/portal/totp/start');
  if (start.status !== 303) throw new Error(`start enrolment: ${start.status} ${start.body.slice(0, 500)}`);
  return agent.get('/portal/totp');
}
