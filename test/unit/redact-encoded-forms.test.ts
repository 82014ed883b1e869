import { describe, expect, it } from 'vitest';
import { redact, redactDeep, registerSecret } from '../../src/http/redact.js';

describe('redact', () => {
  const secret = 'unit-Secret/With+Chars=7-abcdef';
  registerSecret(secret);

  it('scrubs a secret as is, URL-encoded, form-encoded, base64 and base64url', () => {
    for (const form of [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64'), Buffer.from(secret).toString('base64url')]) {
      const out = redact(`before ${form} after`);
      expect(out).toContain('[redacted]');
      expect(out).not.toContain(form.slice(2, -2));
    }
  });

  it('scrubs base64 of the secret inside a longer encoded text, at every offset', () => {
    for (const prefix of ['', 'u:', 'us:', 'use:']) {
      const encoded = Buffer.from(`${prefix}${secret}`).toString('base64');
      const out = redact(`Authorization: Basic ${encoded}`);
      expect(out).toContain('[redacted]');
      // At most a few characters around the secret remain.
      expect(out.length).toBeLessThan(`Authorization: Basic ${encoded}`.length - 20);
    }
  });

  it('scrubs client and admin keys', () => {
    expect(redact('key mg-abcdefghijklmnopqrstuvwxyz0123456789AB and mga-abcdefghijklmnopqrstuvwxyz0123')).toBe('key mg-[redacted] and mga-[redacted]');
  });

  it('scrubs every string inside an object, keeping URLs and their other parameters', () => {
    const obj = { a: [`x ${secret}`], b: { url: `https://h.example/v.mp4?sig=abc&key=${encodeURIComponent(secret)}` }, n: 5 };
    expect(redactDeep(obj)).toEqual({ a: ['x [redacted]'], b: { url: 'https://h.example/v.mp4?sig=abc&key=[redacted]' }, n: 5 });
  });

  it('finds a secret registered later, and one made of regex metacharacters only as written', () => {
    // redact() looks for every form with one regex first: the forms must be escaped in it, and it is
    // rebuilt by every registration.
    const special = 'a.b*c+d?e(f)[g]{h}|i^j$k\\l/m-n';
    expect(redact(`x ${special} y`)).toBe(`x ${special} y`);
    registerSecret(special);
    expect(redact(`x ${special} y`)).toBe('x [redacted] y');
    expect(redact(`x ${encodeURIComponent(special)} y`)).toBe('x [redacted] y');
    // What the secret would match as a pattern is not the secret.
    expect(redact('x aXbbbcdde y')).toBe('x aXbbbcdde y');
    expect(redact('x mg-abcdefghijk y')).toBe('x mg-abcdefghijk y');
  });

  it('leaves text without secrets unchanged, short secrets unregistered', () => {
    registerSecret('short');
    expect(redact('a short text')).toBe('a short text');
  });
});
