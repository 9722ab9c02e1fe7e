// What every route module is handed: the app's dependencies, built once at start.
import type { ApiKeyService } from '../apikeys/service.js';
import type { Settings } from '../config/index.js';
import type { Keyring } from '../crypto/keyring.js';
import type { Store } from '../db/store.js';
import type { AccountRow } from '../db/tables/merchants.js';
import type { MerchantService } from '../merchants/service.js';
import type { Metrics } from '../ops/metrics.js';
import type { ProcessorDirectory } from '../processors/directory.js';
import type { Processor } from '../processors/types.js';

export interface Deps {
  settings: Settings;
  store: Store;
  keyring: Keyring;
  merchants: MerchantService;
  apiKeys: ApiKeyService;
  metrics: Metrics;
  /** The processors set per account (docs/contract.md §21), read into memory. */
  processors: ProcessorDirectory;
  /**
   * The processor that serves a payment of an account (its currency and brand when known),
   * or null (live mode with none configured). The directory's, unless a test steers it.
   */
  processorFor(account: AccountRow, want?: { currency?: string; brand?: string }): Processor | null;
  /**
   * Every processor that takes the payment, in the order tried (docs/contract.md §21): the
   * next serves only when one failed before it could have authorised.
   */
  processorsFor(account: AccountRow, want?: { currency?: string; brand?: string }): Processor[];
  /** Milliseconds since the epoch; injectable so tests can move time. */
  now(): number;
}

/** A process's state, built by createRuntime (src/runtime.ts): serving, CLI commands and jobs take it. */
export interface Runtime {
  settings: Settings;
  store: Store;
  keyring: Keyring;
  merchants: MerchantService;
  apiKeys: ApiKeyService;
  deps: Deps;
}
