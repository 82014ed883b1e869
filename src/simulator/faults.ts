import type { ServerResponse } from 'node:http';

/**
 * Faults injected on request through the control API (POST /__sim/faults). A fault applies to
 * the next `count` requests whose route name starts with `match` ("" or "*" = any route).
 *  - status: answer with that HTTP status and a provider-shaped error body
 *  - reset: destroy the socket without answering
 *  - malformed: answer 200 with a body that is not JSON
 *  - truncate: for streams, stop after a few events and destroy the socket
 *  - hang: never answer (until the client gives up)
 *  - latency: wait `ms` before handling normally
 */
export type FaultKind = 'status' | 'reset' | 'malformed' | 'truncate' | 'hang' | 'latency';

export interface Fault {
  match: string;
  kind: FaultKind;
  status?: number;
  ms?: number;
  count: number;
}

export class FaultBook {
  private faults: Fault[] = [];

  add(f: Fault): void {
    this.faults.push(f);
  }

  clear(): void {
    this.faults = [];
  }

  /** Takes the first fault matching the route, decrementing its count. */
  take(route: string): Fault | undefined {
    const i = this.faults.findIndex((f) => f.match === '' || f.match === '*' || route.startsWith(f.match));
    if (i < 0) return undefined;
    const f = this.faults[i];
    f.count -= 1;
    if (f.count <= 0) this.faults.splice(i, 1);
    return { ...f };
  }

  list(): Fault[] {
    return this.faults.map((f) => ({ ...f }));
  }
}

export function parseFault(body: Record<string, unknown>): Fault | string {
  const kind = body.kind ?? body.fault;
  const kinds: FaultKind[] = ['status', 'reset', 'malformed', 'truncate', 'hang', 'latency'];
  if (typeof kind !== 'string' || !kinds.includes(kind as FaultKind)) return `kind must be one of ${kinds.join(', ')}`;
  const count = body.count === undefined ? 1 : Number(body.count);
  if (!Number.isInteger(count) || count < 1) return 'count must be a positive integer';
  const status = body.status === undefined ? undefined : Number(body.status);
  if (kind === 'status' && (!Number.isInteger(status) || status! < 400 || status! > 599)) return 'status must be 400–599';
  const ms = body.ms === undefined ? undefined : Number(body.ms);
  if (kind === 'latency' && (!Number.isFinite(ms) || ms! < 0)) return 'ms must be a non-negative number';
  return { match: typeof body.match === 'string' ? body.match : '', kind: kind as FaultKind, status, ms, count };
}

/** Applies the connection-level faults; returns true when the request was consumed by the fault. */
export function applyConnectionFault(f: Fault, res: ServerResponse): boolean {
  if (f.kind === 'reset') {
    res.socket?.destroy();
    return true;
  }
  if (f.kind === 'hang') {
    // Keep the socket open and never answer; the client's timeout or abort ends it.
    return true;
  }
  if (f.kind === 'malformed') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"id": "broken", "choices": [ {"message": ');
    return true;
  }
  return false;
}
