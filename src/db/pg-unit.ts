// A write unit (src/db/unit.ts) on PostgreSQL in ONE round trip (issue 15). `pg` sends one
// statement per round trip, so a payment's unit (card, payment, signals, ledger, balances,
// event) took BEGIN, seven statements and COMMIT: nine waits on the server, each with its
// own parse and wake-up on both sides. Here the unit goes as one simple-query message:
// PostgreSQL runs a message of several statements as ONE implicit transaction (all or
// nothing; an error rolls it all back and later statements do not run). The simple-query
// protocol takes no parameters, so:
//
// - Values are put into the text as quoted literals, which PostgreSQL types exactly as it
//   types `pg`'s untyped parameters (both are "unknown" until the context decides), from
//   the same text `pg` would have sent (String(v) for numbers and bigints). A unit carries
//   only strings, finite numbers, bigints and nulls (src/db/unit.ts checks it as it is
//   built); a string holding a NUL fails as PostgreSQL fails it as a parameter (22021).
//   pg-unit.test.ts proves, property by property on a real server, that a literal
//   statement and its parameterised twin store the same row or fail with the same code.
// - An operation with an expected row count is wrapped so that changing any other number
//   of rows raises an error naming it, which rolls the transaction back; the unit then
//   fails with the operation's own error, as on SQLite.
import { randomBytes } from 'node:crypto';
import { pgDriver } from './pg-driver.js';
import type { UnitValue, WriteUnit } from './unit.js';

// Per process: a value echoed in a database error message cannot pass for a check's failure.
const MARK = `tollgate unit ${randomBytes(6).toString('hex')} op`;
const CHECK_FAILED = new RegExp(`${MARK} (\\d+):`);

/** What `pg` raises for a NUL in a text parameter (PostgreSQL's text cannot hold one). */
function nulError(): Error {
  return Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
}

/** A value as a literal with the text `pg` would send for it as a parameter. */
export function literal(v: UnitValue): string {
  if (v === null) return 'NULL';
  let text: string;
  if (typeof v === 'string') {
    if (v.includes('\u0000')) throw nulError();
    text = v;
  } else if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new TypeError(`${v} cannot be sent to PostgreSQL`);
    text = String(v);
  } else if (typeof v === 'bigint') text = String(v);
  else throw new TypeError(`a ${typeof v} cannot be a write unit's value`);
  // The common case without quotes or backslashes needs no escaping pass.
  return text.includes("'") || text.includes('\\') ? pgDriver().escapeLiteral(text) : `'${text}'`;
}

/**
 * `sql` with each `$n` outside quoted strings and identifiers replaced by the n-th value's
 * literal. Kysely's PostgreSQL compiler writes no other kind of quoting or comment.
 */
export function inlineParameters(sql: string, parameters: readonly UnitValue[]): string {
  let out = '';
  let from = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql.charCodeAt(i);
    if (c === 39 /* ' */ || c === 34 /* " */) {
      const end = sql.indexOf(sql[i] as string, i + 1);
      // Doubled quotes inside a quoted span are two spans back to back: same result.
      i = end < 0 ? sql.length : end + 1;
      continue;
    }
    if (c === 36 /* $ */) {
      let j = i + 1;
      while (j < sql.length && sql.charCodeAt(j) >= 48 && sql.charCodeAt(j) <= 57) j++;
      if (j > i + 1) {
        const n = Number(sql.slice(i + 1, j));
        if (n < 1 || n > parameters.length) throw new Error(`$${n} has no value (${parameters.length} given)`);
        out += sql.slice(from, i) + literal(parameters[n - 1] as UnitValue);
        from = j;
      }
      i = j;
      continue;
    }
    i++;
  }
  return out + sql.slice(from);
}

/** The unit as one multi-statement text. Throws where a value cannot reach PostgreSQL (as a parameter could not). */
export function unitAsOneQuery(unit: WriteUnit): string {
  const parts: string[] = [];
  unit.ops.forEach((op, i) => {
    const text = inlineParameters(op.sql, op.parameters);
    const rows = op.expected?.rows;
    parts.push(
      rows === undefined
        ? text
        : `WITH g AS (${text} RETURNING 1) SELECT CASE WHEN count(*) = ${rows} THEN 0 ELSE ('${MARK} ${i}: ' || count(*) || ' rows')::int END FROM g`,
    );
  });
  return parts.join(';\n');
}

/** The index of the operation whose row count failed if `error` says so (the transaction rolled back), else null. */
export function checkFailed(error: unknown): number | null {
  const m = CHECK_FAILED.exec(String((error as { message?: unknown })?.message ?? ''));
  return m ? Number(m[1]) : null;
}
