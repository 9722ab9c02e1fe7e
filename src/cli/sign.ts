// `npx tollgate sign`: the canonical string and `encryption_data` of a request body
// (docs/contract.md §2), so a merchant compares their own signing step field by field (issue 9).
// The body is read exactly as the server reads it (http/body.ts): JSON, form or XML.
import fs from 'node:fs';
import { CommandError, command, out, UsageError } from '../command/registry.js';
import { canonicalString, sign } from '../crypto/signature.js';
import { BodyParseError, parseBody } from '../web/body.js';

/** Reads at most `limit_bytes` (+1, to tell a body that is too big). */
async function readStdin(limit_bytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size > limit_bytes) break;
  }
  return Buffer.concat(chunks);
}

export const signCommand = command({
  name: 'sign',
  args: '[--secret SECRET] [--file BODY] [--json]   (body on standard input unless --file)',
  details: [
    'The secret may come from the TOLLGATE_SECRET environment variable instead of --secret,',
    'which keeps it out of your shell history: TOLLGATE_SECRET=... npx tollgate sign < body.json',
    "A body's own encryption_data is left out of the signature, and said to match or differ.",
  ],
  options: { secret: { type: 'string' }, file: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, settings }) {
    const secret = values.secret ?? process.env.TOLLGATE_SECRET;
    if (!secret) throw new UsageError('give the secret with --secret or the TOLLGATE_SECRET environment variable');
    const limit = settings().body_limit_bytes;
    let raw: Buffer;
    if (values.file !== undefined) {
      try {
        raw = fs.readFileSync(values.file);
      } catch (e) {
        throw new CommandError(`cannot read ${values.file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
    } else if (process.stdin.isTTY) {
      throw new UsageError('give the body on standard input (npx tollgate sign < body.json) or with --file');
    } else raw = await readStdin(limit);
    if (raw.length > limit) throw new CommandError(`the body is larger than ${limit} bytes, which the gateway refuses`);
    let body: Record<string, unknown>;
    try {
      const parsed = parseBody(raw.toString('utf8'));
      if (parsed.format === 'empty') throw new BodyParseError('the body is empty');
      body = parsed.value;
    } catch (e) {
      if (e instanceof BodyParseError) throw new CommandError(`cannot read the body: ${e.message}`);
      throw e;
    }
    const canonical = canonicalString(body);
    const signature = sign(body, secret);
    const given = typeof body.encryption_data === 'string' && body.encryption_data !== '' ? body.encryption_data : null;
    const matches = given === null ? null : given.toLowerCase() === signature;
    if (values.json)
      return out(JSON.stringify({ canonical_string: canonical, encryption_data: signature, ...(matches === null ? {} : { body_signature_matches: matches }) }));
    out(`canonical_string  ${canonical}`);
    out(`encryption_data   ${signature}`);
    if (matches !== null)
      out(matches ? "the body's encryption_data matches" : "the body's encryption_data differs (signed with another secret, or another canonical string)");
  },
});
