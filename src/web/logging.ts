import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';
import type { Settings } from '../config/index.js';

// Card numbers, security codes and secrets cannot reach a log (PCI DSS 3.3/3.5, docs/style.md §10):
// Fastify never logs bodies here, and these paths are censored wherever they appear.
// Redaction happens before an entry is written, so it holds in both formats.
const SENSITIVE = [
  'card',
  'security_code',
  'cvc',
  'number',
  'pan',
  'secret_key',
  'webhook_secret',
  'encryption_data',
  'token_id',
  'password',
  'account_number',
  'iban',
];

export const redactPaths: string[] = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  ...SENSITIVE.flatMap((k) => [k, `*.${k}`, `body.${k}`, `*.body.${k}`]),
];

type Entry = Record<string, unknown>;

/** Fields the readable line shows itself (only app.ts's request line uses the last four). */
const SHOWN_IN_MESSAGE = 'pid,hostname,reqId,method,url,status,ms';

/**
 * One readable line per entry: the request line (app.ts) reads `GET /readyz 200 8.8 ms
 * [request id]`; other entries show their message and request id, their other fields below.
 */
function messageFormat(log: Entry, messageKey: string): string {
  const id = typeof log.reqId === 'string' ? ` [${log.reqId}]` : '';
  if (log[messageKey] === 'request' && typeof log.method === 'string')
    return `${log.method} ${String(log.url)} ${String(log.status)} ${String(log.ms)} ms${id}`;
  return `${String(log[messageKey] ?? '')}${id}`;
}

/** The readable stream (pino-pretty, synchronous so nothing is lost at exit). */
export function prettyStream(destination?: NodeJS.WritableStream): DestinationStream {
  return pretty({
    sync: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: SHOWN_IN_MESSAGE,
    messageFormat,
    ...(destination ? { destination, colorize: false } : {}),
  });
}

/**
 * The gateway's pino options: level from the settings, sensitive paths censored, and in the
 * pretty format a readable stream (Fastify passes `stream` on to pino).
 */
export function loggerOptions(
  settings: Pick<Settings, 'log_level' | 'log_format'>,
  destination?: NodeJS.WritableStream,
): LoggerOptions & { stream?: DestinationStream } {
  const options: LoggerOptions & { stream?: DestinationStream } = { level: settings.log_level, redact: { paths: redactPaths, censor: '[redacted]' } };
  if (settings.log_format === 'pretty') options.stream = prettyStream(destination);
  else if (destination) options.stream = destination as DestinationStream;
  return options;
}

/** A logger outside Fastify (background tasks), with the same options. */
export function createLogger(settings: Pick<Settings, 'log_level' | 'log_format'>, destination?: NodeJS.WritableStream): Logger {
  const { stream, ...options } = loggerOptions(settings, destination);
  return stream ? pino(options, stream) : pino(options);
}

// The request line's `url` (issue 29 item 3): never the URL as received. A query string may
// carry a card number or a secret, and a path may carry a bearer id (the set-password token,
// a checkout session, a 3-D Secure or issuer page id): whoever reads the log must not be
// able to use them. So a matched request logs its route pattern (`/pay/:id`), an unmatched
// one its path with every segment that is not a word of some registered route replaced by
// `:redacted`; either way the query keeps its plain parameter names, never a value.

const REDACTED_SEGMENT = ':redacted';
const REDACTED_VALUE = '…';
/** A query parameter name that is worth keeping: short, a name rather than a number or a token. */
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_.\-[\]]{0,39}$/;
const MAX_QUERY_NAMES = 20;

/** The static segments of every registered route: the only path words a log line may show. */
export function routeWords(): { add(pattern: string): void; has(segment: string): boolean } {
  const words = new Set<string>();
  return {
    add(pattern) {
      for (const s of pattern.split('/')) if (s && !s.startsWith(':') && !s.includes('*')) words.add(s);
    },
    has: (segment) => words.has(segment),
  };
}

/** What the request line shows for a request: see above. */
export function loggedUrl(raw_url: string, pattern: string | undefined, words: { has(segment: string): boolean }): string {
  const q = raw_url.indexOf('?');
  const path = q === -1 ? raw_url : raw_url.slice(0, q);
  const shown =
    pattern ??
    path
      .slice(0, 2048)
      .split('/')
      .map((s) => (s === '' || words.has(s) ? s : REDACTED_SEGMENT))
      .join('/');
  return q === -1 ? shown : `${shown}?${redactedQuery(raw_url.slice(q + 1))}`;
}

function redactedQuery(query: string): string {
  const parts = query.split('&').filter(Boolean);
  const names = parts.slice(0, MAX_QUERY_NAMES).map((p) => {
    const eq = p.indexOf('=');
    let name = eq === -1 ? p : p.slice(0, eq);
    try {
      name = decodeURIComponent(name);
    } catch {
      name = '';
    }
    // A long run of digits is a card number or an id sent as a name: not a name.
    return PLAIN_NAME.test(name) && !/\d{5,}/.test(name) ? `${name}=${REDACTED_VALUE}` : REDACTED_VALUE;
  });
  if (parts.length > MAX_QUERY_NAMES) names.push(REDACTED_VALUE);
  return names.join('&');
}
