// Every command of `npx tollgate`, listed here and nowhere else, in the order the help shows
// them (issue 30 item 3): each capability exports its commands and this list is the whole
// tool, so none depends on which module happened to be imported first.

import type { Command } from '../command/registry.js';
import { fxListCommand, fxSetCommand } from '../fx/cli.js';
import { balanceCommand, ledgerVerifyCommand, pricingSetCommand, pricingShowCommand } from '../ledger/cli.js';
import { methodsDisableCommand, methodsEnableCommand, methodsListCommand } from '../methods/cli.js';
import { eventsDeliveriesCommand, eventsListCommand, eventsReplayCommand } from '../notifications/cli.js';
import { frameOriginAddCommand, frameOriginListCommand, frameOriginRemoveCommand } from '../pages/cli.js';
import {
  balanceTopUpCommand,
  beneficiariesListCommand,
  fxMarkupCommand,
  payoutsListCommand,
  payoutsRailsCommand,
  payoutsResolveCommand,
  payoutsShowCommand,
  pricingPayoutCommand,
} from '../payouts/cli.js';
import { userCreateCommand, userDisableCommand, userEnableCommand, userListCommand, userResetCommand } from '../portal/cli.js';
import { blocklistAddCommand, blocklistListCommand, blocklistRemoveCommand, riskThresholdsCommand } from '../risk/cli.js';
import { subscriptionsCancelCommand, subscriptionsListCommand, subscriptionsShowCommand } from '../subscriptions/cli.js';
import { apikeyCreateCommand, apikeyListCommand, apikeyRevokeCommand } from './apikeys.js';
import { clockAdvanceCommand, clockShowCommand } from './clock.js';
import {
  ipAddCommand,
  ipListCommand,
  ipRemoveCommand,
  keyRetireCommand,
  keyRotateCommand,
  merchantCreateCommand,
  merchantListCommand,
  webhookSecretRotateCommand,
} from './merchants.js';
import { migrateCommand, serveCommand, workerCommand } from './server-commands.js';
import { signCommand } from './sign.js';

/** Every command, in help order. */
export const commandList: readonly Command[] = [
  serveCommand,
  migrateCommand,
  merchantCreateCommand,
  merchantListCommand,
  keyRotateCommand,
  keyRetireCommand,
  webhookSecretRotateCommand,
  ipAddCommand,
  ipRemoveCommand,
  ipListCommand,
  signCommand,
  ledgerVerifyCommand,
  balanceCommand,
  pricingSetCommand,
  pricingShowCommand,
  blocklistAddCommand,
  blocklistRemoveCommand,
  blocklistListCommand,
  riskThresholdsCommand,
  workerCommand,
  eventsListCommand,
  eventsDeliveriesCommand,
  eventsReplayCommand,
  frameOriginAddCommand,
  frameOriginRemoveCommand,
  frameOriginListCommand,
  methodsEnableCommand,
  methodsDisableCommand,
  methodsListCommand,
  subscriptionsListCommand,
  subscriptionsShowCommand,
  subscriptionsCancelCommand,
  clockAdvanceCommand,
  clockShowCommand,
  fxSetCommand,
  fxListCommand,
  balanceTopUpCommand,
  pricingPayoutCommand,
  fxMarkupCommand,
  payoutsListCommand,
  payoutsShowCommand,
  beneficiariesListCommand,
  payoutsRailsCommand,
  payoutsResolveCommand,
  apikeyCreateCommand,
  apikeyListCommand,
  apikeyRevokeCommand,
  userCreateCommand,
  userListCommand,
  userDisableCommand,
  userEnableCommand,
  userResetCommand,
];

/** The commands that print a link to the gateway (made of TOLLGATE_PUBLIC_URL): main.ts says which address it used. */
export const printsLinks: ReadonlySet<Command> = new Set([userCreateCommand, userResetCommand]);

/** Every command by name ("merchant create", "ledger verify", …); a name listed twice is refused at load. */
export const commands: ReadonlyMap<string, Command> = byName(commandList);

function byName(list: readonly Command[]): Map<string, Command> {
  const map = new Map<string, Command>();
  for (const c of list) {
    if (map.has(c.name)) throw new Error(`command "${c.name}" is listed twice`);
    map.set(c.name, c);
  }
  return map;
}
