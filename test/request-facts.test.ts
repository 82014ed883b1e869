import { describe, expect, it } from 'vitest';
import { newFacts, noteUsage, runWithFacts } from '../src/http/request-facts.js';
import { RequestLogWriter } from '../src/request-logs/writer.js';
import type { RequestLogsRepo } from '../src/store/repos/request-logs.js';

// Request logs turned off by a reload let go of the facts' async context at the next request.

const usage = { model: 'm', channel: 'c', endpoint: 'chat', status: 200 };

describe('request facts', () => {
  it('a request gathers its usage while logs are on; once they are off, the context is let go', async () => {
    let enabled = true;
    const writer = new RequestLogWriter({} as RequestLogsRepo, () => ({ enabled }) as never, () => {});
    const request = { route: { options: { billable: true } } } as never;
    const first = writer.factsFor(request)!;
    await runWithFacts(first, async () => {
      await Promise.resolve();
      noteUsage(usage);
    });
    expect(first.usage).toEqual(usage);

    // A request still running when the logs go off loses its facts (its row has no usage).
    const running = newFacts();
    await runWithFacts(running, async () => {
      enabled = false;
      expect(writer.factsFor(request)).toBeNull();
      await Promise.resolve();
      noteUsage(usage);
    });
    expect(running.usage).toBeNull();

    // On again: gathered as before.
    enabled = true;
    const later = writer.factsFor(request)!;
    await runWithFacts(later, async () => noteUsage(usage));
    expect(later.usage).toEqual(usage);
  });
});
