import { describe, expect, it } from 'vitest';
import { balanceQuery, balanceUrl, readBalance } from '../../src/providers/balance.js';
import { UpstreamFailure } from '../../src/upstream/failure.js';

// A balance answer read as its spec says: amounts as numbers or numeric text, lists summed or one
// per item, filters, a subtracted amount, the unit fixed or read; a malformed answer is an
// UpstreamFailure naming what is missing.

describe('balance reads', () => {
  it('reads one amount, a difference, one per item and a filtered sum', () => {
    expect(readBalance({ path: '/x', amounts: [{ label: 'a', path: 'creditBalance', unit: 'credits' }] }, { creditBalance: 12 })).toEqual([{ label: 'a', amount: 12, unit: 'credits' }]);
    expect(readBalance({ path: '/x', amounts: [{ label: 'left', path: 'data.total', minus: 'data.used', unit: 'USD' }] }, { data: { total: 100.5, used: 25.75 } })).toEqual([{ label: 'left', amount: 74.75, unit: 'USD' }]);
    const infos = { balance_infos: [{ currency: 'CNY', total_balance: '110.00' }, { currency: 'USD', total_balance: '0.10' }] };
    expect(readBalance({ path: '/x', amounts: [{ label: 't', items: 'balance_infos', path: 'total_balance', unit_path: 'currency' }] }, infos).map((b) => [b.amount, b.unit])).toEqual([
      [110, 'CNY'],
      [0.1, 'USD'],
    ]);
    const packs = { packs: [{ s: 'online', r: 1.1 }, { s: 'expired', r: 50 }, { s: 'online', r: 2.2 }] };
    const sum = { label: 'p', items: 'packs', where: { s: ['online'] }, path: 'r', sum: true, unit: 'units' };
    expect(readBalance({ path: '/x', amounts: [sum] }, packs)).toEqual([{ label: 'p', amount: 3.3, unit: 'units' }]);
    expect(readBalance({ path: '/x', amounts: [sum] }, { packs: [] })).toEqual([{ label: 'p', amount: 0, unit: 'units' }]);
  });

  it('refuses an answer without the amount, with text that is not a number, or without the list', () => {
    const spec = { path: '/x', amounts: [{ label: 'a', path: 'balance', unit: 'USD' }] };
    for (const bad of [{}, { balance: 'lots' }, { balance: null }, { balance: '1e9' }, { balance: Number.NaN }]) {
      expect(() => readBalance(spec, bad as Record<string, unknown>), JSON.stringify(bad)).toThrow(UpstreamFailure);
    }
    expect(() => readBalance(spec, {})).toThrow('the balance answer has no number at balance');
    expect(() => readBalance({ path: '/x', amounts: [{ label: 'p', items: 'packs', path: 'r', unit: 'u' }] }, { packs: 'none' })).toThrow('the balance answer has no list at packs');
  });

  it('fills the query times and places the read after the base URL or at its origin', () => {
    const spec = { path: '/account/costs', from: 'origin' as const, query: { start_time: '{days_ago_ms:365}', end_time: '{now_ms}' }, amounts: [] };
    expect(balanceQuery(spec, 1_000_000_000_000)).toBe(`?start_time=${1_000_000_000_000 - 365 * 86_400_000}&end_time=1000000000000`);
    expect(balanceUrl({ path: '/user/balance', from: 'origin', amounts: [] }, 'https://api.deepseek.com/v1')).toBe('https://api.deepseek.com/user/balance');
    expect(balanceUrl({ path: '/credits', amounts: [] }, 'https://openrouter.ai/api/v1')).toBe('https://openrouter.ai/api/v1/credits');
  });
});
