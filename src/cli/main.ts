// `npx tollgate <command>`: the operator's tool (decisions §13).
import { parseArgs } from 'node:util';
import { loadSettings } from '../config/index.js';
import { createRuntime, type Runtime } from '../runtime.js';
import { commands, UsageError } from './registry.js';
import { closeOnSignals, startServer } from './serve.js';

const out = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};

// The registry lives in registry.ts; command files import it from there (see its comment).
export { commands, UsageError };

function opts<T extends Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

function need(value: string | undefined, name: string): string {
  if (!value) throw new UsageError(`${name} is required`);
  return value;
}

commands.set('merchant create', {
  usage: 'merchant create --name NAME [--mode test|live] [--allow-ip CIDR]... [--capture-method automatic|manual] [--json]',
  async run(args, rt) {
    const { values } = opts(args, {
      name: { type: 'string' },
      mode: { type: 'string' },
      'allow-ip': { type: 'string', multiple: true },
      'capture-method': { type: 'string' },
      json: { type: 'boolean' },
    });
    const mode = values.mode ?? 'test';
    if (mode !== 'test' && mode !== 'live') throw new UsageError('--mode must be test or live');
    const cm = values['capture-method'] ?? 'automatic';
    if (cm !== 'automatic' && cm !== 'manual') throw new UsageError('--capture-method must be automatic or manual');
    const m = await (await rt()).merchants.createMerchant({ name: need(values.name, '--name'), mode, allow_ips: values['allow-ip'] ?? [], capture_method: cm });
    if (values.json) return out(JSON.stringify(m));
    out(
      `merchant_id     ${m.merchant_id}\naccount_id      ${m.account_id}\nmode            ${m.mode}\nsecret_key      ${m.secret_key}\nwebhook_secret  ${m.webhook_secret}\nallowed_ips     ${m.allowed_ips.join(', ') || '(none)'}`,
    );
    out('The secrets are shown once; store them now.');
  },
});

commands.set('merchant list', {
  usage: 'merchant list [--json]',
  async run(args, rt) {
    const { values } = opts(args, { json: { type: 'boolean' } });
    const rows = await (await rt()).merchants.listMerchants();
    if (values.json) return out(JSON.stringify(rows));
    for (const r of rows) out(`${r.merchant_id}\t${r.account_id}\t${r.mode}\t${r.name}`);
  },
});

commands.set('key rotate', {
  usage: 'key rotate --account ID [--json]   (new key signs; the old one verifies until "key retire")',
  async run(args, rt) {
    const { values } = opts(args, { account: { type: 'string' }, json: { type: 'boolean' } });
    const secret = await (await rt()).merchants.rotateKey(need(values.account, '--account'));
    if (values.json) return out(JSON.stringify({ account_id: values.account, secret_key: secret }));
    out(`secret_key ${secret}\nThe previous key is still accepted until: npx tollgate key retire --account ${values.account}`);
  },
});

commands.set('key retire', {
  usage: 'key retire --account ID   (stop accepting keys replaced by "key rotate")',
  async run(args, rt) {
    const { values } = opts(args, { account: { type: 'string' } });
    const n = await (await rt()).merchants.retireKeys(need(values.account, '--account'));
    out(`retired ${n} key(s)`);
  },
});

commands.set('webhook-secret rotate', {
  usage: 'webhook-secret rotate --account ID',
  async run(args, rt) {
    const { values } = opts(args, { account: { type: 'string' } });
    out(`webhook_secret ${await (await rt()).merchants.rotateWebhookSecret(need(values.account, '--account'))}`);
  },
});

commands.set('ip add', {
  usage: 'ip add --account ID CIDR...',
  async run(args, rt) {
    const { values, positionals } = opts(args, { account: { type: 'string' } });
    if (positionals.length === 0) throw new UsageError('give at least one CIDR');
    const r = await rt();
    for (const p of positionals) out(`added ${await r.merchants.addIp(need(values.account, '--account'), p)}`);
  },
});

commands.set('ip remove', {
  usage: 'ip remove --account ID CIDR...',
  async run(args, rt) {
    const { values, positionals } = opts(args, { account: { type: 'string' } });
    if (positionals.length === 0) throw new UsageError('give at least one CIDR');
    const r = await rt();
    for (const p of positionals) out(`${(await r.merchants.removeIp(need(values.account, '--account'), p)) ? 'removed' : 'not listed'} ${p}`);
  },
});

commands.set('ip list', {
  usage: 'ip list --account ID',
  async run(args, rt) {
    const { values } = opts(args, { account: { type: 'string' } });
    for (const c of await (await rt()).merchants.listIps(need(values.account, '--account'))) out(c);
  },
});

commands.set('migrate', {
  usage: 'migrate   (apply database migrations; serve also does this at start)',
  async run(_args, rt) {
    await rt();
    out('database is up to date');
  },
});

function help(): void {
  out('Usage: npx tollgate <command>\n');
  out('  serve            start the gateway (settings from the environment, see README)');
  for (const c of commands.values()) out(`  ${c.usage}`);
}

export async function main(argv: string[]): Promise<number> {
  const [first, second, ...rest] = argv;
  if (!first || first === 'help' || first === '--help' || first === '-h') {
    help();
    return 0;
  }
  const settings = loadSettings();
  if (first === 'serve') {
    const server = await startServer(settings);
    closeOnSignals(server);
    return -1; // keep running
  }
  const two = `${first} ${second ?? ''}`.trim();
  const cmd = commands.get(two) ?? commands.get(first);
  const args = commands.has(two) ? rest : [second, ...rest].filter((a): a is string => a !== undefined);
  if (!cmd) {
    process.stderr.write(`unknown command "${two}"\n\n`);
    help();
    return 2;
  }
  let runtime: Runtime | null = null;
  const rt = async () => {
    runtime ??= await createRuntime(settings, { metricsDefaults: false });
    return runtime;
  };
  try {
    await cmd.run(args, rt);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`${e.message}\nusage: npx tollgate ${cmd.usage}\n`);
      return 2;
    }
    process.stderr.write(`error: ${(e as Error).message}\n`);
    return 1;
  } finally {
    const r = runtime as Runtime | null;
    if (r) await r.store.close();
  }
}

// Extra commands register themselves by being imported here.
await import('./commands.js');
