// The bench scenarios, one table entry each. A scenario whose endpoint the gateway does not
// register (HTTP 404 to a probe) is skipped and says so, so capture/refund switch themselves
// on once those endpoints land.
import type { AuthoriseRequest } from '../src/client/index.js';
import type { CreatedMerchant } from '../src/merchants/service.js';

export interface PoolPayment {
  transaction_id: string;
  order_no: string;
}

export interface BenchContext {
  url: string;
  /** Automatic-capture merchant: authorise and query. */
  merchant: CreatedMerchant;
  /** Manual-capture merchant (capture scenario). */
  manual: CreatedMerchant;
  /** A unique-per-run prefix for order numbers. */
  tag: string;
  /** Order numbers created so far by the authorise scenario (0 … counter-1). */
  counter: { next: number };
  /** Payments created on demand for the batch scenarios. */
  pool(merchant: CreatedMerchant, count: number): Promise<PoolPayment[]>;
  quick: boolean;
}

export interface Scenario {
  name: string;
  path: string;
  describe: string;
  /** Connections for this scenario when not the run's default (64). */
  connections?: number;
  /** Whose key signs the bodies. */
  merchant(ctx: BenchContext): CreatedMerchant;
  /** Prepares data; returns a generator of unsigned bodies and an optional request cap. */
  prepare(ctx: BenchContext): Promise<{ next: () => Record<string, unknown>; max_requests?: number }>;
}

const YEAR = String(new Date().getUTCFullYear() + 3);

/** `prefix` + digits + the Luhn check digit. */
function withLuhn(prefix: string): string {
  let sum = 0;
  for (let i = 0; i < prefix.length; i++) {
    let d = Number(prefix[prefix.length - 1 - i]);
    if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return `${prefix}${(10 - (sum % 10)) % 10}`;
}

let shoppers = 0;

/**
 * A distinct shopper per payment: card (BIN 424242, which the sandbox approves), e-mail and
 * IP address (198.18.0.0/15, the benchmarking range). With one card, e-mail and IP for
 * every request the velocity rules reject everything after the tenth payment, and the
 * bench would measure risk rejections instead of authorisations.
 */
function shopper(): { card: string; shopper_email: string; shopper_ip: string } {
  const n = shoppers++;
  return {
    card: withLuhn(`424242${String(n % 1_000_000_000).padStart(9, '0')}`),
    shopper_email: `shopper${n}@example.com`,
    shopper_ip: `198.${18 + ((n >> 16) & 1)}.${(n >> 8) & 255}.${n & 255}`,
  };
}

/** A realistic direct payment with an approved test card and a new shopper (decisions §9). */
export function paymentFields(order_no: string): AuthoriseRequest {
  const s = shopper();
  return {
    order_no,
    currency: 'USD',
    amount: '10.00',
    card: s.card,
    expiration_month: '12',
    expiration_year: YEAR,
    security_code: '123',
    website: 'shop.example.com',
    shopper_email: s.shopper_email,
    shopper_ip: s.shopper_ip,
    first_name: 'Jane',
    last_name: 'Doe',
    billing_country: 'US',
    billing_city: 'San Francisco',
    billing_address: '1 Market St',
    billing_postal_code: '94105',
    note: 'bench',
  };
}

/** The same as a raw body with the merchant's ids (signed per request by the load loop). */
export function authoriseBody(m: CreatedMerchant, order_no: string): Record<string, unknown> {
  return { merchant_id: m.merchant_id, account_id: m.account_id, ...paymentFields(order_no) };
}

export const authorise: Scenario = {
  name: 'authorise',
  path: '/v1/authorise',
  describe: 'direct authorise, unique order_no per request, success test card',
  merchant: (ctx) => ctx.merchant,
  async prepare(ctx) {
    return { next: () => authoriseBody(ctx.merchant, `${ctx.tag}-${ctx.counter.next++}`) };
  },
};

export const query100: Scenario = {
  name: 'query100',
  path: '/v1/retrievalTrans',
  describe: 'order query of 100 order_nos (existing orders, random picks), 16 connections',
  // A latency target: 64 closed-loop connections would measure queueing, not the query.
  connections: 16,
  merchant: (ctx) => ctx.merchant,
  async prepare(ctx) {
    if (ctx.counter.next < 100) throw new Error('query100 needs the authorise scenario to run first');
    const known = ctx.counter.next;
    return {
      next: () => {
        const ids = new Set<string>();
        while (ids.size < 100) ids.add(`${ctx.tag}-${Math.floor(Math.random() * known)}`);
        return { merchant_id: ctx.merchant.merchant_id, account_id: ctx.merchant.account_id, order_nos: [...ids] };
      },
    };
  },
};

export const capture50: Scenario = {
  name: 'capture50',
  path: '/v1/capture',
  describe: 'capture batches of 50 manual authorisations (each payment captured once)',
  merchant: (ctx) => ctx.manual,
  async prepare(ctx) {
    const batches = ctx.quick ? 60 : 400;
    const pool = await ctx.pool(ctx.manual, batches * 50);
    let at = 0;
    return {
      max_requests: Math.floor(pool.length / 50),
      next: () => {
        const items = pool.slice(at, at + 50).map((p) => ({ transaction_id: p.transaction_id, order_no: p.order_no, currency: 'USD', amount: '10.00' }));
        at += 50;
        return { merchant_id: ctx.manual.merchant_id, account_id: ctx.manual.account_id, capture_orders: items };
      },
    };
  },
};

export const refund50: Scenario = {
  name: 'refund50',
  path: '/v1/refund',
  describe: 'refund batches of 50 captured payments, 0.01 each (partial refunds)',
  merchant: (ctx) => ctx.merchant,
  async prepare(ctx) {
    const pool = await ctx.pool(ctx.merchant, ctx.quick ? 1000 : 5000);
    let at = 0;
    return {
      // Runs for the scenario's duration: 10.00 refunded 0.01 at a time never runs out within
      // a bench run. (A request cap here made autocannon ignore the duration: 18,000 batches.)
      next: () => {
        const items: Record<string, unknown>[] = [];
        for (let i = 0; i < 50; i++) {
          const p = pool[(at + i) % pool.length] as PoolPayment;
          items.push({
            transaction_id: p.transaction_id,
            order_no: p.order_no,
            currency: 'USD',
            amount: '10.00',
            refund_amount: '0.01',
            refund_reason: 'bench',
          });
        }
        at = (at + 50) % pool.length;
        return { merchant_id: ctx.merchant.merchant_id, account_id: ctx.merchant.account_id, refund_orders: items };
      },
    };
  },
};

/** Run in this order; the query needs authorised orders. */
export const SCENARIOS: Scenario[] = [authorise, query100, capture50, refund50];
