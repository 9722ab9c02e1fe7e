import type { LoggerOptions } from 'pino';
import type { Settings } from '../config/index.js';

// Card numbers, security codes and secrets cannot reach a log (PCI DSS 3.3/3.5, style §10):
// Fastify never logs bodies here, and these paths are censored wherever they appear.
const SENSITIVE = ['card', 'security_code', 'cvc', 'number', 'pan', 'secret_key', 'webhook_secret', 'encryption_data', 'token_id', 'password'];

export const redactPaths: string[] = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  ...SENSITIVE.flatMap((k) => [k, `*.${k}`, `body.${k}`, `*.body.${k}`]),
];

/** The gateway's pino options: level from the settings, sensitive paths censored. */
export function loggerOptions(settings: Pick<Settings, 'log_level'>): LoggerOptions {
  return { level: settings.log_level, redact: { paths: redactPaths, censor: '[redacted]' } };
}
