// The remote sandbox's latency and faults (docs/remote-sandbox.md): a seeded random source,
// a lognormal latency from a median and a p99, and the fault table. Pure: no I/O, so a run
// with one seed and one order of requests serves the same delays and the same faults.

/**
 * The faults the sandbox can play. The answer faults exclude each other (at most one a
 * request: the first that fires); `slow` and the webhook faults combine with any.
 */
export const ANSWER_FAULTS = ['hang-after', '5xx-before', '5xx-after', 'reset-before', 'reset-after'] as const;
export const OTHER_FAULTS = ['slow', 'dup-webhooks', 'delay-webhooks', 'reorder-webhooks', 'drop-webhooks'] as const;
export type AnswerFault = (typeof ANSWER_FAULTS)[number];
export type Fault = AnswerFault | (typeof OTHER_FAULTS)[number];
/** `reset` in a spec or header: a reset before or after processing, one or the other at random. */
const ALIASES = { reset: ['reset-before', 'reset-after'] } as const satisfies Record<string, readonly Fault[]>;
const KNOWN: ReadonlySet<string> = new Set<string>([...ANSWER_FAULTS, ...OTHER_FAULTS]);

/** How often a fault fires: at random with a probability, or exactly every `every`-th request. */
export type Trigger = { kind: 'rate'; rate: number } | { kind: 'every'; every: number };

export type FaultSpec = ReadonlyArray<{ fault: Fault | 'reset'; trigger: Trigger }>;

/** A bad `--faults` value or fault header, naming what is wrong. */
export class FaultSpecError extends Error {}

/** Reads `slow:0.1,hang-after:1/20,…` (a rate from 0 to 1, or `1/N`: every N-th request). */
export function parseFaultSpec(text: string): FaultSpec {
  const out: Array<{ fault: Fault | 'reset'; trigger: Trigger }> = [];
  for (const part of text.split(',').map((p) => p.trim())) {
    if (!part) continue;
    const [name = '', value = '', extra] = part.split(':');
    if (extra !== undefined || !value) throw new FaultSpecError(`--faults: ${JSON.stringify(part)} is not NAME:RATE or NAME:1/N`);
    if (!KNOWN.has(name) && !(name in ALIASES)) throw new FaultSpecError(`--faults: ${JSON.stringify(name)} is not a fault (${faultNames().join(', ')})`);
    const every = /^1\/(\d{1,9})$/.exec(value);
    const rate = Number(value);
    if (every) {
      const n = Number(every[1]);
      if (n < 1) throw new FaultSpecError(`--faults: ${name}:1/N needs N of 1 or more`);
      out.push({ fault: name as Fault, trigger: { kind: 'every', every: n } });
    } else if (/^(0|1|0?\.\d+|1\.0*)$/.test(value) && rate >= 0 && rate <= 1) {
      out.push({ fault: name as Fault, trigger: { kind: 'rate', rate } });
    } else {
      throw new FaultSpecError(`--faults: ${name}:${value}: the rate must be from 0 to 1, or 1/N`);
    }
  }
  return out;
}

export function faultNames(): string[] {
  return [...ANSWER_FAULTS, ...OTHER_FAULTS, ...Object.keys(ALIASES)];
}

/** The fault header's list (`hang-after`, `slow,dup-webhooks`, `none`): the faults named, or a FaultSpecError. */
export function parseFaultHeader(text: string): Array<Fault | 'reset'> {
  const names = text
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  if (names.length === 1 && names[0] === 'none') return [];
  for (const n of names)
    if (!KNOWN.has(n) && !(n in ALIASES)) throw new FaultSpecError(`x-sandbox-fault: ${JSON.stringify(n)} is not a fault (${faultNames().join(', ')}, none)`);
  return names as Array<Fault | 'reset'>;
}

/** A small seeded generator (mulberry32): the same seed gives the same sequence. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** z of the 99th percentile of the standard normal. */
const Z99 = 2.3263478740408408;
/** No delay is longer than this (a bound on every timer, docs/style.md §9). */
export const MAX_DELAY_MS = 600_000;

export interface LatencyModel {
  median_ms: number;
  p99_ms: number;
}

/**
 * A lognormal delay whose median and 99th percentile are the model's: ln X ~ N(ln median,
 * sigma) with sigma = (ln p99 − ln median) / z99. A zero median answers at once.
 */
export function latencySampler(model: LatencyModel, random: () => number): () => number {
  if (model.median_ms <= 0) return () => 0;
  const mu = Math.log(model.median_ms);
  const sigma = Math.max(0, Math.log(Math.max(model.p99_ms, model.median_ms)) - mu) / Z99;
  return () => {
    // Box–Muller; 1 − u keeps the logarithm finite.
    const u = 1 - random();
    const v = random();
    const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    return Math.min(MAX_DELAY_MS, Math.round(Math.exp(mu + sigma * z)));
  };
}

/** `slow`: the long tail, between one and four times the p99 (at least 100 ms). */
export function slowDelay(model: LatencyModel, random: () => number): number {
  const floor = Math.max(100, model.p99_ms);
  return Math.min(MAX_DELAY_MS, Math.round(floor * (1 + 3 * random())));
}

/**
 * Which faults one request gets: those the header names (then nothing at random), else those
 * the spec fires, with `reset` resolved to before or after. At most one answer fault.
 */
export class FaultPicker {
  private readonly counts = new Map<number, number>();
  constructor(
    private readonly spec: FaultSpec,
    private readonly random: () => number,
  ) {}

  pick(named: ReadonlyArray<Fault | 'reset'> | undefined): Set<Fault> {
    const fired: Array<Fault | 'reset'> = named ? [...named] : [];
    if (!named)
      this.spec.forEach((s, i) => {
        const n = (this.counts.get(i) ?? 0) + 1;
        this.counts.set(i, n);
        if (s.trigger.kind === 'every' ? n % s.trigger.every === 0 : this.random() < s.trigger.rate) fired.push(s.fault);
      });
    const out = new Set<Fault>();
    let answerFault = false;
    for (const f of fired) {
      const one: Fault = f === 'reset' ? ALIASES.reset[this.random() < 0.5 ? 0 : 1] : f;
      const isAnswer = (ANSWER_FAULTS as readonly string[]).includes(one);
      if (isAnswer && answerFault) continue;
      answerFault ||= isAnswer;
      out.add(one);
    }
    return out;
  }
}
