import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from '@playwright/test';
import { launchChromium } from './helpers/browser.js';
import { startAdminGateway, type AdminGateway } from './helpers/admin.js';
import { createTask, waitForTask } from './helpers/video.js';

// The console's answers and its fixed bugs, each seen in Debian's chromium: a task page never shows
// another task's data; a 3,000-character model name does not widen a page; Copy off a secure
// context; a refused edit is not kept; the credit rule as the page shows it; a phone's 390 px;
// an ended session back through login to the same page; the spend chart of a key over a range.

const DAY = 86_400_000;

describe('the console answers, in a browser', () => {
  let gw: AdminGateway;
  let browser: Browser;
  const problems: string[] = [];
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    gw = await startAdminGateway();
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await gw?.close();
  });

  /** A fresh browser context (its own cookies), logged in, at `hash`. */
  async function open(hash: string, viewport = { width: 1280, height: 800 }, init?: () => void): Promise<Page> {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    if (init) await context.addInitScript(init);
    const page = await context.newPage();
    page.on('console', (m) => m.type() === 'error' && !/401|403|400|Failed to load resource/.test(m.text()) && problems.push(m.text()));
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${gw.url}/console#/${hash}`);
    await page.fill('#token', gw.token);
    await page.click('#login');
    await page.waitForSelector('header nav');
    return page;
  }
  const widest = (page: Page) => page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);

  it('never shows one task under another task id, however the answers arrive', async () => {
    const owner = await gw.createKey({ name: 'race-owner' });
    const [a, b] = await Promise.all(['a lighthouse at dusk', 'a fox in snow'].map((prompt) => createTask(gw.url, owner.key, { model: 'sim-video', prompt })));
    const idA: string = a.body.data.task_id;
    const idB: string = b.body.data.task_id;
    await Promise.all([idA, idB].map((id) => waitForTask(gw.url, owner.key, id, (r) => r.status === 'SUCCESS')));
    const page = await open(`tasks/${idA}`);
    await page.waitForSelector(`dl.facts[data-task="${idA}"]`);

    // B's answer is slow: while it is on its way the page shows no task, never A's under B's id.
    let releaseB!: () => void;
    const bHeld = new Promise<void>((r) => (releaseB = r));
    await page.route(`**/admin/api/tasks/${idB}`, async (route) => {
      await bHeld;
      await route.continue();
    });
    await page.evaluate((id) => ((globalThis as any).location.hash = `#/tasks/${id}`), idB);
    await page.waitForSelector(`h1 code:text("${idB}")`);
    await page.waitForTimeout(300);
    expect(await page.locator('dl.facts').count()).toBe(0);
    releaseB();
    await page.waitForSelector(`dl.facts[data-task="${idB}"]`);
    await page.unroute(`**/admin/api/tasks/${idB}`);

    // A's answer is slow and B's fast: A's late answer does not replace B's.
    let releaseA!: () => void;
    const aHeld = new Promise<void>((r) => (releaseA = r));
    let aAnswered!: () => void;
    const aDone = new Promise<void>((r) => (aAnswered = r));
    await page.route(`**/admin/api/tasks/${idA}`, async (route) => {
      await aHeld;
      await route.continue();
      aAnswered();
    });
    await page.evaluate((id) => ((globalThis as any).location.hash = `#/tasks/${id}`), idA);
    await page.waitForSelector(`h1 code:text("${idA}")`);
    await page.evaluate((id) => ((globalThis as any).location.hash = `#/tasks/${id}`), idB);
    await page.waitForSelector(`dl.facts[data-task="${idB}"]`);
    releaseA();
    await aDone;
    await page.waitForTimeout(300);
    expect(await page.getAttribute('dl.facts', 'data-task')).toBe(idB);
    expect(await page.textContent('h1 code')).toBe(idB);
    expect(problems).toEqual([]);
  }, 60_000);

  it('keeps a page as wide as the window when a client planted a 3,000-character model name', async () => {
    const planter = await gw.createKey({ name: 'planter' });
    const long = `m${'x'.repeat(2999)}`;
    const refused = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${planter.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: long, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    // A row with the whole name too, as a store without the ledger's cut would keep it.
    await gw.services.usage.insertMany([{ key_id: planter.id, model: long, channel: '', endpoint: 'chat', status: 404, input_units: 0, output_units: 0, cost_micros: 0, latency_ms: 1, created_at: Date.now() - 1000 }]);
    await gw.services.ledger.flush();
    const page = await open('usage');
    await page.waitForSelector(`#usage tbody tr[data-key="${planter.id}"]`);
    // The cell is cut; its title holds the whole name.
    const titles = await page.$$eval(`#usage tbody tr[data-key="${planter.id}"] .clip`, (els) => els.map((e) => (e as any).title as string));
    expect(titles).toContain(long);
    // The refused request's row says why, as its client was told.
    const told = ((await refused.json()) as { error: { message: string } }).error.message;
    // (kept up to 256 characters: this one quotes the whole name)
    expect(await page.$$eval(`#usage tbody tr[data-key="${planter.id}"] td.usage-error .clip`, (els) => els.map((e) => (e as any).title))).toEqual([told.slice(0, 256)]);
    expect(await widest(page)).toBeLessThanOrEqual(1280);
    for (const [hash, selector] of [
      ['overview', '#spend-by-model tbody tr'],
      ['spend', '#spend-legend'],
    ] as const) {
      await page.evaluate((h) => ((globalThis as any).location.hash = `#/${h}`), hash);
      await page.waitForSelector(selector);
      expect(await widest(page), hash).toBeLessThanOrEqual(1280);
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it('copies a new key on plain http by selecting it, and says to press Ctrl+C when the browser will not copy', async () => {
    // As on http://gateway.lan: no secure context, so no clipboard API; and a browser that refuses execCommand.
    const page = await open('keys', undefined, () => {
      Object.defineProperty(globalThis, 'isSecureContext', { get: () => false });
      Object.defineProperty((globalThis as any).Navigator.prototype, 'clipboard', { get: () => undefined });
      (globalThis as any).Document.prototype.execCommand = () => false;
    });
    await page.fill('#create-key input[name=name]', 'copy-on-http');
    await page.click('#create-key button[type=submit]');
    const key = (await page.textContent('#new-key-value'))!.trim();
    await page.click('#new-key button.copy');
    await page.waitForSelector('#new-key .copy-hint');
    expect(await page.isVisible('#new-key .copy-hint')).toBe(true);
    expect(await page.textContent('#new-key .copy-hint')).toContain('Ctrl+C');
    expect(await page.evaluate(() => String((globalThis as any).getSelection()))).toBe(key);
    expect(problems).toEqual([]);
  }, 60_000);

  it('reopens a refused edit with the stored values, and shows the credit rule when a sign is missing', async () => {
    const made = await gw.api('POST', '/admin/api/keys', { name: 'edit-me', rpm: 30, credit_usd: '2' });
    const page = await open('keys');
    await page.fill('#key-search', 'edit-me');
    const row = `tr[data-key="${made.body.id}"]`;
    await page.waitForSelector(row);
    await page.click(`${row} button.edit`);
    await page.fill(`${row} input[name=rpm]`, '-5');
    await page.click(`${row} form button[type=submit]`);
    await page.waitForSelector(`${row} .error`);
    // The field's own message: what it allows and what was typed, not a schema's generic words.
    expect(await page.textContent(`${row} .error`)).toContain('rpm must be a whole number from 0 (no limit) to 1000000000 (got "-5")');
    await page.fill(`${row} input[name=rpm]`, 'abc');
    await page.click(`${row} form button[type=submit]`);
    await page.waitForSelector(`${row} .error >> text=(got "abc")`);
    await page.fill(`${row} input[name=rpm]`, '30');
    await page.fill(`${row} input[name=concurrency]`, '2.5');
    await page.click(`${row} form button[type=submit]`);
    await page.waitForSelector(`${row} .error >> text=concurrency must be a whole number from 0 (no limit) to 1000000000 (got "2.5")`);
    await page.click(`${row} button.edit`);
    await page.click(`${row} button.edit`);
    expect(await page.inputValue(`${row} input[name=rpm]`)).toBe('30');
    expect(await page.locator(`${row} .error`).count()).toBe(0);

    await page.click(`${row} button.topup`);
    await page.fill(`${row} input[name=usd]`, '10');
    await page.click(`${row} form button[type=submit]`);
    await page.waitForSelector(`${row} .error`);
    expect(await page.textContent(`${row} .error`)).toBe('usd must be a string: "+" to add or "-" to take away, then an amount of USD up to 1000000000 with at most 6 decimals (e.g. "+10", "-2.5")');
    await page.click(`${row} button.topup`);
    await page.click(`${row} button.topup`);
    expect(await page.inputValue(`${row} input[name=usd]`)).toBe('+10');
    expect((await gw.api('GET', `/admin/api/keys/${made.body.id}`)).body).toMatchObject({ rpm: 30, credit_usd: '2.000000' });

    // The search takes _ literally.
    await gw.api('POST', '/admin/api/keys', { name: 'edit_me' });
    await page.fill('#key-search', 'edit_');
    await page.waitForSelector('tr[data-name="edit_me"]');
    await page.waitForTimeout(300);
    expect(await page.locator('#keys tbody tr').count()).toBe(1);
    expect(problems).toEqual([]);
  }, 60_000);

  it('fits a 390 px phone: every page as wide as the screen, tables scroll in their box, every nav link reachable', async () => {
    const owner = await gw.createKey({ name: 'phone-owner' });
    const made = await createTask(gw.url, owner.key, { model: 'sim-video', prompt: 'a boat on a lake' });
    const taskId: string = made.body.data.task_id;
    await waitForTask(gw.url, owner.key, taskId, (r) => r.status === 'SUCCESS');
    const page = await open('overview', { width: 390, height: 844 });
    for (const [hash, selector] of [
      ['overview', '#chart-requests canvas'],
      ['keys', '#keys tbody tr'],
      ['spend', '#spend-chart'],
      ['usage', '#usage'],
      ['tasks', '#tasks tbody tr'],
      [`tasks/${taskId}`, 'dl.facts'],
      ['channels', '#channels tbody tr'],
      ['config', '#config'],
      ['audit', '#audit'],
    ] as const) {
      await page.evaluate((h) => ((globalThis as any).location.hash = `#/${h}`), hash);
      await page.waitForSelector(selector);
      expect(await widest(page), hash).toBeLessThanOrEqual(390);
      const tables = await page.$$eval('table', (ts) => ts.map((t) => (t as any).getBoundingClientRect().right as number));
      for (const right of tables) expect(right, hash).toBeLessThanOrEqual(390);
    }
    const links = await page.$$eval('header nav a', (as) => as.map((a) => ({ r: (a as any).getBoundingClientRect(), text: (a as any).textContent })));
    expect(links.length).toBeGreaterThanOrEqual(8);
    for (const { r, text } of links) {
      expect(r.left, text).toBeGreaterThanOrEqual(0);
      expect(r.right, text).toBeLessThanOrEqual(390);
      expect(r.height, text).toBeGreaterThan(0);
    }
    await page.click('header nav a[href="#/usage"]');
    await page.waitForSelector('#usage-filter');
    expect(problems).toEqual([]);
  }, 90_000);

  it('returns to the login page when the session ends, then back to the page the operator was on', async () => {
    const page = await open('keys');
    await page.waitForSelector('#keys');
    await page.context().clearCookies();
    await page.click('header nav a[href="#/usage"]');
    await page.waitForSelector('#token');
    expect(await page.textContent('#session-ended')).toContain('session has ended');
    await page.fill('#token', gw.token);
    await page.click('#login');
    await page.waitForSelector('#usage-filter');
    expect(new URL(page.url()).hash).toBe('#/usage');
    expect(problems).toEqual([]);
  }, 60_000);

  it('draws the spend of one key over a custom range, stacked by model, and refreshes itself', async () => {
    const spender = await gw.createKey({ name: 'spender' });
    const day0 = Math.floor((Date.now() - 20 * DAY) / DAY) * DAY;
    const row = (model: string, cost_micros: number, created_at: number) => ({ key_id: spender.id, model, channel: 'simulator', endpoint: 'chat', status: 200, input_units: 1, output_units: 1, cost_micros, latency_ms: 10, created_at });
    await gw.services.usage.insertMany([
      row('sim-chat', 1_250_000, day0 + 3_600_000),
      row('sim-image', 2_000_000, day0 + DAY + 3_600_000),
      row('sim-chat', 500_000, day0 + 2 * DAY + 3_600_000),
      // Outside the range asked for.
      row('sim-chat', 7_000_000, day0 + 5 * DAY),
    ]);
    const page = await open('spend');
    const local = (ms: number) => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await page.fill('#spend-filter input[name=key]', spender.id);
    await page.fill('#spend-filter input[name=from]', local(day0));
    await page.fill('#spend-filter input[name=to]', local(day0 + 3 * DAY));
    await page.selectOption('#spend-filter select[name=bucket]', 'hour');
    await page.click('#spend-filter button[type=submit]');
    await expect.poll(() => page.getAttribute('#spend-chart', 'data-total'), { timeout: 10_000 }).toBe('3.750000');
    expect(await page.locator('#spend-chart rect').count()).toBe(3);
    expect(await page.textContent('#spend-legend tr[data-name="sim-chat"]')).toContain('1.750000');
    expect(await page.textContent('#spend-legend tr[data-name="sim-image"]')).toContain('2.000000');

    // Auto-refresh on a short clock: a new row in the range shows up without a click.
    await page.clock.install();
    await page.check('#auto-refresh');
    await gw.services.usage.insertMany([row('sim-chat', 250_000, day0 + 2 * DAY + 7_200_000)]);
    await page.clock.runFor(31_000);
    await expect.poll(() => page.getAttribute('#spend-chart', 'data-total'), { timeout: 10_000 }).toBe('4.000000');
    expect(problems).toEqual([]);
  }, 60_000);
});
