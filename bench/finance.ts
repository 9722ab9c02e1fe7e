// The finance step of `npm run bench` (issue 35): a day's settlement batch of 100,000 payments
// (bench/settlement.ts; target ≤ 10 s) and the reconciliation of a 1,000,000-line Adyen
// settlement details report (bench/reconcile.ts; targets ≥ 50,000 lines/s, peak RSS ≤ 256 MiB),
// each in its own process on its own fresh database of the bench's engine, the reconciler
// running the bench's compiled build. --quick: 20,000 payments and 50,000 lines, the targets
// informative (the sizes are not the issue's).
import { spawn } from 'node:child_process';
import { childArgs } from './children.js';

export interface FinanceReport {
  settlement: { payments: number; seeded_s: number; built_s: number; settled_s: number; lines: number; ok: boolean } | { error: string };
  reconcile: { lines: number; seeded_s: number; seconds: number; lines_per_s: number; peak_rss_mib: number; cpu_s: number } | { error: string };
}

/** Runs `bench/<script> args…` (bundled or through tsx: bench/children.ts), echoing its lines to `log`; the parsed `BENCH_RESULT` line, or the failure. */
function run(root: string, script: string, args: string[], log: (s: string) => void): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...childArgs(script), ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: process.env,
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d;
    });
    child.on('close', (code) => {
      const lines = out.split('\n').filter(Boolean);
      for (const l of lines) if (!l.startsWith('BENCH_RESULT ')) log(`  ${l}`);
      const result = lines.find((l) => l.startsWith('BENCH_RESULT '));
      if (!result) return resolve({ error: `${script} exited ${code}: ${(err || out).trim().split('\n').slice(-3).join(' | ')}` });
      resolve(JSON.parse(result.slice('BENCH_RESULT '.length)) as Record<string, unknown>);
    });
  });
}

export async function benchFinance(o: {
  root: string;
  engine: 'sqlite' | 'postgres';
  quick: boolean;
  build: string;
  log: (s: string) => void;
}): Promise<FinanceReport> {
  const payments = o.quick ? 20_000 : 100_000;
  const lines = o.quick ? 50_000 : 1_000_000;
  o.log(`settlement: a day's batch of ${payments.toLocaleString('en')} payments, fresh database…`);
  const settlement = (await run(o.root, 'settlement.ts', ['--payments', String(payments), '--engine', o.engine], o.log)) as FinanceReport['settlement'];
  o.log(`reconciliation: a ${lines.toLocaleString('en')}-line Adyen settlement details report, fresh database…`);
  const reconcile = (await run(
    o.root,
    'reconcile.ts',
    ['--lines', String(lines), '--engine', o.engine, '--build', o.build],
    o.log,
  )) as FinanceReport['reconcile'];
  return { settlement, reconcile };
}

const r1 = (x: number) => Math.round(x * 10) / 10;

/** The finance targets: met or missed at the sizes, informative in --quick. */
export function financeTargets(f: FinanceReport, quick: boolean): Array<{ name: string; goal: string; measured: string; met: boolean | null }> {
  const q = quick ? ' (quick: informative, not the issue’s size)' : '';
  const s = f.settlement;
  const r = f.reconcile;
  return [
    'error' in s
      ? { name: 'settlement: a day’s batch', goal: '≤ 10 s', measured: s.error, met: false }
      : {
          name: `settlement: a day’s batch of ${s.payments.toLocaleString('en')} payments built (lines and sums verified)${q}`,
          goal: '≤ 10 s',
          measured: `${r1(s.built_s)} s${s.ok ? '' : ', NOT verified'}`,
          met: !s.ok ? false : quick ? null : s.built_s <= 10,
        },
    ...('error' in r
      ? [{ name: 'reconcile an Adyen report', goal: '≥ 50,000 lines/s, ≤ 256 MiB', measured: r.error, met: false }]
      : [
          {
            name: `reconcile a ${r.lines.toLocaleString('en')}-line Adyen report: lines/s${q}`,
            goal: '≥ 50,000',
            measured: `${Math.round(r.lines_per_s).toLocaleString('en')} (${r1(r.seconds)} s)`,
            met: quick ? null : r.lines_per_s >= 50_000,
          },
          {
            name: `reconcile a ${r.lines.toLocaleString('en')}-line Adyen report: peak RSS${q}`,
            goal: '≤ 256 MiB',
            measured: `${Math.round(r.peak_rss_mib)} MiB`,
            met: quick ? null : r.peak_rss_mib <= 256,
          },
        ]),
  ];
}

export function financeMarkdown(f: FinanceReport): string[] {
  const s = f.settlement;
  const r = f.reconcile;
  return [
    'Finance (`bench/finance.ts`): each on a fresh database of the engine, in its own process.',
    '',
    'error' in s
      ? `- settlement batch: ${s.error}`
      : `- settlement batch (\`bench/settlement.ts\`): ${s.payments.toLocaleString('en')} captured payments of one day seeded by SQL in ${r1(s.seeded_s)} s; the day's batch closed in ${r1(s.built_s)} s (${s.lines.toLocaleString('en')} lines), made available in ${r1(s.settled_s)} s; ${s.ok ? 'verified' : 'NOT verified'}.`,
    'error' in r
      ? `- reconciliation: ${r.error}`
      : `- reconciliation (\`bench/reconcile.ts\`): ${r.lines.toLocaleString('en')} payments seeded in ${r1(r.seeded_s)} s; the report read and matched in ${r1(r.seconds)} s = ${Math.round(r.lines_per_s).toLocaleString('en')} lines/s, CPU ${r1(r.cpu_s)} s, peak RSS of the reconciling process ${Math.round(r.peak_rss_mib)} MiB.`,
  ];
}
