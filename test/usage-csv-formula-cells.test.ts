import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminGateway, type AdminGateway } from './helpers/admin.js';
import { csvCell } from '../src/admin/csv.js';

// The usage CSV export is opened in spreadsheets. Any key holder can put text of their choosing in
// the model column (a refused request is recorded with the model it named), so no text cell may
// start a formula; the gateway's own numbers (negative ones too) stay numbers.

/** RFC 4180: quoted cells may hold commas, quotes ("") and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',' || ch === '\n') {
      row.push(cell);
      cell = '';
      if (ch === '\n') {
        rows.push(row);
        row = [];
      }
    } else cell += ch;
  }
  return rows;
}

/** A cell whose text a spreadsheet would start a formula at (also after spaces). */
const formulaStart = (cell: string) => /^(?:[\t\r\n]| *[=+\-@＝＋－＠])/.test(cell);
const NUMERIC = ['id', 'status', 'input_units', 'output_units', 'cost_usd', 'latency_ms'];

const PLANTED = [
  "-1+1+cmd|' /C calc'!A0",
  '-2',
  '-2+3',
  '=HYPERLINK("http://x","y")',
  '+1+1',
  '@SUM(1,1)',
  '\t=1+1',
  '\r=1+1',
  '  =1+1',
  '＝1+1',
  '－1+1',
  'sim-chat,"x"',
];

describe('usage CSV export: formula cells', () => {
  let gw: AdminGateway;
  let key: { id: string; key: string };

  beforeAll(async () => {
    gw = await startAdminGateway();
    key = await gw.createKey({ name: 'planter' });
    for (const model of PLANTED) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(res.status).toBe(404);
    }
    await gw.services.ledger.flush();
    // A negative amount as the gateway would print one (usd() of a negative micro-dollar count).
    await gw.services.store.db
      .insertInto('usage')
      .values({ key_id: key.id, model: 'sim-chat', channel: 'simulator', endpoint: 'chat', status: 200, input_units: 3, output_units: 4, cost_micros: -1500, overage_micros: 0, latency_ms: 12, created_at: Date.now() })
      .execute();
  });
  afterAll(async () => gw?.close());

  it('writes a planted formula as text, quoted with a leading apostrophe, and keeps the numbers numbers', async () => {
    const res = await fetch(`${gw.url}/admin/api/usage?format=csv&key=${key.id}`, { headers: { authorization: `Bearer ${gw.token}` } });
    expect(res.status).toBe(200);
    const [header, ...rows] = parseCsv(await res.text());
    expect(header).toEqual(['id', 'created_at', 'key_id', 'model', 'channel', 'endpoint', 'status', 'input_units', 'output_units', 'cost_usd', 'billed_by', 'latency_ms', 'error']);
    expect(rows.length).toBe(PLANTED.length + 1);
    const model = header.indexOf('model');
    const models = rows.map((r) => r[model]);
    for (const planted of PLANTED) {
      // Every planted name is in the export, as text: a neutralised one with its apostrophe.
      expect(models).toContain(formulaStart(planted) ? `'${planted}` : planted);
    }
    for (const r of rows) {
      // Text columns never start a formula (not even '-2', which is text there); numeric ones are plain numbers.
      r.forEach((cell, i) => expect(NUMERIC.includes(header[i]) ? /^-?\d+(?:\.\d+)?$/.test(cell) : !formulaStart(cell), `${header[i]}: ${cell}`).toBe(true));
    }
    const negative = rows.find((r) => r[header.indexOf('cost_usd')].startsWith('-'));
    expect(negative?.[header.indexOf('cost_usd')]).toBe('-0.001500');
    // The planted row has no billed_by: an empty text cell between its cost and its latency.
    expect(negative?.slice(header.indexOf('status'), header.indexOf('latency_ms') + 1)).toEqual(['200', '3', '4', '-0.001500', '', '12']);
  });

  it('leaves a numeric column that holds no number to the text rule', () => {
    expect(csvCell('-1+1', true)).toBe(`"'-1+1"`);
    expect(csvCell('-12.5', true)).toBe('-12.5');
    expect(csvCell('-12.5')).toBe(`"'-12.5"`);
    expect(csvCell('a"b')).toBe('"a""b"');
  });
});
