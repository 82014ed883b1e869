import { startGateway, type GatewayOptions, type TestGateway } from './gateway.js';
import { createAdminAccess } from '../../src/admin/index.js';
import type { AppOptions } from '../../src/app.js';

export interface AdminGateway extends TestGateway {
  /** A live admin token (mga-…). */
  token: string;
  /** Calls the admin API with the admin token; JSON in and out. */
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
}

/** A test gateway with the admin API and console on its listener, and one admin token. */
export async function startAdminGateway(overrides: Record<string, unknown> = {}, appOptions: Omit<AppOptions, 'logStream'> = {}, opts: Omit<GatewayOptions, 'app'> = {}): Promise<AdminGateway> {
  const gw = await startGateway({ admin: { enabled: true }, ...overrides }, { ...opts, app: appOptions });
  const { secret } = await createAdminAccess(gw.services).create('tester');
  return Object.assign(gw, {
    token: secret,
    async api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
      const res = await fetch(`${gw.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // CSV, video: the raw text
      }
      return { status: res.status, body: parsed as any, headers: res.headers };
    },
  });
}
