// Country of a shopper's public IP address. See docs/decisions/0030-risk-data-sources.md:
// a small bundled table of well-known public allocations, behind a lookup function a
// deployment can replace with a GeoIP database. Private, loopback, link-local and other
// non-public addresses have no country.
import ipaddr from 'ipaddr.js';

export interface IpRange {
  cidr: string;
  country: string;
  note: string;
}

/** Well-known, long-stable public allocations; enough to exercise the country rule. */
export const IP_RANGES: readonly IpRange[] = [
  { cidr: '8.8.8.0/24', country: 'US', note: 'Google public DNS' },
  { cidr: '17.0.0.0/8', country: 'US', note: 'Apple' },
  { cidr: '3.0.0.0/9', country: 'US', note: 'Amazon' },
  { cidr: '1.1.1.0/24', country: 'AU', note: 'APNIC research (Cloudflare DNS), registered in AU' },
  { cidr: '81.2.69.0/24', country: 'GB', note: 'the GB range of the public GeoIP2 test data' },
  { cidr: '80.128.0.0/11', country: 'DE', note: 'Deutsche Telekom' },
  { cidr: '217.0.0.0/13', country: 'DE', note: 'Deutsche Telekom' },
  { cidr: '90.0.0.0/9', country: 'FR', note: 'Orange' },
  { cidr: '126.0.0.0/8', country: 'JP', note: 'SoftBank' },
  { cidr: '133.0.0.0/8', country: 'JP', note: 'Japanese academic and commercial networks' },
  { cidr: '200.160.0.0/20', country: 'BR', note: 'NIC.br' },
  { cidr: '2001:4860::/32', country: 'US', note: 'Google (IPv6)' },
];

const parsed = IP_RANGES.map((r) => ({ range: ipaddr.parseCIDR(r.cidr), country: r.country }));

export type IpCountryLookup = (ip: string) => string | null;

/** Country of a public address from the bundled table; null when private or unknown. */
export const bundledIpCountry: IpCountryLookup = (ip) => {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(ip);
  } catch {
    return null;
  }
  if (addr.range() !== 'unicast') return null; // private, loopback, reserved…: no country
  for (const { range, country } of parsed) {
    if (addr.kind() === range[0].kind() && addr.match(range)) return country;
  }
  return null;
};
