import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { proxyEntryProblem, requestClient, trustedProxies } from '../../src/http/forwarded.js';
import { validateConfig, ConfigError } from '../../src/config-file/loader.js';

// Who a request came from behind server.trusted_proxies: X-Forwarded-For walked right to left
// over trusted hops only, X-Forwarded-Proto believed only from a trusted peer.

function req(peer: string, headers: Record<string, string | string[]> = {}, encrypted = false): IncomingMessage {
  return { socket: { remoteAddress: peer, encrypted }, headers } as unknown as IncomingMessage;
}

describe('requestClient', () => {
  const trusted = trustedProxies(['127.0.0.1', '10.0.0.0/8', 'fd00::/8']);

  it('believes nothing without trusted proxies, or from a peer that is not one', () => {
    const headers = { 'x-forwarded-for': '203.0.113.1', 'x-forwarded-proto': 'https' };
    expect(requestClient(req('127.0.0.1', headers), trustedProxies([]))).toEqual({ address: '127.0.0.1', https: false });
    expect(requestClient(req('198.51.100.1', headers), trusted)).toEqual({ address: '198.51.100.1', https: false });
    expect(requestClient(req('198.51.100.1', headers, true), trusted)).toEqual({ address: '198.51.100.1', https: true });
  });

  it('walks X-Forwarded-For from the right over trusted hops to the first other address', () => {
    expect(requestClient(req('127.0.0.1', { 'x-forwarded-for': '203.0.113.1' }), trusted).address).toBe('203.0.113.1');
    expect(requestClient(req('127.0.0.1', { 'x-forwarded-for': '1.1.1.1, 203.0.113.1' }), trusted).address).toBe('203.0.113.1');
    expect(requestClient(req('127.0.0.1', { 'x-forwarded-for': '1.1.1.1, 203.0.113.1, 10.9.8.7' }), trusted).address).toBe('203.0.113.1');
    expect(requestClient(req('127.0.0.1', { 'x-forwarded-for': ['1.1.1.1', '203.0.113.2, 10.0.0.1'] }), trusted).address).toBe('203.0.113.2');
    // Every hop trusted: the leftmost one is the client.
    expect(requestClient(req('127.0.0.1', { 'x-forwarded-for': '10.0.0.2, 10.0.0.1' }), trusted).address).toBe('10.0.0.2');
    // No header: the proxy itself.
    expect(requestClient(req('127.0.0.1'), trusted).address).toBe('127.0.0.1');
  });

  it('stops at an entry that is no address, keeping the hop that passed it on', () => {
    expect(requestClient(req('127.0.0.1', { 'x-forwarded-for': '203.0.113.1, <script>, 10.0.0.1' }), trusted).address).toBe('10.0.0.1');
    expect(requestClient(req('127.0.0.1', { 'x-forwarded-for': '203.0.113.1:5555' }), trusted).address).toBe('127.0.0.1');
    expect(requestClient(req('127.0.0.1', { 'x-forwarded-for': '' }), trusted).address).toBe('127.0.0.1');
  });

  it('matches IPv6 CIDRs and IPv4 peers seen as IPv4-mapped IPv6', () => {
    expect(requestClient(req('fd12::5', { 'x-forwarded-for': '2001:db8::1' }), trusted).address).toBe('2001:db8::1');
    expect(requestClient(req('::ffff:127.0.0.1', { 'x-forwarded-for': '203.0.113.1' }), trusted).address).toBe('203.0.113.1');
    expect(requestClient(req('::1', { 'x-forwarded-for': '203.0.113.1' }), trusted).address).toBe('::1');
  });

  it("takes https from the trusted proxy's X-Forwarded-Proto (its last value), else from the connection", () => {
    expect(requestClient(req('127.0.0.1', { 'x-forwarded-proto': 'https' }), trusted).https).toBe(true);
    expect(requestClient(req('127.0.0.1', { 'x-forwarded-proto': 'HTTPS' }), trusted).https).toBe(true);
    expect(requestClient(req('127.0.0.1', { 'x-forwarded-proto': 'https, http' }), trusted).https).toBe(false);
    expect(requestClient(req('127.0.0.1', { 'x-forwarded-proto': 'http' }, true), trusted).https).toBe(false);
    expect(requestClient(req('127.0.0.1', {}, true), trusted).https).toBe(true);
  });
});

describe('server.trusted_proxies entries', () => {
  it('accepts addresses and CIDRs of both families', () => {
    for (const entry of ['127.0.0.1', '10.0.0.0/8', '0.0.0.0/0', '::1', 'fd00::/8', '::/0', '192.168.1.0/24']) expect(proxyEntryProblem(entry), entry).toBeNull();
  });

  it('refuses anything else, saying what is allowed', () => {
    for (const entry of ['localhost', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/', '10.0.0.0/8/8', '10.0.0.0/x', '300.1.1.1', '10.0.0.1 ']) {
      expect(proxyEntryProblem(entry), entry).toMatch(/not an IP address or CIDR|prefix length must be 0 to (32|128)/);
    }
  });

  it('are checked when the config is loaded', () => {
    expect(() => validateConfig({ server: { trusted_proxies: ['127.0.0.1', 'proxy.internal'] } })).toThrow(ConfigError);
    expect(() => validateConfig({ server: { trusted_proxies: ['127.0.0.1', 'proxy.internal'] } })).toThrow(/server\.trusted_proxies\[1\]: "proxy\.internal" is not an IP address or CIDR/);
    expect(validateConfig({ server: { trusted_proxies: ['10.0.0.0/8'] } }).server.trusted_proxies).toEqual(['10.0.0.0/8']);
    expect(validateConfig({}).server.trusted_proxies).toEqual([]);
  });
});
