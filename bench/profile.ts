// `node --import tsx bench/profile.ts FILE.cpuprofile [--requests N] [--top 30]` (issue 15):
// where a gateway's CPU went under a bench, from a V8 CPU profile (`npm run bench -- --only
// hot --cpu-prof DIR`). Each sample is filed under the stage of its innermost frame that
// belongs to one (parse, signature, validation, risk, processor, storage, answer, logging,
// http, …), then the top functions by self time. With --requests (the requests the profiled
// run answered, warm-up included), every figure is also given in µs per request. With
// --last S, only the profile's last S seconds count (the last scenario of a run).
import fs from 'node:fs';
import { parseArgs } from 'node:util';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { requests: { type: 'string' }, top: { type: 'string' }, last: { type: 'string' } },
});
const file = positionals[0];
if (!file) throw new Error('usage: bench/profile.ts FILE.cpuprofile [--requests N] [--top 30]');
const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const requests = args.requests ? Number(args.requests) : 0;
const top = Number(args.top ?? 30);

/** Stages in the order a request meets them; the first rule that matches a frame's URL (or name) wins. */
const STAGES: Array<[stage: string, test: (url: string, fn: string) => boolean]> = [
  [
    'storage: statement execution',
    (u, f) =>
      /better-sqlite3|node_modules\/pg(-protocol|-pool)?\/|kysely\/dist\/esm\/dialect\/sqlite\/sqlite-driver/.test(u) ||
      (/^(run|all|get|iterate)$/.test(f) && u === ''),
  ],
  ['storage: query building', (u) => /node_modules\/kysely\//.test(u) || /(src|dist)\/db\/prepared/.test(u)],
  ['storage: SQLite threads (statements, commit)', (u) => /(src|dist)\/db\/sqlite-thread/.test(u)],
  ['storage: event-loop writer (statements, commit)', (u) => /(src|dist)\/db\/store/.test(u)],
  ['signature (canonical string, HMAC)', (u) => /(src|dist)\/crypto\/signature|(src|dist)\/client\/sign/.test(u)],
  ['crypto (keyring, ids)', (u) => /(src|dist)\/crypto\//.test(u)],
  ['risk', (u) => /(src|dist)\/risk\//.test(u)],
  ['processor (sandbox)', (u) => /(src|dist)\/processors\//.test(u)],
  ['ledger', (u) => /(src|dist)\/ledger\//.test(u)],
  ['events (outbox)', (u) => /(src|dist)\/notifications\/|(src|dist)\/payments\/events|(src|dist)\/payments\/order-record/.test(u)],
  ['validation (ajv, checks)', (u) => /node_modules\/ajv|(src|dist)\/payments\/validate|(src|dist)\/http\/finite/.test(u)],
  ['answer (XML/JSON)', (u) => /(src|dist)\/http\/xml|fast-xml-parser|fast-json-stringify|(src|dist)\/payments\/format/.test(u)],
  ['parse (body)', (u) => /(src|dist)\/http\/body|secure-json-parse|node_modules\/qs\//.test(u)],
  ['logging', (u) => /pino|(src|dist)\/http\/logging|thread-stream|sonic-boom/.test(u)],
  ['domain (payments, cards)', (u) => /(src|dist)\/(payments|cards|threeds|subscriptions|review|money)\//.test(u)],
  ['gateway plumbing (hooks, idempotency, metrics)', (u) => /(src|dist)\/|prom-client/.test(u)],
  [
    'http (fastify, node:http)',
    (u) => /node_modules\/(fastify|@fastify|find-my-way|light-my-request|avvio)|node:_http|node:net|node:stream|node:internal\/(http|stream|net)/.test(u),
  ],
  ['node internals', (u) => u.startsWith('node:')],
];

const byId = new Map<number, Node>(prof.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const stageOf = new Map<number, string>();
function stage(id: number): string {
  const known = stageOf.get(id);
  if (known) return known;
  const n = byId.get(id) as Node;
  const { url, functionName } = n.callFrame;
  let s: string | undefined;
  if (functionName === '(idle)') s = '(idle)';
  else if (functionName === '(garbage collector)') s = 'garbage collection';
  else if (functionName === '(program)') s = '(program: native, not attributed)';
  else {
    for (const [name, test] of STAGES)
      if ((url || functionName) && test(url, functionName)) {
        s = name;
        break;
      }
    if (!s) {
      const up = parent.get(id);
      s = up === undefined ? 'other' : stage(up);
    }
  }
  stageOf.set(id, s);
  return s;
}

const selfUs = new Map<number, number>();
const from = args.last ? prof.endTime - Number(args.last) * 1e6 : prof.startTime;
let at = prof.startTime;
prof.samples.forEach((id, i) => {
  const dt = prof.timeDeltas[i] ?? 0;
  at += dt;
  if (at >= from) selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
});
const total = prof.endTime - Math.max(from, prof.startTime);
const stages = new Map<string, number>();
const fns = new Map<string, number>();
for (const [id, us] of selfUs) {
  const s = stage(id);
  stages.set(s, (stages.get(s) ?? 0) + us);
  const n = byId.get(id) as Node;
  const where = n.callFrame.url.replace(/^.*\/(node_modules\/|(src|dist)\/|dist\/)/, '$1');
  const key = `${n.callFrame.functionName || '(anonymous)'}  ${where}:${n.callFrame.lineNumber + 1}`;
  fns.set(key, (fns.get(key) ?? 0) + us);
}
const busy = total - (stages.get('(idle)') ?? 0);
const row = (name: string, us: number) =>
  `| ${name} | ${(us / 1000).toFixed(0)} | ${((100 * us) / busy).toFixed(1)}% |${requests ? ` ${(us / requests).toFixed(1)} |` : ''}`;
const head = `| | ms | of busy |${requests ? ' µs per request |' : ''}\n|---|---:|---:|${requests ? '---:|' : ''}`;
console.log(`${file}: ${(total / 1e6).toFixed(1)} s profiled, busy ${(busy / 1e6).toFixed(1)} s${requests ? `, ${requests} requests` : ''}\n`);
console.log(head);
for (const [name, us] of [...stages].filter(([n]) => n !== '(idle)').sort((a, b) => b[1] - a[1])) console.log(row(name, us));
console.log(row('**busy in all**', busy));
console.log(`\ntop ${top} functions by self time\n\n${head}`);
for (const [name, us] of [...fns]
  .filter(([n]) => !n.startsWith('(idle)'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, top))
  console.log(row(name.replace(/\|/g, '\\|'), us));
