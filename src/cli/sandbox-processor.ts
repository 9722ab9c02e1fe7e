// `tollgate sandbox-processor` (docs/remote-sandbox.md, issue 31 item 5): the sandbox as a
// remote processor in its own process. Only the definition lives here; the server is
// imported when the command runs, so `help` and every other command do not load it.
import { command, UsageError } from '../command/registry.js';
import { stopRequested } from './signals.js';

export const sandboxProcessorCommand = command({
  name: 'sandbox-processor',
  args: '--port N [--host 127.0.0.1] [--api-key KEY] [--latency-median-ms 250 --latency-p99-ms 2000] [--faults SPEC] [--webhook-url URL --webhook-secret S] [--confirm-by-webhook capture,cancel,refund] [--seed N]',
  details: [
    'Answers by the same test cards and payout accounts as the in-process sandbox; Idempotency-Key = the attempt id.',
    '--faults slow:0.1,hang-after:0.05,5xx-before:0.05,5xx-after:0.05,reset:0.02,dup-webhooks:0.2,delay-webhooks:0.2,reorder-webhooks:0.2 (a rate, or 1/N for every N-th request).',
    'Other settings: --confirm-delay-ms 1000, --swift-delay-ms 5000, --remember 1000000, --log-level info. GET /stats reports latency served and CPU.',
    'Protocol, faults and the webhook signature: docs/remote-sandbox.md. Stops on SIGTERM or SIGINT.',
  ],
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
    'api-key': { type: 'string' },
    'latency-median-ms': { type: 'string' },
    'latency-p99-ms': { type: 'string' },
    faults: { type: 'string' },
    'webhook-url': { type: 'string' },
    'webhook-secret': { type: 'string' },
    'confirm-by-webhook': { type: 'string' },
    'confirm-delay-ms': { type: 'string' },
    'swift-delay-ms': { type: 'string' },
    remember: { type: 'string' },
    seed: { type: 'string' },
    'log-level': { type: 'string' },
  },
  async run({ values }) {
    const stop = stopRequested();
    const { runSandboxProcessor, SandboxOptionRefused } = await import('../processors/remote/run.js');
    try {
      await runSandboxProcessor(values, stop);
    } catch (e) {
      if (e instanceof SandboxOptionRefused) throw new UsageError(e.message);
      throw e;
    }
  },
});
