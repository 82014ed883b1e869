import { Readable } from 'node:stream';
import type { Routes } from '../../pipeline/gateway.js';
import type { Reply } from '../../pipeline/request.js';
import type { Admin } from '../../admin/index.js';
import { groupOf } from '../../admin/usage.js';
import { int, oneOf, str, type Query } from '../../admin/query.js';
import { overview, RANGES, type Range } from '../../admin/overview.js';
import { adminErrors } from '../../admin/errors.js';

/** An export's CSV lines, streamed as a download named `filename`. */
function sendCsv(reply: Reply, filename: string, lines: AsyncGenerator<string>): Reply {
  return reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${filename}"`).send(Readable.from(lines));
}

export function registerReportRoutes(app: Routes, admin: Admin): void {
  app.get(
    '/admin/api/usage',
    {
      schema: {
        tags: ['admin: usage'],
        summary: 'Ledger rows, newest first (key, model, status, from, to, limit, cursor); group_by=key|model|hour|day for totals; format=csv for an export',
      },
    },
    async (request, reply) => {
      const q = request.query as Query;
      const format = oneOf(q, 'format', ['json', 'csv'] as const) ?? 'json';
      const by = groupOf(q);
      if (format === 'csv') {
        if (by) throw adminErrors.invalid('format=csv exports rows; it does not combine with group_by');
        admin.usage.filter(q); // a bad filter is a 400 before the first byte goes out
        return sendCsv(reply, 'mediagate-usage.csv', admin.usage.csv(q));
      }
      return by ? admin.usage.grouped(q, by) : admin.usage.page(q);
    },
  );

  app.get(
    '/admin/api/usage/series',
    {
      schema: {
        tags: ['admin: usage'],
        summary: 'Spend and requests per key or model (group) per hour or day (bucket) over from..to; key and model filter the rows',
      },
    },
    async (request) => admin.usage.series(request.query as Query),
  );

  app.get(
    '/admin/api/request-logs',
    {
      schema: {
        tags: ['admin: usage'],
        summary: 'Request logs, newest first (key, model, status, from, to, trace_id, limit, cursor); format=csv for an export',
      },
    },
    async (request, reply) => {
      const q = request.query as Query;
      if ((oneOf(q, 'format', ['json', 'csv'] as const) ?? 'json') === 'json') return admin.requestLogs.page(q);
      admin.requestLogs.filter(q); // a bad filter is a 400 before the first byte goes out
      return sendCsv(reply, 'mediagate-request-logs.csv', admin.requestLogs.csv(q));
    },
  );

  app.get('/admin/api/overview', { schema: { tags: ['admin: usage'], summary: 'Requests, errors, spend, latency and open tasks over the last hour, day or week' } }, async (request) => {
    const range = oneOf(request.query as Query, 'range', Object.keys(RANGES) as Range[]) ?? 'hour';
    return overview(admin.usageReports, admin.taskReports, range);
  });

  app.get('/admin/api/audit', { schema: { tags: ['admin: audit'], summary: 'The audit log, newest first (limit, cursor)' } }, async (request) => {
    const q = request.query as Query;
    return admin.audit.list(int(q, 'limit', 1, 500, 100), str(q, 'cursor', 512));
  });
}
