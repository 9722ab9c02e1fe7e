// How route schemas become validators and serializers. Fastify's own compilers (Ajv for
// requests, fast-json-stringify for answers), with two changes:
//  - one Ajv and one serializer cache per process, so a schema object every app of the process
//    shares is compiled once, however many apps the process builds (the test suite builds
//    hundreds; the cluster's workers build one each);
//  - compilation can wait for a route's first use. Compiling the 200-odd schemas of every route
//    costs a second and more of CPU at `ready`, which a server pays once but every test
//    gateway paid again, for the three routes it calls. `serve` compiles them all at start
//    (an invalid schema stops the start, as before, and no first request waits) unless
//    TOLLGATE_ROUTE_SCHEMAS=on_first_use (the test suite's spawned gateways); in-process test
//    gateways compile on first use.
import AjvCompiler from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
/** What Fastify hands a compiler for one schema of one route. */
interface RouteSchema {
  schema: unknown;
  method?: string;
  url?: string;
  httpPart?: string;
  httpStatus?: string;
  contentType?: string;
}
type Builder<F> = (externalSchemas: unknown, options: unknown) => (route: RouteSchema) => F;
type Validator = ((data: unknown, ctx?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };
type Serializer = (data: unknown) => string;

/** When route schemas are compiled: all at `ready` (a server), or each at its route's first request (tests). */
export type SchemaCompilation = 'at_ready' | 'on_first_use';

// One per process: the pools key on the external schemas and options, Ajv's cache on the schema object.
const sharedValidators = AjvCompiler() as unknown as Builder<Validator>;
const sharedSerializers = SerializerSelector() as unknown as Builder<Serializer>;
/** Serializers by answer schema object, per serializer options (fast-json-stringify keeps no cache of its own). */
const serializerCache = new Map<string, WeakMap<object, Serializer>>();

export interface SchemaCompilers {
  compilersFactory: CompilersFactory;
  /** Compiles every schema still waiting for its first use; throws what an invalid one throws. */
  compileAll(): void;
  /** How many wait. */
  pending(): number;
}

export function schemaCompilers(): SchemaCompilers {
  const waiting = new Set<() => unknown>();
  const later = <F>(compile: () => F): (() => F) => {
    let compiled: F | undefined;
    const get = (): F => {
      if (compiled === undefined) {
        compiled = compile();
        waiting.delete(get);
      }
      return compiled;
    };
    waiting.add(get);
    return get;
  };

  const buildValidator: Builder<Validator> = (externalSchemas, options) => {
    const compile = sharedValidators(externalSchemas, options);
    return (route) => {
      const get = later(() => compile(route));
      const validate: Validator = (data, ctx) => {
        const fn = get();
        const result = fn(data, ctx);
        validate.errors = fn.errors;
        return result;
      };
      // Fastify hands Ajv's functions the parent object (so a coerced root value is written
      // back) only when the function has `schemaEnv`; the compiled one is Ajv's.
      validate.schemaEnv = true;
      return validate;
    };
  };

  const buildSerializer: Builder<Serializer> = (externalSchemas, options) => {
    const compile = sharedSerializers(externalSchemas, options);
    const key = JSON.stringify([externalSchemas, options ?? null]);
    const byObject = serializerCache.get(key) ?? new WeakMap<object, Serializer>();
    serializerCache.set(key, byObject);
    return (route) => {
      const get = later(() => {
        const schema = route.schema as object;
        const known = byObject.get(schema);
        if (known) return known;
        const fn = compile(route);
        byObject.set(schema, fn);
        return fn;
      });
      return (data: unknown) => get()(data);
    };
  };

  return {
    compilersFactory: { buildValidator, buildSerializer } as unknown as CompilersFactory,
    compileAll() {
      for (const get of [...waiting]) get();
    },
    pending: () => waiting.size,
  };
}
