// Stripe's request bodies are `application/x-www-form-urlencoded` with nested keys
// (`payment_method_data[card][number]=…`, lists as `expand[0]=…`). Read back into the nested
// object they encode: the mock server reads requests with it, and the contract tests
// validate it against the operation's schema in spec3.json (values stay strings; the
// validator coerces them to the schema's types, as Stripe does).

/** The most keys and nesting one body may have (docs/style.md §9): a mock and a test, but bounded all the same. */
const MAX_KEYS = 500;
const MAX_DEPTH = 8;

export type FormValue = string | FormObject | FormValue[];
export interface FormObject {
  [key: string]: FormValue;
}

export function decodeForm(raw: string): FormObject {
  const root: FormObject = {};
  const params = new URLSearchParams(raw);
  let n = 0;
  for (const [key, value] of params) {
    if (++n > MAX_KEYS) throw new Error(`more than ${MAX_KEYS} form keys`);
    const path = parseKey(key);
    if (path.length > MAX_DEPTH) throw new Error(`a form key nested deeper than ${MAX_DEPTH}`);
    put(root, path, value);
  }
  return lists(root) as FormObject;
}

/** `a[b][0]` → ['a', 'b', '0']; `a[]` appends. */
function parseKey(key: string): string[] {
  const first = key.indexOf('[');
  if (first < 0) return [key];
  const path = [key.slice(0, first)];
  for (const m of key.slice(first).matchAll(/\[([^\]]*)\]/g)) path.push(m[1] ?? '');
  return path;
}

function put(obj: FormObject, path: string[], value: string): void {
  let at = obj;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i] === '' ? String(Object.keys(at).length) : (path[i] as string);
    if (k === '__proto__' || k === 'constructor' || k === 'prototype') return;
    const next = at[k];
    if (next === undefined || typeof next === 'string' || Array.isArray(next)) at[k] = {};
    at = at[k] as FormObject;
  }
  const last = path[path.length - 1] as string;
  const k = last === '' ? String(Object.keys(at).length) : last;
  if (k === '__proto__' || k === 'constructor' || k === 'prototype') return;
  at[k] = value;
}

/** Objects whose keys are 0…n-1 are lists. */
function lists(v: FormValue): FormValue {
  if (typeof v === 'string' || Array.isArray(v)) return v;
  const keys = Object.keys(v);
  const out: FormObject = {};
  for (const k of keys) out[k] = lists(v[k] as FormValue);
  if (keys.length > 0 && keys.every((k, i) => k === String(i))) return keys.map((k) => out[k] as FormValue);
  return out;
}
