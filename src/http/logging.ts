import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';
import type { Settings } from '../config/index.js';

// Card numbers, security codes and secrets cannot reach a log (PCI DSS 3.3/3.5, style §10):
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
  return options;
}

/** A logger outside Fastify (background tasks), with the same options. */
export function createLogger(settings: Pick<Settings, 'log_level' | 'log_format'>, destination?: NodeJS.WritableStream): Logger {
  const { stream, ...options } = loggerOptions(settings, destination);
  return stream ? pino(options, stream) : destination ? pino(options, destination as DestinationStream) : pino(options);
}
