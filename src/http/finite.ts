// Ajv coerces a query, form or XML string such as "1e309" or "Infinity" into a non-finite number
// and then skips every numeric keyword for it (type integer, minimum, maximum), so `limit=1e309`
// reached a handler as Infinity and the database refused it (a 500). JSON cannot carry one past
// the validator (its `type` check refuses Infinity), so only coercion needs guarding.
//
// This plugin wraps every validator the instance compiles: data that passed but holds a
// non-finite number anywhere fails with a `type` error at that path, which each interface's
// error answer already turns into "<field> must be a finite number".

/** The part of an Ajv instance this plugin touches (Ajv is Fastify's, not a dependency of ours). */
interface Ajv {
  compile(schema: never, meta?: boolean): unknown;
}

type Validate = ((this: unknown, data: unknown, ctx?: { parentData?: any; parentDataProperty?: string | number }) => boolean) & {
  errors?: unknown[] | null;
};

/** The first path (JSON pointer) holding NaN or ±Infinity, or undefined. Bodies are depth-bounded by their parsers. */
function nonFinite(value: unknown, path: string, depth: number): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : path;
  if (value === null || typeof value !== 'object' || depth > 64) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nonFinite(value[i], `${path}/${i}`, depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const key in value as Record<string, unknown>) {
    if (!Object.hasOwn(value, key)) continue;
    const found = nonFinite((value as Record<string, unknown>)[key], `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

export function finiteNumbers(ajv: Ajv): void {
  const compile = ajv.compile.bind(ajv);
  ajv.compile = ((schema: never, meta?: boolean) => {
    const validate = compile(schema, meta) as unknown as Validate;
    const wrapped: Validate = function (this: unknown, data, ctx) {
      const ok = validate.call(this, data, ctx);
      if (!ok) {
        wrapped.errors = validate.errors;
        return false;
      }
      // A coerced root value lands in its parent, not in `data`.
      const value = ctx?.parentData && ctx.parentDataProperty !== undefined ? ctx.parentData[ctx.parentDataProperty] : data;
      const path = nonFinite(value, '', 0);
      if (path === undefined) {
        wrapped.errors = null;
        return true;
      }
      wrapped.errors = [{ keyword: 'type', instancePath: path, schemaPath: '#/type', params: { type: 'finite' }, message: 'must be a finite number' }];
      return false;
    } as Validate;
    // Fastify reads `schemaEnv` (to pass the parent for root coercion) and Ajv's own fields.
    Object.assign(wrapped, validate);
    return wrapped;
  }) as Ajv['compile'];
}
