import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { FetchRefused, guardedGet, hasNonPublicLiteralHost, isHttpUrl, isNonPublicAddress } from '../../src/upstream/address-guard.js';

describe('isNonPublicAddress', () => {
  it.each([
    '0.0.0.0',
    '0.1.2.3',
    '10.0.0.1',
    '100.64.0.1',
    '100.127.255.254',
    '127.0.0.1',
    '127.255.255.255',
    '169.254.169.254',
    '169.254.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.0.0.170',
    '192.0.2.1',
    '192.168.1.1',
    '198.18.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '[::1]',
    'fc00::1',
    'fd00::1',
    'fd00:ec2::254',
    'fe80::1',
    'fe80::1%eth0',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::10.0.0.1',
    '2002:7f00:1::',
    '2002:c0a8:101::1',
    '::127.0.0.1',
    '2001:db8::1',
    'not-an-address',
    '',
  ])('refuses %s', (addr) => {
    expect(isNonPublicAddress(addr)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '169.253.255.255', '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])(
    'accepts the public address %s',
    (addr) => {
      expect(isNonPublicAddress(addr)).toBe(false);
    },
  );
});

// Every entry of the IANA IPv4 and IPv6 Special-Purpose Address Registries, tried at its first
// address, at its last, and just outside it where the neighbour is public: "Globally Reachable"
// False is refused, True is accepted. Then the forms that carry an IPv4 address, judged by it.
describe('isNonPublicAddress against the special-purpose registries', () => {
  const refused = true;
  const accepted = false;
  it.each([
    // IPv4
    ['0.0.0.0/8 this network', '0.255.255.255', refused],
    ['10.0.0.0/8 private use', '10.255.255.255', refused],
    ['just past 10/8', '11.0.0.0', accepted],
    ['100.64.0.0/10 shared address space', '100.64.0.0', refused],
    ['127.0.0.0/8 loopback', '127.0.0.2', refused],
    ['169.254.0.0/16 link local', '169.254.255.255', refused],
    ['172.16.0.0/12 private use', '172.16.0.0', refused],
    ['192.0.0.0/24 IETF protocol assignments', '192.0.0.255', refused],
    ['192.0.0.0/29 service continuity', '192.0.0.7', refused],
    ['192.0.0.8/32 dummy address', '192.0.0.8', refused],
    ['192.0.0.9/32 PCP anycast (globally reachable)', '192.0.0.9', accepted],
    ['192.0.0.10/32 TURN anycast (globally reachable)', '192.0.0.10', accepted],
    ['192.0.0.171/32 NAT64/DNS64 discovery', '192.0.0.171', refused],
    ['192.0.2.0/24 TEST-NET-1', '192.0.2.255', refused],
    ['192.31.196.0/24 AS112-v4 (globally reachable)', '192.31.196.1', accepted],
    ['192.52.193.0/24 AMT (globally reachable)', '192.52.193.1', accepted],
    ['192.88.99.2/32 6a44 relay anycast', '192.88.99.2', refused],
    ['192.168.0.0/16 private use', '192.168.255.255', refused],
    ['192.175.48.0/24 AS112 direct delegation (globally reachable)', '192.175.48.1', accepted],
    ['198.18.0.0/15 benchmarking', '198.19.255.255', refused],
    ['just past 198.18/15', '198.20.0.0', accepted],
    ['198.51.100.0/24 TEST-NET-2', '198.51.100.1', refused],
    ['203.0.113.0/24 TEST-NET-3', '203.0.113.255', refused],
    ['224.0.0.0/4 multicast', '239.255.255.255', refused],
    ['240.0.0.0/4 reserved', '240.0.0.1', refused],
    ['255.255.255.255/32 limited broadcast', '255.255.255.255', refused],
    // IPv6
    ['::1/128 loopback', '::1', refused],
    ['::/128 unspecified', '::', refused],
    ['64:ff9b:1::/48 local-use translation', '64:ff9b:1::a00:1', refused],
    ['64:ff9b:1::/48 local-use translation, public IPv4 inside', '64:ff9b:1::808:808', refused],
    ['64:ff9b:1::/48 last address', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff', refused],
    ['100::/64 discard-only', '100::1', refused],
    ['100:0:0:1::/64 dummy prefix', '100:0:0:1::1', refused],
    ['2001::/23 IETF protocol assignments', '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff', refused],
    ['just past 2001::/23', '2001:200::1', accepted],
    ['2001::/32 Teredo', '2001:0:4136:e378:8000:63bf:3fff:fdd2', refused],
    ['2001::/32 Teredo, loopback server', '2001:0:7f00:1::1', refused],
    ['2001:1::1/128 PCP anycast (globally reachable)', '2001:1::1', accepted],
    ['2001:1::2/128 TURN anycast (globally reachable)', '2001:1::2', accepted],
    ['2001:1::3/128 DNS-SD SRP anycast (globally reachable)', '2001:1::3', accepted],
    ['2001:1::4 (no entry of its own, in 2001::/23)', '2001:1::4', refused],
    ['2001:2::/48 benchmarking', '2001:2::1', refused],
    ['2001:3::/32 AMT (globally reachable)', '2001:3::1', accepted],
    ['2001:4:112::/48 AS112-v6 (globally reachable)', '2001:4:112::1', accepted],
    ['2001:10::/28 deprecated ORCHID', '2001:10::1', refused],
    ['2001:20::/28 ORCHIDv2 (globally reachable)', '2001:20::1', accepted],
    ['2001:30::/28 DETs (globally reachable)', '2001:30::1', accepted],
    ['2001:db8::/32 documentation', '2001:db8:ffff::1', refused],
    ['2620:4f:8000::/48 AS112 direct delegation (globally reachable)', '2620:4f:8000::1', accepted],
    ['3fff::/20 documentation', '3fff::1', refused],
    ['3fff::/20 documentation, last address', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', refused],
    ['just past 3fff::/20', '3fff:1000::1', accepted],
    ['5f00::/16 SRv6 SIDs', '5f00:1:1::1', refused],
    ['fc00::/7 unique local', 'fdff::1', refused],
    ['fe80::/10 link-local', 'febf::1', refused],
    ['fec0::/10 site-local (deprecated)', 'fec0::1', refused],
    ['ff00::/8 multicast', 'ff0e::1', refused],
    ['outside 2000::/3 (unallocated)', '4000::1', refused],
    // Forms that carry an IPv4 address, judged by it.
    ['IPv4-mapped loopback', '::ffff:127.0.0.1', refused],
    ['IPv4-mapped public', '::ffff:1.1.1.1', accepted],
    ['IPv4-translated (RFC 2765) loopback', '::ffff:0:7f00:1', refused],
    ['IPv4-translated (RFC 2765) loopback, dotted', '::ffff:0:127.0.0.1', refused],
    ['IPv4-translated (RFC 2765) metadata', '::ffff:0:a9fe:a9fe', refused],
    ['IPv4-translated (RFC 2765) public', '::ffff:0:808:808', accepted],
    ['IPv4-compatible private', '::10.0.0.1', refused],
    ['IPv4-compatible public', '::8.8.8.8', accepted],
    ['NAT64 64:ff9b::/96 loopback', '64:ff9b::7f00:1', refused],
    ['NAT64 64:ff9b::/96 public', '64:ff9b::1.1.1.1', accepted],
    ['6to4 2002::/16 private', '2002:a00:1::1', refused],
    ['6to4 2002::/16 carrying a documentation address', '2002:cb00:7101::1', refused],
    ['6to4 2002::/16 public', '2002:101:101::1', accepted],
  ] as const)('%s: %s', (_entry, addr, expected) => {
    expect(isNonPublicAddress(addr)).toBe(expected);
  });
});

describe('URL checks', () => {
  it('accepts only http(s) URLs', () => {
    expect(isHttpUrl('https://cdn.example.com/v.mp4')).toBe(true);
    expect(isHttpUrl('http://cdn.example.com/v.mp4')).toBe(true);
    for (const u of ['file:///etc/passwd', 'ftp://x/y', 'data:video/mp4;base64,AAAA', 'javascript:alert(1)', 'gopher://x', '/relative', '']) expect(isHttpUrl(u)).toBe(false);
  });

  it('spots non-public IP literal hosts without DNS', () => {
    expect(hasNonPublicLiteralHost('http://169.254.169.254/latest/meta-data/')).toBe(true);
    expect(hasNonPublicLiteralHost('http://[::ffff:a9fe:a9fe]/')).toBe(true);
    expect(hasNonPublicLiteralHost('http://0x7f000001/')).toBe(true); // WHATWG URL normalizes it to 127.0.0.1
    expect(hasNonPublicLiteralHost('http://2130706433/')).toBe(true);
    expect(hasNonPublicLiteralHost('https://cdn.example.com/v.mp4')).toBe(false);
    expect(hasNonPublicLiteralHost('https://8.8.8.8/v.mp4')).toBe(false);
  });
});

describe('guardedGet', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/png') {
        res.writeHead(200, { 'content-type': 'image/png' });
        return res.end(Buffer.alloc(100, 1));
      }
      if (req.url === '/html') {
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<html>');
      }
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'image/png' });
        return res.end(Buffer.alloc(5000, 1));
      }
      if (req.url === '/to-metadata') {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
        return res.end();
      }
      if (req.url === '/to-file') {
        res.writeHead(302, { location: 'file:///etc/passwd' });
        return res.end();
      }
      if (req.url === '/slow') return setTimeout(() => res.end('late'), 2000);
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const opts = { allowTypes: ['image/'], maxBytes: 1000, timeoutMs: 1000 };

  it('refuses a loopback address unless the URL is exempt', async () => {
    await expect(guardedGet(`${base}/png`, opts)).rejects.toThrow(/not, or does not resolve to, a public address/);
    const ok = await guardedGet(`${base}/png`, { ...opts, exempt: () => true });
    expect(ok.status).toBe(200);
    expect(ok.body.length).toBe(100);
  });

  it('refuses a name that resolves to loopback (checked after DNS), without telling the address', async () => {
    const port = new URL(base).port;
    const err = await guardedGet(`http://localhost:${port}/png`, opts).catch((e: Error) => e);
    expect(err).toBeInstanceOf(FetchRefused);
    expect((err as Error).message).toBe('the host is not, or does not resolve to, a public address');
    // A name that does not resolve reads the same: the gateway's resolver is not an oracle.
    const missing = await guardedGet('http://no-such-host.invalid/png', opts).catch((e: Error) => e);
    expect((missing as Error).message).toBe((err as Error).message);
  });

  it('asks `exempt` per hop: a redirect out of an exempt URL is guarded', async () => {
    const exempt = (u: URL) => u.pathname === '/to-metadata';
    await expect(guardedGet(`${base}/to-metadata`, { ...opts, exempt })).rejects.toThrow(/not, or does not resolve to, a public address/);
    // Dot segments are resolved before `exempt` sees the URL (and the resolved URL is the one fetched).
    const seen: string[] = [];
    await guardedGet(`${base}/x/../png`, { ...opts, exempt: (u) => (seen.push(u.pathname), true) });
    expect(seen).toEqual(['/png']);
  });

  it('checks every redirect hop', async () => {
    // The first hop is allowed here; the redirect target is checked on its own.
    await expect(guardedGet(`${base}/to-file`, { ...opts, exempt: () => true })).rejects.toThrow(/only http\(s\) URLs/);
    await expect(guardedGet(`${base}/to-metadata`, opts)).rejects.toBeInstanceOf(FetchRefused);
  });

  it('enforces the content-type allow-list, the size cap and the timeout', async () => {
    await expect(guardedGet(`${base}/html`, { ...opts, exempt: () => true })).rejects.toThrow(/content type "text\/html" is not accepted/);
    await expect(guardedGet(`${base}/big`, { ...opts, exempt: () => true })).rejects.toThrow(/over the 1000-byte limit/);
    await expect(guardedGet(`${base}/slow`, { ...opts, allowTypes: [], exempt: () => true, timeoutMs: 300 })).rejects.toThrow(/timed out/);
  });

  it('refuses non-http schemes outright', async () => {
    await expect(guardedGet('file:///etc/passwd', opts)).rejects.toThrow(/only http\(s\) URLs are fetched, not file:/);
  });
});
