// Card numbers and account secrets are encrypted at rest with AES-256-GCM under a master
// key kept outside the database (TOLLGATE_MASTER_KEY, PCI DSS 3.5/3.6). Several keys may
// be configured ("id:base64,id:base64"): the first encrypts, all decrypt, so a key can be
// rotated while old records stay readable (a stored value moves to the first key when it is
// next written; there is no bulk re-encryption command yet).
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** `encrypt`'s shape: v1, key id, 12-byte IV (16 characters), 16-byte tag (22 characters), ciphertext. */
const SEALED = /^v1\.[A-Za-z0-9_-]{1,32}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]*$/;

export interface MasterKey {
  id: string;
  key: Buffer;
}

export class Keyring {
  readonly active: MasterKey;
  private readonly byId: Map<string, MasterKey>;
  private readonly fingerprintKey: Buffer;

  constructor(keys: MasterKey[]) {
    const first = keys[0];
    if (!first) throw new Error('at least one master key is required');
    this.active = first;
    this.byId = new Map(keys.map((k) => [k.id, k]));
    // Card fingerprints must stay stable across master-key rotation (velocity rules
    // compare them), so they use a key derived from the oldest configured key.
    const oldest = keys[keys.length - 1] as MasterKey;
    this.fingerprintKey = Buffer.from(hkdfSync('sha256', oldest.key, Buffer.alloc(0), 'tollgate card fingerprint', 32));
  }

  /** Parses "id:base64[,id:base64…]" or a bare 32-byte key in base64 or hex. */
  static parse(spec: string): Keyring {
    const keys = spec
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((entry) => {
        const colon = entry.indexOf(':');
        const raw = colon >= 0 ? entry.slice(colon + 1) : entry;
        const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
        if (key.length !== 32) throw new Error('TOLLGATE_MASTER_KEY: each key must be 32 bytes (base64 or hex)');
        const id = colon >= 0 ? entry.slice(0, colon) : createHash('sha256').update(key).digest('hex').slice(0, 8);
        if (!/^[A-Za-z0-9_-]{1,32}$/.test(id)) throw new Error(`TOLLGATE_MASTER_KEY: bad key id "${id}"`);
        return { id, key };
      });
    return new Keyring(keys);
  }

  /** Development default only: a key generated once into the data folder. */
  static loadOrCreateDevKey(dataDir: string): Keyring {
    const file = path.join(dataDir, 'master.key');
    fs.mkdirSync(dataDir, { recursive: true });
    if (!fs.existsSync(file)) {
      const spec = `dev1:${randomBytes(32).toString('base64')}`;
      fs.writeFileSync(file, `${spec}\n`, { mode: 0o600, flag: 'wx' });
    }
    return Keyring.parse(fs.readFileSync(file, 'utf8').trim());
  }

  /** Returns "v1.<kid>.<iv>.<tag>.<ciphertext>" (base64url parts). */
  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.active.key, iv);
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return ['v1', this.active.id, iv.toString('base64url'), tag.toString('base64url'), ct.toString('base64url')].join('.');
  }

  decrypt(sealed: string): string {
    const [v, kid, iv, tag, ct] = sealed.split('.');
    if (v !== 'v1' || !kid || !iv || !tag || ct === undefined) throw new Error('malformed ciphertext');
    const key = this.byId.get(kid);
    if (!key) throw new Error(`master key "${kid}" is not configured`);
    const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }

  /** Whether a stored text is a ciphertext of `encrypt` (so a migration can tell what it already sealed). */
  static isSealed(text: string): boolean {
    return SEALED.test(text);
  }

  static keyIdOf(sealed: string): string {
    return sealed.split('.')[1] ?? '';
  }

  /** Keyed hash of a card number (PCI DSS 3.5.1.1: never a bare hash). */
  fingerprint(pan: string): string {
    return createHmac('sha256', this.fingerprintKey).update(pan).digest('base64url').slice(0, 32);
  }
}
