import { describe, expect, it } from 'vitest';
import { budgetWindow, isTimeZone } from '../../src/limits/budget-window.js';

const iso = (w: { start: number; end: number }) => [new Date(w.start).toISOString(), new Date(w.end).toISOString()];
const at = (s: string) => Date.parse(s);

describe('budget windows', () => {
  it('are calendar days, Monday weeks and months in UTC', () => {
    expect(iso(budgetWindow('day', at('2026-02-28T23:59:59.999Z')))).toEqual(['2026-02-28T00:00:00.000Z', '2026-03-01T00:00:00.000Z']);
    expect(iso(budgetWindow('week', at('2026-03-01T10:00:00Z')))).toEqual(['2026-02-23T00:00:00.000Z', '2026-03-02T00:00:00.000Z']);
    expect(iso(budgetWindow('week', at('2026-03-02T00:00:00Z')))).toEqual(['2026-03-02T00:00:00.000Z', '2026-03-09T00:00:00.000Z']);
    expect(iso(budgetWindow('month', at('2026-12-31T23:00:00Z')))).toEqual(['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
  });

  it('follow the wall clock of a time zone, daylight-saving days included', () => {
    // New York: UTC-5 in winter, UTC-4 from 2026-03-08 02:00 local.
    expect(iso(budgetWindow('day', at('2026-01-15T04:59:59Z'), 'America/New_York'))).toEqual(['2026-01-14T05:00:00.000Z', '2026-01-15T05:00:00.000Z']);
    const spring = budgetWindow('day', at('2026-03-08T12:00:00Z'), 'America/New_York');
    expect(iso(spring)).toEqual(['2026-03-08T05:00:00.000Z', '2026-03-09T04:00:00.000Z']);
    expect(spring.end - spring.start).toBe(23 * 3600_000);
    expect(iso(budgetWindow('month', at('2026-11-01T03:30:00Z'), 'America/New_York'))).toEqual(['2026-10-01T04:00:00.000Z', '2026-11-01T04:00:00.000Z']);
    // Kolkata: +05:30, no daylight saving.
    expect(iso(budgetWindow('week', at('2026-03-01T19:00:00Z'), 'Asia/Kolkata'))).toEqual(['2026-03-01T18:30:00.000Z', '2026-03-08T18:30:00.000Z']);
  });

  it('know which zone names exist', () => {
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
  });
});
