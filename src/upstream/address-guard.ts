import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent, buildConnector, request, type Dispatcher } from 'undici';

// The one place that decides whether the gateway may open a connection to an address it was handed
// (a provider's result URL, a client's image URL, a webhook URL): never to a private, loopback,
// link-local, metadata or otherwise non-public address, checked on the addresses a name RESOLVES to
// (so a public name pointing at 127.0.0.1 is refused too) and again on every redirect hop.
// Channels marked `allow_private_network` (the simulator on loopback) skip the check for the URLs
// their provider hands the gateway; a client's URL is checked on every channel.

// The IANA IPv4 and IPv6 Special-Purpose Address Registries: every block whose "Globally
// Reachable" is False (IPv4-mapped ::ffff:0:0/96 aside: it is judged by the address it carries),
// the IPv6 Teredo block (N/A there, and it tunnels to an address nobody checked), and multicast.
const notGlobal4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, incl. the cloud metadata address 169.254.169.254
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments (service continuity, dummy, NAT64 discovery …)
  ['192.0.2.0', 24], // documentation
  ['192.88.99.2', 32], // 6a44 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, incl. the limited broadcast 255.255.255.255
] as const) {
  notGlobal4.addSubnet(net, prefix, 'ipv4');
}
/** Globally reachable entries inside a block above (anycast services). */
const global4 = new BlockList();
global4.addAddress('192.0.0.9', 'ipv4'); // Port Control Protocol anycast
global4.addAddress('192.0.0.10', 'ipv4'); // TURN anycast

const notGlobal6 = new BlockList();
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48], // local-use IPv4/IPv6 translation
  ['100::', 64], // discard-only
  ['100:0:0:1::', 64], // dummy prefix
  ['2001::', 23], // IETF protocol assignments, incl. Teredo 2001::/32 and benchmarking 2001:2::/48
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
  ['5f00::', 16], // segment routing (SRv6) SIDs
  ['fc00::', 7], // unique local, incl. fd00::/8 (fd00:ec2::254 is a metadata address)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  notGlobal6.addSubnet(net, prefix, 'ipv6');
}
const global6 = new BlockList();
for (const [net, prefix] of [
  ['2001:1::1', 128], // Port Control Protocol anycast
  ['2001:1::2', 128], // TURN anycast
  ['2001:1::3', 128], // DNS-SD service registration anycast
  ['2001:3::', 32], // AMT
  ['2001:4:112::', 48], // AS112-v6
  ['2001:20::', 28], // ORCHIDv2
  ['2001:30::', 28], // drone remote ID entity tags
] as const) {
  global6.addSubnet(net, prefix, 'ipv6');
}
/** The only IPv6 space allocated for global unicast; everything else is reserved. */
const globalUnicast6 = new BlockList();
globalUnicast6.addSubnet('2000::', 3, 'ipv6');

/**
 * The IPv4 address an IPv6 address carries, by the form that carries it: IPv4-mapped
 * ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d, IPv4-compatible ::a.b.c.d (deprecated, still
 * tunnelled by some hosts), NAT64 64:ff9b::/96 and 6to4 2002:AABB:CCDD::/48; null for any other.
 */
function embeddedIPv4(groups: number[]): string | null {
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zero = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  if (zero(0, 5) && groups[5] === 0xffff) return v4(groups[6], groups[7]);
  if (zero(0, 4) && groups[4] === 0xffff && groups[5] === 0) return v4(groups[6], groups[7]);
  if (zero(0, 6)) return v4(groups[6], groups[7]);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(2, 6)) return v4(groups[6], groups[7]);
  if (groups[0] === 0x2002) return v4(groups[1], groups[2]);
  return null;
}

function expandIPv6(addr: string): number[] | null {
  let text = addr.toLowerCase();
  // A dotted IPv4 tail becomes two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = text.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const part = (s: string) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const head = part(halves[0]);
  const tail = halves.length === 2 ? part(halves[1]) : [];
  const fill = 8 - head.length - tail.length;
  if (fill < 0 || (halves.length === 1 && fill !== 0)) return null;
  const groups = [...head, ...new Array<number>(fill).fill(0), ...tail];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

function isNonPublicIPv4(ip: string): boolean {
  return notGlobal4.check(ip, 'ipv4') && !global4.check(ip, 'ipv4');
}

function isNonPublicIPv6(ip: string): boolean {
  const groups = expandIPv6(ip);
  if (!groups) return true;
  const v4 = embeddedIPv4(groups);
  if (v4 !== null) return isNonPublicIPv4(v4);
  if (!globalUnicast6.check(ip, 'ipv6')) return true;
  return notGlobal6.check(ip, 'ipv6') && !global6.check(ip, 'ipv6');
}

/** true for any address the gateway must not connect to on behalf of a provider or a client. */
export function isNonPublicAddress(address: string): boolean {
  // Brackets of a URL host and an IPv6 zone (fe80::1%eth0) are not part of the address.
  const ip = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(ip);
  if (family === 4) return isNonPublicIPv4(ip);
  if (family === 6) return isNonPublicIPv6(ip);
  return true; // not an address at all: refuse rather than guess
}

/** A connection the guard refused; `message` says which address and why, without secrets. */
export class AddressRefused extends Error {
  readonly code = 'EADDRREFUSED_GUARD';
  constructor(host: string, address: string) {
    super(`refused to connect to ${host}${address && address !== host ? ` (${address})` : ''}: not a public address`);
    this.name = 'AddressRefused';
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup that fails when any address the name resolves to is non-public (no partial trust). */
export function guardedLookup(hostname: string, options: object, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const list = addresses as LookupAddress[];
    const bad = list.find((a) => isNonPublicAddress(a.address));
    if (bad) return callback(new AddressRefused(hostname, bad.address) as NodeJS.ErrnoException, []);
    if ((options as { all?: boolean }).all) return callback(null, list);
    callback(null, list[0].address, list[0].family);
  });
}

/**
 * An undici Agent whose every connection is checked: IP literals before connecting, names after
 * resolution (the socket connects to exactly the address that was checked).
 */
export function guardedAgent(opts: { connectTimeoutMs?: number } = {}): Agent {
  const base = buildConnector({ timeout: opts.connectTimeoutMs ?? 10_000, lookup: guardedLookup } as buildConnector.BuildOptions);
  const connect: buildConnector.connector = (options, callback) => {
    const host = options.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && isNonPublicAddress(host)) return callback(new AddressRefused(host, host), null);
    return base(options, callback);
  };
  return new Agent({ connect });
}

/** Whether a channel's URLs may point at non-public addresses: its flag, else only for the simulator. */
export function allowsPrivateNetwork(channel: { type: string; allow_private_network?: boolean }): boolean {
  return channel.allow_private_network ?? channel.type === 'simulator';
}

/** Only http(s) URLs are ever handed out or fetched. */
export function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** A URL whose host is written as a non-public IP literal (checked without DNS). */
export function hasNonPublicLiteralHost(value: string): boolean {
  try {
    const host = new URL(value).hostname.replace(/^\[|\]$/g, '');
    return isIP(host) !== 0 && isNonPublicAddress(host);
  } catch {
    return true;
  }
}

export interface GuardedGetOptions {
  /** Content types accepted, by prefix (`image/` accepts `image/png`); empty accepts any. */
  allowTypes?: readonly string[];
  /** Largest body read; a longer one is refused without reading the rest. */
  maxBytes: number;
  /** The whole fetch, redirects included. */
  timeoutMs: number;
  /**
   * URLs fetched without the address check, asked per hop (a simulator channel's own image files;
   * see imageBytes). Every other hop goes through the guard.
   */
  exempt?: (url: URL) => boolean;
  maxRedirects?: number;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface GuardedGetResult {
  url: string;
  status: number;
  contentType: string;
  body: Buffer;
}

/** Why a guarded fetch refused or failed, in words fit for a task's fail_reason or a 400 message. */
export class FetchRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FetchRefused';
  }
}

let sharedGuarded: Agent | null = null;
let sharedOpen: Agent | null = null;

function agentFor(exempt: boolean): Agent {
  if (exempt) return (sharedOpen ??= new Agent());
  return (sharedGuarded ??= guardedAgent());
}

/**
 * GET with the address guard on every hop (`exempt` aside), http(s) only, at most `maxRedirects` redirects, a
 * content-type allow-list, a size cap and one timeout for the whole exchange.
 */
export async function guardedGet(url: string, opts: GuardedGetOptions): Promise<GuardedGetResult> {
  const signal = opts.signal ? AbortSignal.any([opts.signal, AbortSignal.timeout(opts.timeoutMs)]) : AbortSignal.timeout(opts.timeoutMs);
  let current = url;
  for (let hop = 0; ; hop++) {
    if (!isHttpUrl(current)) throw new FetchRefused(`only http(s) URLs are fetched, not ${schemeOf(current)}`);
    // The URL as parsed is the one judged and the one requested (dot segments already resolved).
    const parsed = new URL(current);
    current = parsed.toString();
    const dispatcher: Dispatcher = agentFor(opts.exempt?.(parsed) === true);
    let res: Dispatcher.ResponseData;
    try {
      res = await request(current, { method: 'GET', headers: opts.headers, signal, dispatcher });
    } catch (err) {
      throw asFetchError(err, signal);
    }
    if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location) {
      discard(res);
      if (hop >= (opts.maxRedirects ?? 5)) throw new FetchRefused('too many redirects');
      current = new URL(String(res.headers.location), current).toString();
      continue;
    }
    const contentType = String(res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (res.statusCode < 200 || res.statusCode >= 300) {
      discard(res);
      throw new FetchRefused(`the server answered HTTP ${res.statusCode}`);
    }
    if (opts.allowTypes?.length && !opts.allowTypes.some((t) => contentType.startsWith(t))) {
      discard(res);
      throw new FetchRefused(`content type "${contentType || 'none'}" is not accepted (allowed: ${opts.allowTypes.join(', ')})`);
    }
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > opts.maxBytes) {
      discard(res);
      throw new FetchRefused(`the body is ${declared} bytes, over the ${opts.maxBytes}-byte limit`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > opts.maxBytes) {
          discard(res);
          throw new FetchRefused(`the body is over the ${opts.maxBytes}-byte limit`);
        }
        chunks.push(chunk as Buffer);
      }
    } catch (err) {
      throw asFetchError(err, signal);
    }
    return { url: current, status: res.statusCode, contentType, body: Buffer.concat(chunks) };
  }
}

/** Drops a body that will not be read; undici reports the abort as an error nobody needs. */
function discard(res: Dispatcher.ResponseData): void {
  res.body.on('error', () => undefined);
  res.body.destroy();
}

function schemeOf(value: string): string {
  const m = /^([a-z][a-z0-9+.-]*):/i.exec(value);
  return m ? `${m[1].toLowerCase()}:` : 'a relative or malformed URL';
}

const NOT_PUBLIC = 'the host is not, or does not resolve to, a public address';

function asFetchError(err: unknown, signal: AbortSignal): Error {
  if (err instanceof FetchRefused) return err;
  const cause = (err as { cause?: unknown }).cause ?? err;
  // One answer for a refused host and a name that does not resolve, without the address: what
  // the gateway's own network holds (or its resolver knows) is not told to whoever sent the URL.
  const code = (cause as NodeJS.ErrnoException).code ?? (err as NodeJS.ErrnoException).code;
  if (cause instanceof AddressRefused || err instanceof AddressRefused || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new FetchRefused(NOT_PUBLIC);
  if (signal.aborted) return new FetchRefused('the fetch timed out');
  return new FetchRefused(`the fetch failed (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
}
