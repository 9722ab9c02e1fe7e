// One HTTP POST of a notification to the address the SSRF guard checked (docs/contract.md §11).
// No redirects are followed (node's client never does; a 3xx is reported as a failure),
// the whole attempt has one deadline, and only the first bytes of the answer are kept.
import http from 'node:http';
import https from 'node:https';
import type { SignedDelivery } from './signing.js';
import { type CheckedTarget, pinnedLookup } from './ssrf.js';

/** Bytes of the answer body kept in the attempt log. */
export const RESPONSE_EXCERPT_BYTES = 1024;

export interface SendResult {
  status_code: number | null;
  latency_ms: number;
  /** '' on a 2xx; otherwise why the attempt did not acknowledge. */
  error: string;
  response_excerpt: string;
  /** Retry-After of the answer in ms, when it sent a usable one. */
  retry_after_ms: number | null;
}

// Keep-alive pools, bounded: sockets are reused only for the same host and port, and a
// pooled socket is always one that was opened to a checked address.
const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 16, maxTotalSockets: 256, maxFreeSockets: 64, timeout: 30_000 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 16, maxTotalSockets: 256, maxFreeSockets: 64, timeout: 30_000 }),
};

/** Retry-After in seconds or as an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | undefined, now_ms: number): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d{1,9}$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now_ms);
}

export function send(target: CheckedTarget, delivery: SignedDelivery, timeout_ms: number): Promise<SendResult> {
  const started = performance.now();
  const { url } = target;
  const isHttps = url.protocol === 'https:';
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (r: Omit<SendResult, 'latency_ms'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, latency_ms: Math.round(performance.now() - started) });
    };
    const req = (isHttps ? https : http).request(
      {
        protocol: url.protocol,
        hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
        port: url.port || (isHttps ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...delivery.headers, 'content-length': String(Buffer.byteLength(delivery.body)) },
        auth: url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined,
        agent: isHttps ? agents.https : agents.http,
        lookup: pinnedLookup(target),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let kept = 0;
        const done = () => {
          const excerpt = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8');
          const ok = status >= 200 && status < 300;
          let error = '';
          if (!ok) error = status >= 300 && status < 400 ? `HTTP ${status}: redirect not followed` : `HTTP ${status}`;
          const ra = res.headers['retry-after'];
          finish({
            status_code: status,
            error,
            response_excerpt: excerpt,
            retry_after_ms: parseRetryAfter(Array.isArray(ra) ? ra[0] : ra, Date.now()),
          });
        };
        res.on('data', (chunk: Buffer) => {
          if (kept < RESPONSE_EXCERPT_BYTES) {
            chunks.push(chunk);
            kept += chunk.length;
          } else {
            // Enough kept: stop reading a large or endless answer.
            done();
            res.destroy();
          }
        });
        res.on('end', done);
        res.on('error', done);
        res.on('close', done);
      },
    );
    const timer = setTimeout(() => {
      finish({ status_code: null, error: `no answer within ${timeout_ms} ms`, response_excerpt: '', retry_after_ms: null });
      req.destroy();
    }, timeout_ms);
    req.on('error', (e: NodeJS.ErrnoException) => {
      finish({ status_code: null, error: `connection failed: ${e.code ?? e.message}`, response_excerpt: '', retry_after_ms: null });
    });
    req.end(delivery.body);
  });
}
