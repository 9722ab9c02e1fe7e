// Every command of `npx tollgate`, listed here and nowhere else, in the order the help shows
// them (issue 30 item 3): each capability exports its commands and this list is the whole
// tool, so none depends on which module happened to be imported first.
//
// Each entry names its command's module by a loader, and carries the one line `help` shows:
// the list itself imports nothing, so `help` loads no capability and any other command loads
// only its own module (issue 36 item 6: every command paid 1–5 s loading all of them, with
// the HTTP framework and database drivers they import).
import type { Command } from '../command/registry.js';

/** A listed command: its name and one line, and how to load the rest (options, usage, run). */
export interface Listed {
  /** One or two words: "balance", "merchant create". The first word of a two-word name is its group. */
  readonly name: string;
  /** One line: what the command does (the help's line, and the first line of its --help). */
  readonly about: string;
  /** The command itself, its module imported on first use. */
  load(): Promise<Command>;
}

function listed<M>(load: () => Promise<M>, name: string, pick: (m: M) => Command, about: string): Listed {
  let loaded: Promise<Command> | null = null;
  return {
    name,
    about,
    load: () => {
      loaded ??= load().then((m) => {
        const c = pick(m);
        if (c.name !== name) throw new Error(`command "${name}" is listed with the module's "${c.name}"`);
        return c;
      });
      return loaded;
    },
  };
}

/** Every command, in help order. */
export const commandList: readonly Listed[] = [
  listed(
    () => import('./server-commands.js'),
    'serve',
    (m) => m.serveCommand,
    'start the gateway; stops gracefully on SIGTERM or SIGINT (in-flight requests finish)',
  ),
  listed(
    () => import('./server-commands.js'),
    'migrate',
    (m) => m.migrateCommand,
    'apply database migrations (serve also does this at start); creates the embedded database if there is none',
  ),
  listed(
    () => import('./merchants.js'),
    'merchant create',
    (m) => m.merchantCreateCommand,
    'create a merchant with one account; prints its ids, secret key and webhook secret once',
  ),
  listed(
    () => import('./merchants.js'),
    'merchant list',
    (m) => m.merchantListCommand,
    'every merchant and account: merchant_id, account_id, mode, name',
  ),
  listed(
    () => import('./merchants.js'),
    'key rotate',
    (m) => m.keyRotateCommand,
    'new secret key for an account; the old one still verifies until "key retire"',
  ),
  listed(
    () => import('./merchants.js'),
    'key retire',
    (m) => m.keyRetireCommand,
    'stop accepting the keys replaced by "key rotate"',
  ),
  listed(
    () => import('./merchants.js'),
    'webhook-secret rotate',
    (m) => m.webhookSecretRotateCommand,
    'new secret for signing notifications (Standard Webhooks); the old one stops at once',
  ),
  listed(
    () => import('./merchants.js'),
    'ip add',
    (m) => m.ipAddCommand,
    'allow these addresses or ranges to read the account’s data back (/v1/retrievalTrans, /v1/retrievalRefund, /v1/retrievalPayout, generic GETs)',
  ),
  listed(
    () => import('./merchants.js'),
    'ip remove',
    (m) => m.ipRemoveCommand,
    'stop allowing these addresses or ranges',
  ),
  listed(
    () => import('./merchants.js'),
    'ip list',
    (m) => m.ipListCommand,
    'the addresses and ranges allowed to read the account’s data back',
  ),
  listed(
    () => import('./sign.js'),
    'sign',
    (m) => m.signCommand,
    'print the canonical string and the encryption_data of a request body (JSON, form or XML)',
  ),
  listed(
    () => import('../ledger/cli.js'),
    'ledger verify',
    (m) => m.ledgerVerifyCommand,
    'prove the books: postings sum to zero, balances and payments agree with them (exit 1 if not)',
  ),
  listed(
    () => import('../ledger/cli.js'),
    'balance',
    (m) => m.balanceCommand,
    'balances of an account per currency: pending, available, held, refunds in flight, fees',
  ),
  listed(
    () => import('../ledger/cli.js'),
    'pricing set',
    (m) => m.pricingSetCommand,
    'the fee charged on each capture in that currency: a percentage plus a fixed amount',
  ),
  listed(
    () => import('../ledger/cli.js'),
    'pricing show',
    (m) => m.pricingShowCommand,
    "the account's fees per currency",
  ),
  listed(
    () => import('../risk/cli.js'),
    'blocklist add',
    (m) => m.blocklistAddCommand,
    'refuse payments matching VALUE; card numbers are stored only as a keyed fingerprint',
  ),
  listed(
    () => import('../risk/cli.js'),
    'blocklist remove',
    (m) => m.blocklistRemoveCommand,
    'take VALUE off the blocklist',
  ),
  listed(
    () => import('../risk/cli.js'),
    'blocklist list',
    (m) => m.blocklistListCommand,
    "the account's blocklist (cards by fingerprint)",
  ),
  listed(
    () => import('../risk/cli.js'),
    'risk thresholds',
    (m) => m.riskThresholdsCommand,
    'the risk scores (0-100) from which payments are held for review or rejected',
  ),
  listed(
    () => import('./server-commands.js'),
    'worker',
    (m) => m.workerCommand,
    'the background work of serve without HTTP: notification delivery and every scheduled job',
  ),
  listed(
    () => import('../notifications/cli.js'),
    'events list',
    (m) => m.eventsListCommand,
    "the account's notification events and their delivery state",
  ),
  listed(
    () => import('../notifications/cli.js'),
    'events deliveries',
    (m) => m.eventsDeliveriesCommand,
    "one event's delivery attempts: time, HTTP status, latency, outcome",
  ),
  listed(
    () => import('../notifications/cli.js'),
    'events replay',
    (m) => m.eventsReplayCommand,
    'deliver an event again, or every event that failed since a time',
  ),
  listed(
    () => import('../pages/cli.js'),
    'frame-origin add',
    (m) => m.frameOriginAddCommand,
    "allow these origins to show the account's pages (hosted checkout, issuer pages) in an iframe",
  ),
  listed(
    () => import('../pages/cli.js'),
    'frame-origin remove',
    (m) => m.frameOriginRemoveCommand,
    "stop allowing these origins to frame the account's pages",
  ),
  listed(
    () => import('../pages/cli.js'),
    'frame-origin list',
    (m) => m.frameOriginListCommand,
    "the origins allowed to frame the account's pages",
  ),
  listed(
    () => import('../methods/cli.js'),
    'methods enable',
    (m) => m.methodsEnableCommand,
    'offer these alternative payment methods on the account',
  ),
  listed(
    () => import('../methods/cli.js'),
    'methods disable',
    (m) => m.methodsDisableCommand,
    'stop offering these alternative payment methods on the account',
  ),
  listed(
    () => import('../methods/cli.js'),
    'methods list',
    (m) => m.methodsListCommand,
    "the account's alternative payment methods: on or off, currencies, countries",
  ),
  listed(
    () => import('../subscriptions/cli.js'),
    'subscriptions list',
    (m) => m.subscriptionsListCommand,
    "an account's subscriptions, newest first",
  ),
  listed(
    () => import('../subscriptions/cli.js'),
    'subscriptions show',
    (m) => m.subscriptionsShowCommand,
    'one subscription: its plan, where it stands, its deduction orders and its next job',
  ),
  listed(
    () => import('../subscriptions/cli.js'),
    'subscriptions cancel',
    (m) => m.subscriptionsCancelCommand,
    'cancel a subscription at once (Inactived; nothing prorated or refunded; subscription.cancelled sent)',
  ),
  listed(
    () => import('./clock.js'),
    'clock advance',
    (m) => m.clockAdvanceCommand,
    "move a test account's clock forward and run its due deductions, retries and expiries in order",
  ),
  listed(
    () => import('./clock.js'),
    'clock show',
    (m) => m.clockShowCommand,
    "where a test account's clock stands (the real time when it was never moved)",
  ),
  listed(
    () => import('../fx/cli.js'),
    'fx set',
    (m) => m.fxSetCommand,
    'set an exchange rate: one BASE is RATE QUOTE (npx tollgate fx set EUR USD 1.0842)',
  ),
  listed(
    () => import('../fx/cli.js'),
    'fx list',
    (m) => m.fxListCommand,
    'the rates set by the operator; with a pair, the rate payouts would use for it and where it comes from',
  ),
  listed(
    () => import('../payouts/cli.js'),
    'balance top-up',
    (m) => m.balanceTopUpCommand,
    "add money to a TEST account's available balance (to try payouts); live accounts are refused",
  ),
  listed(
    () => import('../payouts/cli.js'),
    'pricing payout',
    (m) => m.pricingPayoutCommand,
    'the fee of each payout from that source currency and method: a percentage plus a fixed amount',
  ),
  listed(
    () => import('../payouts/cli.js'),
    'fx markup',
    (m) => m.fxMarkupCommand,
    "the account's FX markup: its payouts convert at the rate less this percentage (at most 10)",
  ),
  listed(
    () => import('../payouts/cli.js'),
    'payouts list',
    (m) => m.payoutsListCommand,
    "an account's payouts, newest first (at most 1,000)",
  ),
  listed(
    () => import('../payouts/cli.js'),
    'payouts show',
    (m) => m.payoutsShowCommand,
    'one payout as its record (JSON)',
  ),
  listed(
    () => import('../payouts/cli.js'),
    'beneficiaries list',
    (m) => m.beneficiariesListCommand,
    'beneficiaries saved by payouts (use their beneficiary_id in later payouts); account numbers masked',
  ),
  listed(
    () => import('../payouts/cli.js'),
    'payouts rails',
    (m) => m.payoutsRailsCommand,
    'the local clearing systems LOCAL payouts use, per country and currency (SWIFT reaches the rest)',
  ),
  listed(
    () => import('../payouts/cli.js'),
    'payouts resolve',
    (m) => m.payoutsResolveCommand,
    'settle a PROCESSING payout by hand (the bank confirmed it, or returned it): COMPLETED, or FAILED with its funds released; notified',
  ),
  listed(
    () => import('../disputes/cli.js'),
    'disputes list',
    (m) => m.disputesListCommand,
    "an account's disputes, soonest due first; those that ask for a response within --due-within (default 3d) flagged",
  ),
  listed(
    () => import('../disputes/cli.js'),
    'pricing dispute',
    (m) => m.pricingDisputeCommand,
    'the fee each dispute costs the account in a currency, taken with the disputed amount when a chargeback opens',
  ),
  listed(
    () => import('../settlement/cli.js'),
    'settlement delay',
    (m) => m.settlementDelayCommand,
    "an account's settlement delay in days (default 1: T+1), for batches closed from now on",
  ),
  listed(
    () => import('../settlement/cli.js'),
    'settlement report',
    (m) => m.settlementReportCommand,
    "an account's settlement batches of a day with their lines (gross, fee, net), as text, JSON or CSV",
  ),
  listed(
    () => import('../settlement/reconcile/cli.js'),
    'reconcile',
    (m) => m.reconcileCommand,
    "match a processor's settlement report (Adyen settlement details, Stripe balance transactions CSV) to the account's ledger; the run is kept",
  ),
  listed(
    () => import('../settlement/reconcile/cli.js'),
    'reconcile show',
    (m) => m.reconcileShowCommand,
    'one kept reconciliation run: its counts per category and its mismatches',
  ),
  listed(
    () => import('../settlement/reconcile/cli.js'),
    'reconcile list',
    (m) => m.reconcileListCommand,
    "an account's reconciliation runs, newest first",
  ),
  listed(
    () => import('../attempts/cli.js'),
    'processor set',
    (m) => m.processorSetCommand,
    "set (or change) the account's processor of a connector; prints the webhook address to register at the provider",
  ),
  listed(
    () => import('../attempts/cli.js'),
    'processor list',
    (m) => m.processorListCommand,
    'the processors set, per account, in the order they are tried',
  ),
  listed(
    () => import('../attempts/cli.js'),
    'processor show',
    (m) => m.processorShowCommand,
    'one processor: where it is, what it takes, its credentials by their last four, its webhook address',
  ),
  listed(
    () => import('../attempts/cli.js'),
    'processor remove',
    (m) => m.processorRemoveCommand,
    'stop using a processor for the account (its attempts and notifications stay on record)',
  ),
  listed(
    () => import('../attempts/cli.js'),
    'processor status',
    (m) => m.processorStatusCommand,
    "how the account's calls to processors stand: attempts by operation and outcome, the open ones, webhooks that matched nothing",
  ),
  listed(
    () => import('../attempts/cli.js'),
    'processor reencrypt',
    (m) => m.processorReencryptCommand,
    "after a master key rotation: seal every processor's credentials under the new key",
  ),
  listed(
    () => import('./sandbox-processor.js'),
    'sandbox-processor',
    (m) => m.sandboxProcessorCommand,
    'run the sandbox as a remote processor over HTTP (point an account at it with processor set --connector sandbox --base-url …)',
  ),
  listed(
    () => import('./apikeys.js'),
    'apikey create',
    (m) => m.apikeyCreateCommand,
    'a new API key for the generic interface: sk_test_… for a test account, sk_live_… for a live one; shown once',
  ),
  listed(
    () => import('./apikeys.js'),
    'apikey list',
    (m) => m.apikeyListCommand,
    "an account's API keys: id, mode, last four characters, status, created (never the secret)",
  ),
  listed(
    () => import('./apikeys.js'),
    'apikey revoke',
    (m) => m.apikeyRevokeCommand,
    'revoke one API key: it answers 401 from then on (other processes within 10 s)',
  ),
  listed(
    () => import('../portal/cli.js'),
    'user create',
    (m) => m.userCreateCommand,
    'a portal user of a merchant; prints a one-time set-password link (good for 72 hours)',
  ),
  listed(
    () => import('../portal/cli.js'),
    'user list',
    (m) => m.userListCommand,
    "a merchant's portal users: e-mail, role, status, two-step sign-in",
  ),
  listed(
    () => import('../portal/cli.js'),
    'user disable',
    (m) => m.userDisableCommand,
    'the user cannot sign in any more; every session of theirs ends now',
  ),
  listed(
    () => import('../portal/cli.js'),
    'user enable',
    (m) => m.userEnableCommand,
    'a disabled user may sign in again',
  ),
  listed(
    () => import('../portal/cli.js'),
    'user reset',
    (m) => m.userResetCommand,
    'clears the password (and with --totp the second factor), lifts a lock, ends every session, and prints a new set-password link',
  ),
];

/** The commands that print a link to the gateway (made of TOLLGATE_PUBLIC_URL): main.ts says which address it used. */
export const printsLinks: ReadonlySet<string> = new Set(['user create', 'user reset']);

/** Every command by name ("merchant create", "ledger verify", …); a name listed twice is refused at load. */
export const commands: ReadonlyMap<string, Listed> = byName(commandList);

function byName(list: readonly Listed[]): Map<string, Listed> {
  const map = new Map<string, Listed>();
  for (const c of list) {
    if (map.has(c.name)) throw new Error(`command "${c.name}" is listed twice`);
    map.set(c.name, c);
  }
  return map;
}

/** Every command loaded (each module imported): for the tests that try them all. */
export function loadAll(): Promise<Command[]> {
  return Promise.all(commandList.map((c) => c.load()));
}
