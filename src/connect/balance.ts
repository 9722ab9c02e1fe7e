// `GET /v1/balance` (docs/contract.md §12, §18): the caller's balances per currency from the
// ledger's materialised sums (src/ledger/balances.ts), or, with `Stripe-Account: acct_…`,
// those of one of its connected accounts of its mode. Only this route reads that header:
// acting as a connected account is not offered elsewhere.
//
// The object has the platform family's members (issue 33 item 7): Tollgate keeps one balance
// per currency, not one per source of funds, so each amount's `source_types` has only the
// family's `card` (the balance transfers and payouts take from, their `source_type`), and
// `connect_reserved` is empty: nothing is ever held back for connected accounts.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { callerOf, genericRouteOptions } from '../generic/auth.js';
import { CONNECT_TAG, errorAnswers, objectAnswers } from '../generic/docs.js';
import { lower, noSuch, RetrieveQuery, sendObject } from '../generic/wire.js';
import { accountBalances } from '../ledger/balances.js';
import type { Deps } from '../web/context.js';
import { findAccount } from './accounts.js';

const Funds = Type.Array(
  Type.Object({
    amount: Type.Integer({ description: 'minor units; available may be negative after refunds' }),
    currency: Type.String({ description: 'lowercase ISO 4217' }),
    source_types: Type.Object(
      { card: Type.Integer({ description: 'the same as `amount`' }) },
      { description: 'by source of funds: Tollgate keeps one balance per currency, the one the family calls `card`' },
    ),
  }),
);

const BalanceObject = Type.Object(
  {
    object: Type.Literal('balance'),
    livemode: Type.Boolean(),
    available: Funds,
    pending: Funds,
    connect_reserved: Type.Array(Type.Object({ amount: Type.Integer(), currency: Type.String() }), {
      maxItems: 0,
      description: 'always empty: nothing is held back for connected accounts’ negative balances',
    }),
  },
  { description: 'Available (settled; what transfers and payouts take from) and pending (captured, not settled yet) funds per currency.' },
);

const BalanceHeaders = Type.Object({
  'stripe-account': Type.Optional(Type.String({ description: 'the id (acct_…) of one of your connected accounts: its balance instead of yours' })),
});

/** One currency's amount of the balance, with the one source type Tollgate has. */
const funds = (amount: number, currency: string) => ({ amount, currency: lower(currency), source_types: { card: amount } });

export function registerBalanceRoute(app: FastifyInstance, deps: Deps): void {
  app.get(
    '/v1/balance',
    {
      ...genericRouteOptions(deps),
      schema: {
        operationId: 'retrieveBalance',
        summary: 'Retrieve the balance',
        description: 'Your account’s balance per currency, or with the `Stripe-Account` header that of one of your connected accounts (another id is 404).',
        tags: [CONNECT_TAG],
        security: [{ bearer: [] }],
        headers: BalanceHeaders,
        querystring: RetrieveQuery,
        response: { ...objectAnswers(BalanceObject, 'The balance.'), ...errorAnswers([401, 403, 404, 429]) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      let account_id = caller.creds.account.account_id;
      const as = request.headers['stripe-account'];
      if (as !== undefined) {
        const id = Array.isArray(as) ? String(as[0]) : as;
        const connected = await findAccount(deps.store.db, account_id, caller.livemode, id);
        if (!connected) throw noSuch('account', id, 'Stripe-Account');
        account_id = connected.id;
      }
      const balances = await accountBalances(deps.store.db, account_id);
      return sendObject(request, reply, {
        object: 'balance',
        livemode: caller.livemode,
        available: balances.map((b) => funds(b.available_minor, b.currency)),
        pending: balances.map((b) => funds(b.pending_minor, b.currency)),
        connect_reserved: [],
      });
    },
  );
}
