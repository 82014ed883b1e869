import { UpstreamFailure } from '../../upstream/failure.js';
import { redact } from '../../http/redact.js';
import { balanceQuery, readBalance, type BalanceCapability } from '../balance.js';
import type { ProbeCapability, ProbeOutcome } from '../provider.js';
import type { VideoAdapter } from '../video-types.js';
import { KitHttp } from './http.js';
import type { Manifest } from './manifest.js';

// The reads of a manifest's provider that concern the account, not a generation: its balance
// (`balance`) and the health probe (`probe`). Both are GETs the provider does not bill.

/** The balance read a manifest declares. */
export function kitBalance(m: Manifest): BalanceCapability | undefined {
  const spec = m.balance;
  if (!spec) return undefined;
  const http = new KitHttp(m);
  return {
    describe: () => `GET ${spec.from === 'origin' ? '' : (m.api.base_path ?? '')}${spec.path}`,
    async read(call, target) {
      const root = spec.from === 'origin' ? new URL(target.baseUrl).origin : http.url(target, '');
      // Read as any answer of the provider: its envelope checked, its `unwrap` applied.
      const out = await http.call(call, target, { method: 'GET', path: spec.path, url: `${root}${spec.path}${balanceQuery(spec)}` });
      return readBalance(spec, out);
    },
  };
}

/** The probe a manifest declares: a task id no task has, read as a task is, or a GET of a path. */
export function kitProbe(m: Manifest, videos: VideoAdapter | undefined): ProbeCapability | undefined {
  const p = m.probe;
  if (!p) return undefined;
  const http = new KitHttp(m);
  const healthy = new Set(p.healthy ?? []);
  const codes = new Set((p.healthy_codes ?? []).map(String));
  const expected = [...healthy, ...[...codes].map((c) => `code ${c}`)].join(', ');
  const taskId = p.task_id;
  const description = taskId
    ? `GET ${m.api.base_path ?? ''}${m.videos?.get.path ?? ''} of an unknown task${expected ? ` (${expected} = answered)` : ''}`.replace('{id}', taskId)
    : `GET ${p.from === 'origin' ? '' : (m.api.base_path ?? '')}${p.path ?? '/'}${expected ? ` (${expected} = answered)` : ''}`;
  return {
    description,
    async run(call, target): Promise<ProbeOutcome> {
      try {
        if (taskId) {
          if (!videos) throw new Error(`the ${m.type} manifest has no task read to probe with`);
          await videos.get(call, target, taskId);
        } else {
          const root = p.from === 'origin' ? new URL(target.baseUrl).origin : http.url(target, '');
          await http.call(call, target, { method: 'GET', path: p.path ?? '/', url: `${root}${p.path ?? '/'}` });
        }
        return { ok: true, status: 200, message: 'answered' };
      } catch (err) {
        if (!(err instanceof UpstreamFailure) || err.kind !== 'status') return { ok: false, status: err instanceof UpstreamFailure && err.status ? err.status : null, message: redact((err as Error).message) };
        const code = err.providerCode ? String(err.providerCode) : undefined;
        if (healthy.has(err.status) || (code !== undefined && codes.has(code))) return { ok: true, status: err.status, message: `answered ${err.status}${code ? ` (code ${code})` : ''}: the unknown read, as the provider documents it` };
        const why = err.status === 401 || err.status === 403 ? "the provider refused the channel's credentials" : err.status === 429 ? 'the provider is rate limiting' : `the provider answered ${err.status}`;
        return { ok: false, status: err.status, message: `${why}: ${redact(err.message)}` };
      }
    },
  };
}
