// 3-D Secure decisions of the direct flow (docs/contract.md §10): validating `mpi_info` from an
// outside 3-D Secure server, and when the gateway asks for a challenge. Pure functions.
import { invalid } from '../web/errors.js';

export type ThreedsResult = '' | 'Y' | 'N' | 'A' | 'U';

/** What the merchant asks of 3-D Secure (acquiring `open3d`: 1 always, 0 never, else when risk says so). */
export type ThreedsRequest = 'always' | 'never' | 'on_risk';

export interface MpiInfo {
  eci: string;
  cavv: string;
  xid: string;
  ds_trans_id: string;
  /** Y authenticated, A attempted (an attempt counts as authenticated for liability). */
  result: 'Y' | 'A';
}

/**
 * ECI values that mean "authenticated" (Y) or "attempted" (A), by scheme family. ECI 07
 * (Visa-like) and 00 (Mastercard) mean no authentication took place: such a payment is
 * sent without mpi_info, so they are refused here rather than passed off as authenticated.
 */
export const ECI_RESULTS: Readonly<Record<'mastercard' | 'other', Readonly<Record<string, 'Y' | 'A'>>>> = {
  mastercard: { '02': 'Y', '01': 'A' },
  other: { '05': 'Y', '06': 'A' },
};

const BASE64_20_BYTES = /^[A-Za-z0-9+/]{27}=$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

type MpiInput = { eci?: string; cavv?: string; xid?: string; dsTransID?: string };

/** Finds and validates mpi_info; null when none was sent. Throws HTTP 400 naming the field. */
export function parseMpiInfo(additional: ReadonlyArray<{ mpi_info?: MpiInput }> | undefined, brand: string): MpiInfo | null {
  const found = (additional ?? []).map((a, i) => [i, a.mpi_info] as const).filter((p): p is readonly [number, MpiInput] => p[1] !== undefined);
  if (found.length === 0) return null;
  const [i, m] = found[0] as readonly [number, MpiInput];
  const at = `additional_information[${i}].mpi_info`;
  if (found.length > 1) throw invalid(`additional_information[${found[1]?.[0]}].mpi_info`, 'is a second mpi_info; send one');
  const family = brand === 'mastercard' || brand === 'maestro' ? 'mastercard' : 'other';
  const allowed = ECI_RESULTS[family];
  if (!m.eci) throw invalid(`${at}.eci`, 'is required');
  const result = allowed[m.eci];
  if (!result) throw invalid(`${at}.eci`, `must be one of ${Object.keys(allowed).join(', ')} for this card brand (authenticated or attempted)`);
  if (!m.cavv) throw invalid(`${at}.cavv`, 'is required');
  if (!BASE64_20_BYTES.test(m.cavv)) throw invalid(`${at}.cavv`, 'must be 20 bytes in base64 (28 characters)');
  if (m.xid && !BASE64_20_BYTES.test(m.xid)) throw invalid(`${at}.xid`, 'must be 20 bytes in base64 (28 characters)');
  if (m.dsTransID && !UUID.test(m.dsTransID)) throw invalid(`${at}.dsTransID`, 'must be a UUID');
  if (!m.dsTransID && !m.xid) throw invalid(`${at}.dsTransID`, 'is required (3-D Secure 2), or xid for 3-D Secure 1');
  return { eci: m.eci, cavv: m.cavv, xid: m.xid ?? '', ds_trans_id: m.dsTransID ?? '', result };
}

/**
 * docs/contract.md §10: does the gateway challenge before asking the processor? `always`
 * authenticates, `never` never starts a challenge, `on_risk` challenges when the risk score
 * reaches the review band. Authentication done elsewhere (mpi_info) is never repeated.
 */
export function challengeFirst(request: ThreedsRequest, mpi: MpiInfo | null, risk: { action: string; fixed: boolean }): boolean {
  if (mpi) return false;
  if (request === 'always') return true;
  if (request === 'never') return false;
  // A REVIEW band a challenge could lower; a decisive REVIEW (the sandbox review card) is held as it is.
  return risk.action === 'REVIEW' && !risk.fixed;
}

/**
 * The issuer demands authentication (sandbox card 4000000000003220). Asked `never` (open3d 0),
 * the merchant forbade a challenge, so the payment fails (1009, result U: not performed).
 */
export function onIssuerChallenge(request: ThreedsRequest): 'challenge' | 'fail' {
  return request === 'never' ? 'fail' : 'challenge';
}
