import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';

// Who sent a request that came through a reverse proxy. X-Forwarded-For and X-Forwarded-Proto are
// believed only when the connection comes from an address of server.trusted_proxies; anyone else
// could write those headers themselves and pose as another client or as an https request.

/** Whether an address belongs to a trusted proxy; null when none is configured. */
export type TrustedProxies = ((address: string) => boolean) | null;

export interface RequestClient {
  /** The client's address: the first hop, read right to left, that is not a trusted proxy. */
  address: string;
  /** Whether the client's request was https: TLS on this connection, or the trusted proxy says so. */
  https: boolean;
}

/** What is wrong with one `server.trusted_proxies` entry (an IPv4/IPv6 address or CIDR), else null. */
export function proxyEntryProblem(entry: string): string | null {
  const [address, bits, extra] = entry.split('/');
  const family = isIP(address);
  if (!family || extra !== undefined) return `${JSON.stringify(entry)} is not an IP address or CIDR (e.g. 127.0.0.1, 10.0.0.0/8, fd00::/8)`;
  const max = family === 4 ? 32 : 128;
  if (bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= max)) return `${JSON.stringify(entry)}: the prefix length must be 0 to ${max}`;
  return null;
}

/** The matcher of a validated `server.trusted_proxies` list (IPv4 entries match IPv4-mapped IPv6 too). */
export function trustedProxies(entries: readonly string[]): TrustedProxies {
  if (!entries.length) return null;
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return (address) => {
    const family = isIP(address);
    return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
}

/** The comma-separated entries of a header, as sent once or in several lines. */
function entries(header: string | string[] | undefined): string[] {
  return (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((s) => s.trim());
}

/**
 * The client of a request. X-Forwarded-For is read from its right end (the hop the nearest proxy
 * added) leftwards while each hop is a trusted proxy, so addresses a client wrote into the header
 * itself are never reached; an entry that is no address stops the walk at the hop that passed it on.
 */
export function requestClient(raw: IncomingMessage, trusted: TrustedProxies): RequestClient {
  const peer = raw.socket.remoteAddress ?? '';
  const tls = Boolean((raw.socket as { encrypted?: boolean }).encrypted);
  if (!trusted?.(peer)) return { address: peer, https: tls };
  const proto = entries(raw.headers['x-forwarded-proto']).at(-1)?.toLowerCase();
  const hops = entries(raw.headers['x-forwarded-for']);
  let address = peer;
  for (let i = hops.length - 1; i >= 0 && isIP(hops[i]); i--) {
    address = hops[i];
    if (!trusted(address)) break;
  }
  return { address, https: proto ? proto === 'https' : tls };
}
