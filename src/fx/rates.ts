// Which rate converts one currency into another (docs/contract.md §17): the operator's table first
// (the pair as set, or its inverse), else the dated default snapshot crossed through USD.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { Store } from '../db/store.js';
import { currencyExponent } from '../money/currency.js';
import { formatRate, invertRate, parseRate, RATE_SCALE, type ScaledRate } from './convert.js';
import { PER_USD, SNAPSHOT_DATE } from './snapshot.js';

const SCALE = 10n ** BigInt(RATE_SCALE);

export interface Rate {
  base: string;
  quote: string;
  rate: ScaledRate;
  /** `operator` (set with `tollgate fx set`, possibly inverted) or `snapshot <date>`. */
  source: string;
}

export class FxError extends Error {}

function checkCurrency(code: string): void {
  if (currencyExponent(code) === null) throw new FxError(`${JSON.stringify(code)} is not a supported ISO 4217 currency code`);
}

/** Units of `quote` for one unit of `base`; null when neither the table nor the snapshot knows the pair. */
export async function rateFor(db: Kysely<DB>, base: string, quote: string): Promise<Rate | null> {
  if (base === quote) return { base, quote, rate: SCALE, source: 'same currency' };
  const rows = await db
    .selectFrom('fx_rates')
    .select(['base', 'quote', 'rate'])
    .where((eb) => eb.or([eb.and([eb('base', '=', base), eb('quote', '=', quote)]), eb.and([eb('base', '=', quote), eb('quote', '=', base)])]))
    .execute();
  const direct = rows.find((r) => r.base === base);
  if (direct) return { base, quote, rate: parseRate(direct.rate) as ScaledRate, source: 'operator' };
  const inverse = rows.find((r) => r.base === quote);
  if (inverse) return { base, quote, rate: invertRate(parseRate(inverse.rate) as ScaledRate), source: 'operator (inverse)' };
  const b = PER_USD[base];
  const q = PER_USD[quote];
  if (b === undefined || q === undefined) return null;
  // quote per base = (quote per USD) / (base per USD), rounded down.
  return { base, quote, rate: ((parseRate(q) as ScaledRate) * SCALE) / (parseRate(b) as ScaledRate), source: `snapshot ${SNAPSHOT_DATE}` };
}

/** `tollgate fx set EUR USD 1.0842`: one unit of `base` is `rate` units of `quote`, from now on. */
export async function setRate(store: Store, base: string, quote: string, text: string, now_ms: number): Promise<Rate> {
  checkCurrency(base);
  checkCurrency(quote);
  if (base === quote) throw new FxError('base and quote must differ');
  const rate = parseRate(text);
  if (rate === null) throw new FxError(`rate ${JSON.stringify(text)} must be a positive decimal such as 1.0842 (at most ${RATE_SCALE} decimal places)`);
  const stored = formatRate(rate);
  await store.transaction(async (tx) => {
    // One row per pair: the inverse row, if the operator set it the other way round before, goes.
    await tx.deleteFrom('fx_rates').where('base', '=', quote).where('quote', '=', base).execute();
    await tx
      .insertInto('fx_rates')
      .values({ base, quote, rate: stored, updated_at: now_ms })
      .onConflict((oc) => oc.columns(['base', 'quote']).doUpdateSet({ rate: stored, updated_at: now_ms }))
      .execute();
  });
  return { base, quote, rate, source: 'operator' };
}

export async function listRates(db: Kysely<DB>): Promise<Array<{ base: string; quote: string; rate: string; updated_at: number }>> {
  const rows = await db.selectFrom('fx_rates').selectAll().orderBy('base').orderBy('quote').execute();
  return rows.map((r) => ({ ...r, updated_at: Number(r.updated_at) }));
}
