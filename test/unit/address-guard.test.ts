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

  it('refuses a loopback address unless the channel allows private networks', async () => {
    await expect(guardedGet(`${base}/png`, opts)).rejects.toThrow(/not a public address/);
    const ok = await guardedGet(`${base}/png`, { ...opts, allowPrivate: true });
    expect(ok.status).toBe(200);
    expect(ok.body.length).toBe(100);
  });

  it('refuses a name that resolves to loopback (checked after DNS)', async () => {
    const port = new URL(base).port;
    await expect(guardedGet(`http://localhost:${port}/png`, opts)).rejects.toThrow(/localhost .*not a public address/);
  });

  it('checks every redirect hop', async () => {
    // The first hop is allowed here; the redirect target is checked on its own.
    await expect(guardedGet(`${base}/to-file`, { ...opts, allowPrivate: true })).rejects.toThrow(/only http\(s\) URLs/);
    await expect(guardedGet(`${base}/to-metadata`, opts)).rejects.toBeInstanceOf(FetchRefused);
  });

  it('enforces the content-type allow-list, the size cap and the timeout', async () => {
    await expect(guardedGet(`${base}/html`, { ...opts, allowPrivate: true })).rejects.toThrow(/content type "text\/html" is not accepted/);
    await expect(guardedGet(`${base}/big`, { ...opts, allowPrivate: true })).rejects.toThrow(/over the 1000-byte limit/);
    await expect(guardedGet(`${base}/slow`, { ...opts, allowTypes: [], allowPrivate: true, timeoutMs: 300 })).rejects.toThrow(/timed out/);
  });

  it('refuses non-http schemes outright', async () => {
    await expect(guardedGet('file:///etc/passwd', opts)).rejects.toThrow(/only http\(s\) URLs are fetched, not file:/);
  });
});
