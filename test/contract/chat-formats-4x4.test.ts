import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRig } from '../helpers/chat.js';
import { ledgerRowsWhen } from '../helpers/chat.js';
import { MODEL_OF, WIRE_FORMATS, driverFor, startFormatsRig, type FormatDriver, type WireFormat } from '../helpers/chat-formats.js';

// Every client format × every upstream format, each client through its official SDK: text, a
// stream with its usage, a forced tool call, an answer under a nested JSON schema (streamed and
// not), and the credit settled from the usage the upstream reported.

const WEATHER = {
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 7 } }, required: ['city', 'days'] },
};

const NESTED = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    forecast: { type: 'array', items: { type: 'object', properties: { day: { type: 'integer' }, sunny: { type: 'boolean' } }, required: ['day', 'sunny'], additionalProperties: false } },
    source: { type: 'object', properties: { name: { type: 'string' }, kind: { type: 'string', enum: ['station', 'model'] } }, required: ['name', 'kind'], additionalProperties: false },
  },
  required: ['city', 'forecast', 'source'],
  additionalProperties: false,
};

function checkNested(v: any): void {
  expect(typeof v.city).toBe('string');
  expect(Array.isArray(v.forecast) && v.forecast.length).toBeTruthy();
  expect(typeof v.forecast[0].day).toBe('number');
  expect(typeof v.forecast[0].sunny).toBe('boolean');
  expect(v.source).toEqual({ name: expect.any(String), kind: 'station' });
}

describe.each(WIRE_FORMATS)('%s client', (client: WireFormat) => {
  let rig: ChatRig;
  let driver: FormatDriver;
  beforeAll(async () => {
    rig = await startFormatsRig();
    driver = driverFor(client, rig);
  });
  afterAll(async () => rig.close());

  describe.each(WIRE_FORMATS)('→ %s upstream', (upstream: WireFormat) => {
    const model = MODEL_OF[upstream];

    it('answers text with the upstream usage, and settles the credit from it', async () => {
      const before = (await ledgerRowsWhen(rig, 0)).length;
      const r = await driver.text(model, 'Hello there');
      expect(r.text).toBe('You said: Hello there');
      expect(r.usage).toEqual({ input: 2, output: 5 });
      const rows = await ledgerRowsWhen(rig, before + 1);
      const row = rows[rows.length - 1];
      expect(row).toMatchObject({ model, status: 200, input_units: 2, output_units: 5 });
      expect(Number(row.cost_micros)).toBeGreaterThan(0);
    });

    it('streams the same answer and its usage', async () => {
      const r = await driver.stream(model, 'Hello there');
      expect(r.text).toBe('You said: Hello there');
      expect(r.usage).toEqual({ input: 2, output: 5 });
      expect(r.events).toBeGreaterThan(1);
    });

    it.each([false, true])('makes a forced tool call whose arguments fit the schema (stream: %s)', async (stream) => {
      const call = await driver.tool(model, 'Rainy Lisbon', WEATHER, stream);
      expect(call.name).toBe('get_weather');
      expect(call.args).toEqual({ city: 'Rainy Lisbon', days: 2 });
    });

    it.each([false, true])('answers JSON valid against a nested schema (stream: %s)', async (stream) => {
      checkNested(await driver.json(model, 'Forecast for Porto', NESTED, stream));
    });
  });
});
