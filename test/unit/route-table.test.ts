import { describe, expect, it } from 'vitest';
import { RouteTable } from '../../src/http/route-table.js';
import { depthExceeds } from '../../src/http/request-guards.js';

describe('route table', () => {
  const table = new RouteTable();
  table.add('GET', '/v1/models', true);
  table.add('HEAD', '/v1/models', true);
  table.add('GET', '/v1/video/generations/:task_id', true);
  table.add('POST', '/v1/video/generations', true);
  table.add('GET', '/files/*');

  it('tells which methods a concrete path accepts', () => {
    expect(table.allowed('/v1/models')).toEqual(['GET', 'HEAD']);
    expect(table.allowed('/v1/video/generations')).toEqual(['POST']);
    expect(table.allowed('/v1/video/generations/cgt-1')).toEqual(['GET']);
    expect(table.allowed('/files/a/b/c')).toEqual(['GET']);
  });

  it('matches as the router does: no empty parameter, no trailing slash, an encoded slash stays in its segment', () => {
    expect(table.allowed('/v1/video/generations/')).toEqual([]);
    expect(table.allowed('/v1/models/')).toEqual([]);
    expect(table.allowed('/v1/video/generations/a%2Fb')).toEqual(['GET']);
    expect(table.allowed('/v1/video/generations/a/b')).toEqual([]);
    expect(table.allowed('/v1/%6Dodels')).toEqual(['GET', 'HEAD']);
    expect(table.allowed('/v1/models%')).toEqual([]);
  });

  it('lists every route with its auth flag, once', () => {
    table.add('GET', '/v1/models', true);
    expect(table.routes().filter((r) => r.url === '/v1/models')).toEqual([
      { method: 'GET', url: '/v1/models', auth: true },
      { method: 'HEAD', url: '/v1/models', auth: true },
    ]);
  });
});

describe('JSON depth guard', () => {
  it('measures depth without overflowing the stack, arrays and objects alike', () => {
    const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000));
    expect(depthExceeds(deep, 64)).toBe(true);
    const deepObject = JSON.parse('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000));
    expect(depthExceeds(deepObject, 64)).toBe(true);
    // Exactly at the limit passes, one level more does not (the root is level 1).
    const levels = (n: number) => JSON.parse('{"a":['.repeat(n / 2) + ']}'.repeat(n / 2));
    expect(depthExceeds(levels(64), 64)).toBe(false);
    expect(depthExceeds(levels(66), 64)).toBe(true);
    expect(depthExceeds(JSON.parse('['.repeat(64) + ']'.repeat(64)), 64)).toBe(false);
    expect(depthExceeds(JSON.parse('['.repeat(65) + ']'.repeat(65)), 64)).toBe(true);
    // A deep branch after shallow siblings is found.
    expect(depthExceeds({ a: 1, b: [1, 'x', null], c: { d: [[[{}]]] } }, 6)).toBe(false);
    expect(depthExceeds({ a: 1, b: [1, 'x', null], c: { d: [[[{ e: [] }]]] } }, 6)).toBe(true);
    expect(depthExceeds({ a: [{ b: [1, 2, { c: 'x' }] }] }, 5)).toBe(false);
    expect(depthExceeds({ a: [{ b: [1, 2, { c: {} }] }] }, 5)).toBe(true);
  });
});
