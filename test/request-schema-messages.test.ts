import { describe, expect, it } from 'vitest';
import { suiteGateway } from './helpers/suite-gateway.js';

// A request body that breaks its schema is answered with one sentence per bad field; a field that
// must be one of a few words lists them, once.

describe('request schema error messages', () => {
  const s = suiteGateway();

  async function post(path: string, body: unknown): Promise<{ status: number; message: string }> {
    const res = await fetch(`${s.gw.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    return { status: res.status, message: json.error?.message ?? json.message };
  }

  it('lists the allowed roles once for a wrong role', async () => {
    const r = await post('/v1/chat/completions', { model: 'sim-chat', messages: [{ role: 'robot', content: 'hi' }] });
    expect(r.status).toBe(400);
    expect(r.message).toMatch(/messages\[0\]\.role must be one of system, (developer, )?user, assistant, tool/);
    expect(r.message.match(/role/g)).toHaveLength(1);
    expect(r.message).not.toContain('must be equal to constant');
    expect(r.message).not.toContain('anyOf');
  });

  it('says which field is missing', async () => {
    const r = await post('/v1/chat/completions', { model: 'sim-chat' });
    expect(r.status).toBe(400);
    expect(r.message).toContain('body must have the field messages');
  });
});
