// One spelling per signal, so velocity and blocklists compare like with like.
import ipaddr from 'ipaddr.js';

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Canonical text of an address (IPv4-mapped IPv6 becomes IPv4), or null when not one. */
export function normaliseIp(ip: string): string | null {
  try {
    return ipaddr.process(ip.trim()).toString();
  } catch {
    return null;
  }
}
