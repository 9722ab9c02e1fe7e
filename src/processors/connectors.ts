// The connectors this gateway speaks (docs/contract.md §21): a stored processor setting made
// into a `Processor`. The sandbox without a base URL is the in-process one; with one, the
// remote sandbox (`tollgate sandbox-processor`, docs/remote-sandbox.md) at that address;
// adyen, Adyen's Checkout API (docs/processors.md#adyen) at its base URL (default: the test environment).
import { createAdyenProcessor } from './adyen/connector.js';
import type { ConnectorFactory } from './directory.js';
import { createRemoteSandboxProcessor } from './remote/connector.js';
import { createStripeProcessor } from './stripe/connector.js';
import type { Processor } from './types.js';

export function connectorFor(inProcessSandbox: Processor): ConnectorFactory {
  return (row, credentials) => {
    if (row.connector === 'sandbox' && !row.base_url) return inProcessSandbox;
    if (row.connector === 'sandbox')
      return createRemoteSandboxProcessor({ base_url: row.base_url, api_key: credentials.api_key, webhook_secret: credentials.webhook_secret });
    if (row.connector === 'stripe')
      return createStripeProcessor({
        secret_key: credentials.secret_key ?? '',
        webhook_secret: credentials.webhook_secret,
        base_url: row.base_url || undefined,
      });
    if (row.connector === 'adyen')
      return createAdyenProcessor({
        base_url: row.base_url,
        api_key: credentials.api_key ?? '',
        merchant_account: credentials.merchant_account ?? '',
        hmac_key: credentials.hmac_key ?? '',
      });
    // config.ts refuses to store a setting this build cannot make into a connector.
    throw new Error(`processor ${row.processor_id}: the ${row.connector} connector is not built in this version`);
  };
}
