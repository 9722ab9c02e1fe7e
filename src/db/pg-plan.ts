// A write plan (src/db/plan.ts) on PostgreSQL in ONE round trip (issue 15). `pg` sends one
// statement per round trip, so a payment's unit (card, payment, signals, ledger, balances,
// event) took BEGIN, seven statements and COMMIT: nine waits on the server, each with its
// own parse and wake-up on both sides. Here the recorded statements go as one simple-query
// message: PostgreSQL runs a message of several statements as ONE implicit transaction
// (all or nothing; an error rolls it all back and later statements do not run).
//
// - Values are put into the text as quoted literals, which PostgreSQL types exactly as it
//   types `pg`'s untyped parameters (both are "unknown" until the context decides), from
//   the same text `pg` would have sent. Only strings, finite numbers, bigints, booleans and
//   nulls are put in; a plan with anything else (or a NUL, which PostgreSQL's text cannot
//   hold) runs the old way: statement by statement with its parameters, in a transaction.
// - A guarded statement (must change exactly one row) is wrapped so that changing any other
//   number of rows raises an error naming it, which rolls the transaction back; the plan
//   then fails with the guard's own error, as on SQLite.
import pg from 'pg';
import type { Plan } from './plan.js';

const GUARD = /tollgate plan guard (\d+):/;

/** A value as a literal with the text `pg` would send for it as a parameter; null if it cannot be one. */
function literal(v: unknown): string | null {
  if (v === null || v === undefined) return 'NULL';
  let text: string;
  if (typeof v === 'string') text = v;
  else if (typeof v === 'number') {
    if (!Number.isFinite(v)) return null;
    text = String(v);
  } else if (typeof v === 'bigint' || typeof v === 'boolean') text = String(v);
  else return null;
  if (text.includes('\u0000')) return null;
  // The common case without quotes or backslashes needs no escaping pass.
  return text.includes("'") || text.includes('\\') ? pg.escapeLiteral(text) : `'${text}'`;
}

/**
 * `sql` with each `$n` outside quoted strings and identifiers replaced by the n-th value's
 * literal; null if a value cannot be a literal or a placeholder has no value.
 */
export function inlineParameters(sql: string, parameters: readonly unknown[]): string | null {
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
        if (n < 1 || n > parameters.length) return null;
        const lit = literal(parameters[n - 1]);
        if (lit === null) return null;
        out += sql.slice(from, i) + lit;
        from = j;
      }
      i = j;
      continue;
    }
    i++;
  }
  return out + sql.slice(from);
}

/** The plan as one multi-statement text, or null where it must run statement by statement. */
export function planAsOneQuery(plan: Plan): string | null {
  const parts: string[] = [];
  for (let i = 0; i < plan.statements.length; i++) {
    const st = plan.statements[i] as Plan['statements'][number];
    const text = inlineParameters(st.sql, st.parameters);
    if (text === null) return null;
    parts.push(
      st.guard
        ? `WITH g AS (${text} RETURNING 1) SELECT CASE WHEN count(*) = 1 THEN 0 ELSE ('tollgate plan guard ${i}: ' || count(*) || ' rows')::int END FROM g`
        : text,
    );
  }
  return parts.join(';\n');
}

/** The guarded statement's index if `error` is a guard's (the transaction rolled back), else null. */
export function guardFailed(error: unknown): number | null {
  const m = GUARD.exec(String((error as { message?: unknown })?.message ?? ''));
  return m ? Number(m[1]) : null;
}
