import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config-file/loader.js';

// The budget settings are checked when the config loads: a time zone Intl knows, an alert URL with
// a secret to sign with and an address the sender may reach.

const base = { database: { url: 'sqlite::memory:' }, channels: [], models: {} };
const load = (limits: Record<string, unknown>, extra: Record<string, unknown> = {}) => validateConfig({ ...base, ...extra, limits }, 'c.yaml');
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('budget settings', () => {
  it('default to UTC and the 50/80/100 thresholds, with no alerts', () => {
    const c = load({});
    expect(c.limits.budget_time_zone).toBe('UTC');
    expect(c.limits.budget_alerts).toEqual({ thresholds: [50, 80, 100] });
  });

  it('refuse an unknown time zone, naming the field', () => {
    expect(() => load({ budget_time_zone: 'Europe/Atlantis' })).toThrow('c.yaml: limits.budget_time_zone: "Europe/Atlantis" is not an IANA time zone name');
    expect(load({ budget_time_zone: 'Asia/Tokyo' }).limits.budget_time_zone).toBe('Asia/Tokyo');
  });

  it('need a secret with an alert URL, https unless loopback with webhooks.allow_insecure', () => {
    expect(() => load({ budget_alerts: { url: 'https://hooks.example/budget' } })).toThrow('limits.budget_alerts.secret: required with a url');
    expect(() => load({ budget_alerts: { url: 'http://hooks.example/budget', secret: SECRET } })).toThrow('limits.budget_alerts.url: must be an https URL');
    expect(() => load({ budget_alerts: { url: 'http://127.0.0.1:9/b', secret: SECRET } })).toThrow('must be an https URL');
    expect(load({ budget_alerts: { url: 'http://127.0.0.1:9/b', secret: SECRET } }, { webhooks: { allow_insecure: true } }).limits.budget_alerts.url).toBe('http://127.0.0.1:9/b');
    // The refusal names the field and the form, never the value given.
    expect(() => load({ budget_alerts: { url: 'https://hooks.example/b', secret: 'hunter2' } })).toThrow(/limits\.budget_alerts\.secret: Expected string to match/);
    expect(() => load({ budget_alerts: { url: 'https://hooks.example/b', secret: 'hunter2' } })).not.toThrow(/hunter2/);
    expect(() => load({ budget_alerts: { thresholds: [] } })).toThrow(/limits\.budget_alerts\.thresholds/);
  });
});
