// The answer a direct payment first gave, kept to replay it for an identical repeat
// (docs/contract.md §4). Its `token_id` is a bearer credential for the stored card (issue 29), so
// the stored copy holds it encrypted under the master keyring and the replay decrypts it.
import { Keyring } from '../crypto/keyring.js';

/** The answer as stored in `payments.answer`: JSON with `token_id` sealed. */
export function sealAnswer(keyring: Keyring, record: Record<string, unknown>): string {
  const token = record.token_id;
  if (typeof token !== 'string' || token === '' || Keyring.isSealed(token)) return JSON.stringify(record);
  return JSON.stringify({ ...record, token_id: keyring.encrypt(token) });
}

/** The stored answer as it was first given. */
export function openAnswer(keyring: Keyring, stored: string): Record<string, unknown> {
  const record = JSON.parse(stored) as Record<string, unknown>;
  const token = record.token_id;
  if (typeof token === 'string' && Keyring.isSealed(token)) record.token_id = keyring.decrypt(token);
  return record;
}
