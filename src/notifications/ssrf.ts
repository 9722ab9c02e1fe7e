// SSRF guard for merchant-supplied `notify_url` (docs/contract.md §11, field-facts "SSRF"):
// http/https only; every A and AAAA record is resolved and classified, and one forbidden
// record refuses the whole name; the request then connects to the address that was
// checked (no second lookup, so DNS rebinding cannot swap it), and redirects are never
// followed (the sender treats 3xx as a failed attempt).
import dns from 'node:dns';
import { BlockList, isIPv6, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { invalid } from '../web/errors.js';

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

/** getaddrinfo, like the HTTP client would use: /etc/hosts included, both families. */
export const systemResolver: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

export interface GuardOptions {
  /** TOLLGATE_ALLOW_PRIVATE_WEBHOOKS=1: loopback and private targets allowed (local testing). */
  allow_private: boolean;
  resolver?: Resolver;
}

/** A URL that passed the guard, with the address to connect to. */
export interface CheckedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

export class UnsafeTargetError extends Error {}

// Ranges (ipaddr.js names) that only TOLLGATE_ALLOW_PRIVATE_WEBHOOKS opens.
const PRIVATE_RANGES = new Set(['loopback', 'private', 'linkLocal', 'carrierGradeNat', 'uniqueLocal', 'deprecatedSiteLocal']);
// Cloud metadata endpoints stay refused even for local testing.
const METADATA = new Set(['169.254.169.254', '169.254.170.2', 'fd00:ec2::254', '100.100.100.200']);
// IPv4-compatible IPv6 (::/96, RFC 4291 §2.5.5.1, deprecated): ::7f00:1 carries 127.0.0.1 and
// ::a9fe:a9fe the metadata address, and a stack that still routes the range reaches them.
// ipaddr.js has no name for it (it reads "::7f00:1" as unicast, and "::127.0.0.1" as if it
// were ::ffff:127.0.0.1), so the range is matched on the address as the system parses it.
// Refused like the other special ranges, even when private targets are allowed (issue 29).
const IPV4_COMPATIBLE = new BlockList();
IPV4_COMPATIBLE.addSubnet('::', 96, 'ipv6');

function isIpv4Compatible(text: string): boolean {
  if (!isIPv6(text)) return false;
  try {
    if (!IPV4_COMPATIBLE.check(text, 'ipv6')) return false;
    // :: and ::1 sit in the range too and keep their own names (unspecified, loopback).
    const range = ipaddr.parse(text).range();
    return range !== 'unspecified' && range !== 'loopback';
  } catch {
    return false; // not an address: classifyAddress says so
  }
}

/** null when the address may be contacted, otherwise why not. */
export function classifyAddress(text: string, allow_private: boolean): string | null {
  if (isIpv4Compatible(text)) return `${text} is an IPv4-compatible (::/96) address`;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // process() turns IPv4-mapped IPv6 (::ffff:10.0.0.1) into the IPv4 it carries.
    addr = ipaddr.process(text);
  } catch {
    return `"${text}" is not an IP address`;
  }
  const plain = addr.toString();
  if (METADATA.has(plain)) return `${plain} is a cloud metadata address`;
  const range = addr.range();
  if (range === 'unicast') return null;
  if (allow_private && PRIVATE_RANGES.has(range)) return null;
  return `${plain} is a ${range} address`;
}

function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** Checks the syntax only: a parseable http or https URL with a host. */
export function parseTarget(raw: string): URL {
  let url: URL;
  try {
    // WHATWG parsing also normalises odd IPv4 spellings: 0x7f000001, 2130706433, 0177.0.0.1.
    url = new URL(raw);
  } catch {
    throw new UnsafeTargetError('is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UnsafeTargetError('must use http or https');
  if (!url.hostname) throw new UnsafeTargetError('has no host');
  return url;
}

/** Resolves and classifies every address of the URL's host; throws UnsafeTargetError. */
export async function checkTarget(raw: string, opts: GuardOptions): Promise<CheckedTarget> {
  const url = parseTarget(raw);
  const host = bareHost(url);
  let records: Array<{ address: string; family: number }>;
  if (ipaddr.isValid(host)) {
    records = [{ address: host, family: host.includes(':') ? 6 : 4 }];
  } else {
    try {
      records = await (opts.resolver ?? systemResolver)(host);
    } catch (e) {
      throw new UnsafeTargetError(`host "${host}" could not be resolved (${(e as { code?: string }).code ?? 'DNS error'})`);
    }
    if (records.length === 0) throw new UnsafeTargetError(`host "${host}" has no addresses`);
  }
  // One forbidden record refuses the name: which record a client picks is not ours to control.
  for (const r of records) {
    const why = classifyAddress(r.address, opts.allow_private);
    if (why) throw new UnsafeTargetError(`resolves to a forbidden address: ${why}`);
  }
  const first = records[0] as { address: string; family: number };
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** A `lookup` for http(s).request that answers with the checked address only. */
export function pinnedLookup(target: CheckedTarget): LookupFunction {
  return ((_hostname: string, options: { all?: boolean } | number | undefined, callback: (...args: unknown[]) => void) => {
    const cb = typeof options === 'function' ? (options as (...args: unknown[]) => void) : callback;
    const all = typeof options === 'object' && options !== null && options.all === true;
    if (all) cb(null, [{ address: target.address, family: target.family }]);
    else cb(null, target.address, target.family);
  }) as unknown as LookupFunction;
}

/**
 * The check when a payment arrives (docs/contract.md §11): a 400 naming `notify_url` before
 * anything is stored. It is repeated at every send, so a later DNS change is caught too.
 */
export async function requireSafeNotifyUrl(raw: string | undefined, allow_private: boolean, resolver?: Resolver): Promise<void> {
  if (!raw) return;
  try {
    await checkTarget(raw, { allow_private, resolver });
  } catch (e) {
    if (e instanceof UnsafeTargetError) throw invalid('notify_url', e.message);
    throw e;
  }
}
