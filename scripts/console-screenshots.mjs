// Screenshots of the console for docs/console.md, at 1440 px and 390 px (a phone), taken with
// Debian's chromium against a gateway on the embedded simulator with a little traffic: a few keys
// calling chat and image models, a refused request, video tasks, and a week of earlier ledger rows
// so the spend chart has a history.
//
//   npm run build   # or any build of the console into dist/console-web
//   node --import ./test/helpers/ts-hooks.mjs scripts/console-screenshots.mjs
//
// Writes docs/console/<page>-1440.png and <page>-390.png.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from '@playwright/test';
import { startAdminGateway } from '../test/helpers/admin.ts';
import { createTask, waitForTask } from '../test/helpers/video.ts';

const out = fileURLToPath(new URL('../docs/console/', import.meta.url));
const HOUR = 3_600_000;

const gw = await startAdminGateway({}, {}, { env: { MEDIAGATE_SECRET_KEY: randomBytes(32).toString('base64') } });
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
try {
  await gw.api('POST', '/admin/api/projects', { name: 'mobile-apps', budget_usd: '100', budget_period: 'month' });
  const apps = [];
  for (const [name, credit] of [['storefront', '50'], ['support-bot', '20'], ['video-studio', null]]) {
    const made = await gw.api('POST', '/admin/api/keys', { name, ...(credit ? { credit_usd: credit } : {}) });
    apps.push({ id: made.body.id, key: made.body.key, name });
  }
  const call = (key, path, body) =>
    globalThis.fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  for (let i = 0; i < 6; i++) await call(apps[i % 2].key, '/v1/chat/completions', { model: 'sim-chat', messages: [{ role: 'user', content: `question ${i}` }] });
  await call(apps[0].key, '/v1/images/generations', { model: 'sim-image', prompt: 'a product photo of a teapot' });
  await call(apps[1].key, '/v1/chat/completions', { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] });
  const tasks = await Promise.all(['a corgi on grass', 'waves at sunset'].map((prompt) => createTask(gw.url, apps[2].key, { model: 'sim-video', prompt, duration: 5, resolution: '720p' })));
  const taskId = tasks[0].body.data.task_id;
  for (const t of tasks) await waitForTask(gw.url, apps[2].key, t.body.data.task_id, (r) => r.status === 'SUCCESS');
  // A week of history, a few rows an hour, so Spend has something to stack.
  const now = Date.now();
  const rows = [];
  for (let h = 7 * 24; h > 1; h -= 3) {
    const at = now - h * HOUR;
    rows.push({ key_id: apps[0].id, model: 'sim-chat', channel: 'simulator', endpoint: 'chat', status: 200, input_units: 900, output_units: 300, cost_micros: 40_000 + ((h * 7919) % 60_000), latency_ms: 180, created_at: at });
    if (h % 2) rows.push({ key_id: apps[1].id, model: 'sim-chat', channel: 'simulator', endpoint: 'chat', status: 200, input_units: 400, output_units: 200, cost_micros: 20_000 + ((h * 104729) % 30_000), latency_ms: 150, created_at: at + 60_000 });
    if (h % 12 === 0) rows.push({ key_id: apps[2].id, model: 'sim-video', channel: 'simulator', endpoint: 'video.settle', status: 200, input_units: 0, output_units: 5, cost_micros: 250_000, latency_ms: 40_000, created_at: at + 120_000 });
  }
  await gw.services.usage.insertMany(rows);
  await gw.services.ledger.flush();

  // A second channel with a provider balance: an openai channel in front of the simulator's DeepSeek read.
  await gw.api('POST', '/admin/api/channels', { name: 'deepseek', type: 'openai', base_url: `${gw.services.simulator.url}/v1`, api_key: `sk-${randomBytes(16).toString('hex')}`, settings: { balance: 'deepseek' }, models: ['sim-chat'], priority: 10, test_interval_s: 600 });

  const pages = [
    ['overview', 'overview', '#chart-requests canvas'],
    ['keys', 'keys', '#keys tbody tr'],
    ['projects', 'projects', '#projects tbody tr'],
    ['spend', 'spend', '#spend-chart'],
    ['usage', 'usage', '#usage tbody tr'],
    ['tasks', 'tasks', '#tasks tbody tr'],
    ['task', `tasks/${taskId}`, '#video'],
    ['channels', 'channels', '#channels td.balance .amount'],
  ];
  for (const width of [1440, 390]) {
    const context = await browser.newContext({ viewport: { width, height: width === 390 ? 844 : 900 }, deviceScaleFactor: 1 });
    const page = await context.newPage();
    await page.goto(`${gw.url}/console`);
    await page.fill('#token', gw.token);
    await page.click('#login');
    await page.waitForSelector('header nav');
    for (const [name, hash, ready] of pages) {
      await page.evaluate((h) => (globalThis.location.hash = `#/${h}`), hash);
      await page.waitForSelector(ready);
      await page.waitForTimeout(300);
      // The ledger's rows make a large PNG: its shot stops after the first rows.
      const clip = name === 'usage' && width > 390 ? { x: 0, y: 0, width, height: 560 } : undefined;
      await page.screenshot({ path: join(out, `${name}-${width}.png`), clip });
    }
    await context.close();
  }
  console.log(`screenshots written to ${out}`);
} finally {
  await browser.close();
  await gw.close();
}
