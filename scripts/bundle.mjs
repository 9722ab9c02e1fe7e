// Modules bundled for the processes the suite and the bench start by the hundred (issue 36):
// each entry becomes one module at the same place under the output folder as in the compiled
// build, the code entries share in <out>/chunks/, with the heaviest pure-JavaScript packages
// inside. A process then loads a few dozen files instead of ~2,300 (TypeBox alone is 679
// modules, Kysely 262, the `stripe` package 218): about 1.4 s less CPU per test file.
//
// Nothing else changes: `tsc -p tsconfig.test.json` still typechecks and writes dist-test/
// (the crash, fault and fuzz runners, the worker threads and the scripts tests spawn run from
// there), and every module of src/ bundled here sees `import.meta.url` as its twin's address
// in the compiled build (dist-test/, or dist/ with --twin dist), so the paths it derives from
// it (the repository, docs/, a worker's file, a `createRequire`) are the unbundled build's.
//
//   node scripts/bundle.mjs                                   every src/**/*.test.ts into dist-bundle/ (npm test)
//   node scripts/bundle.mjs --out DIR --twin dist FILE.ts…    those entries (the bench's child processes)
//   node scripts/bundle.mjs --shipped                         the CLI and server as shipped: src/cli/run.ts into
//                                                             dist/bundle/cli/run.js, twin dist/ (`npm run build`,
//                                                             docs/decisions/0101)
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import * as esbuild from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = path.join(ROOT, 'src');
const { values, positionals: given } = parseArgs({
  options: { out: { type: 'string' }, twin: { type: 'string' }, shipped: { type: 'boolean' } },
  allowPositionals: true,
});
const SHIPPED = values.shipped === true;
const OUT = path.resolve(ROOT, SHIPPED ? 'dist/bundle' : (values.out ?? 'dist-bundle'));
const TWIN = path.join(ROOT, SHIPPED ? 'dist' : (values.twin ?? 'dist-test'));
const positionals = SHIPPED ? ['src/cli/run.ts'] : given;

/**
 * Packages bundled in: pure JavaScript, not loaded at run time by a package left outside (one
 * copy each: `ipaddr.js`, which Fastify's proxy-addr loads too, stays outside), no files read
 * beside their own modules. Everything else (Fastify and its plugins, pino and
 * its worker transports, the native drivers, Swagger UI's files) loads from node_modules as usual.
 */
const BUNDLED = new Set([
  'typebox',
  '@sinclair/typebox',
  'kysely',
  'stripe',
  'i18n-iso-countries',
  'qrcode',
  'card-validator',
  'currency-codes',
  'csv-parse',
  'csv-stringify',
  'fast-xml-parser',
  'ibantools',
  'cockatiel',
  'cpf-cnpj-validator',
  'fast-check',
  'marked',
  'otpauth',
  'qs',
  'standardwebhooks',
  'tldts',
]);

const packageOf = (spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);

function tests(dir, out = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) tests(p, out);
    else if (e.name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

/** Bare imports: bundled when their package is in BUNDLED (or imported by one that is), else left to node_modules. */
const externals = {
  name: 'externals',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return { external: true };
      const inside = args.importer.includes(`${path.sep}node_modules${path.sep}`);
      if (inside || BUNDLED.has(packageOf(args.path))) return undefined;
      return { external: true };
    });
  },
};

/**
 * Each src/ module's `import.meta.url` (and `.dirname`) is its compiled twin's address; any
 * other module's (bench/, which runs from its sources) its own source file's.
 */
const twinUrl = {
  name: 'twin-url',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!args.path.startsWith(ROOT + path.sep) || args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const inSrc = args.path.startsWith(SRC + path.sep);
      const twin = inSrc ? path.join(TWIN, path.relative(SRC, args.path).replace(/\.ts$/, '.js')) : args.path;
      // The expression, not the words: a test that writes `import.meta.url` into a script keeps it.
      const out = await esbuild.transform(readFileSync(args.path, 'utf8'), {
        loader: 'ts',
        sourcefile: args.path,
        sourcemap: 'inline',
        target: 'node20',
        define: { 'import.meta.url': JSON.stringify(pathToFileURL(twin).href), 'import.meta.dirname': JSON.stringify(path.dirname(twin)) },
      });
      return { contents: out.code, loader: 'js' };
    });
  },
};

const t0 = Date.now();
// The test bundle is made afresh. The shipped one is written over the last (its chunks are named
// by their contents), and the files this build did not write are removed after, so the folder is
// never empty while it is rebuilt. Not atomic: a process that starts while esbuild writes, or that
// imports an old chunk lazily after the prune, can still miss a file (the build runs when no
// gateway runs from this checkout: `npm ci`, `npm run build`, a start after a source changed).
if (!SHIPPED) rmSync(OUT, { recursive: true, force: true });
const result = await esbuild.build({
  entryPoints: positionals.length ? positionals.map((p) => path.resolve(ROOT, p)) : tests(SRC),
  outbase: positionals.length && !SHIPPED ? ROOT : SRC,
  outdir: OUT,
  // The metafile's paths relative to the repository, whichever folder the build was started from.
  absWorkingDir: ROOT,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Stack traces map to the sources' files and lines (`--enable-source-maps`, or bin/tollgate.js
  // turning them on); the maps leave out the sources' text, and the code is minified but for its
  // names, so each process reads, parses and compiles less: a test file of the in-process
  // gateway 3.29 s → 2.95 s of CPU.
  sourcemap: 'linked',
  sourcesContent: false,
  minifyWhitespace: true,
  minifySyntax: true,
  chunkNames: 'chunks/[name]-[hash]',
  // CommonJS packages bundled in call `require` for Node's own modules.
  banner: { js: "import { createRequire as __tollgateRequire } from 'node:module'; const require = __tollgateRequire(import.meta.url);" },
  plugins: [externals, twinUrl],
  logLevel: 'error',
  metafile: true,
});
const outputs = Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.js')).length;
if (SHIPPED) {
  const written = new Set(Object.keys(result.metafile.outputs).map((f) => path.resolve(ROOT, f)));
  const stale = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) stale(p);
      else if (!written.has(p) && e.name !== 'modules.json') rmSync(p, { force: true });
    }
  };
  stale(OUT);
}
// What each file of the shipped bundle holds (a test checks what a CLI command loads by it).
if (SHIPPED)
  writeFileSync(
    path.join(OUT, 'modules.json'),
    `${JSON.stringify(
      Object.fromEntries(
        Object.entries(result.metafile.outputs)
          .filter(([f]) => f.endsWith('.js'))
          .map(([f, o]) => [path.relative(OUT, path.resolve(ROOT, f)), Object.keys(o.inputs).sort()]),
      ),
      null,
      1,
    )}\n`,
  );
console.log(`bundled ${outputs} files into ${path.relative(ROOT, OUT)}/ in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
