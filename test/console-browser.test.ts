import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Browser, Page } from '@playwright/test';
import { launchChromium, SHOTS } from './helpers/browser.js';
import { startAdminGateway, type AdminGateway } from './helpers/admin.js';
import { createTask, waitForTask } from './helpers/video.js';

// The operator console in Debian's chromium (headless), against a gateway on port 0: log in, make
// a key and use it with the OpenAI SDK, find the request in Usage and on the Overview, top up and
// revoke, play a finished video, test a channel, log out; the CSRF and key checks seen from the
// page. Screenshots of each page go to test-results/console/.


describe('the console in a browser', () => {
  let gw: AdminGateway;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    gw = await startAdminGateway();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1200, height: 760 } });
    // A CSP violation or a script error would show up here.
    page.on('console', (m) => m.type() === 'error' && !/401|403|Failed to load resource/.test(m.text()) && problems.push(m.text()));
    page.on('pageerror', (e) => problems.push(e.message));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  const go = async (hash: string) => {
    await page.goto(`${gw.url}/console#/${hash}`);
    await page.waitForSelector('header nav');
  };
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`) });

  it('runs the operator scenario end to end', async () => {
    // Log in.
    await page.goto(`${gw.url}/console`);
    await page.fill('#token', gw.token);
    await page.click('#login');
    await page.waitForSelector('header nav');
    const cookies = await page.context().cookies();
    expect(cookies.find((c) => c.name === 'mediagate_admin')).toMatchObject({ httpOnly: true, sameSite: 'Strict' });

    // Create a key: shown once, with a copy button; it works with the OpenAI SDK.
    await go('keys');
    await page.fill('#create-key input[name=name]', 'browser-app');
    await page.fill('#create-key input[name=credit]', '5');
    await page.click('#create-key button[type=submit]');
    const key = (await page.textContent('#new-key-value'))!.trim();
    expect(key).toMatch(/^mg-[0-9A-Za-z]{48}$/);
    expect(await page.isVisible('#new-key button.copy')).toBe(true);
    await shot('keys');
    const keyId = await page.getAttribute('tr[data-name="browser-app"]', 'data-key');
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key });
    const answer = await client.chat.completions.create({ model: 'sim-chat', messages: [{ role: 'user', content: 'hello from the console test' }] });
    expect(answer.choices[0].message.content).toBeTruthy();
    await gw.services.ledger.flush();

    // The request in Usage and on the Overview chart.
    await go('usage');
    await page.fill('#usage-filter input[name=key]', keyId!);
    await page.click('#usage-filter button[type=submit]');
    await page.waitForSelector(`#usage tbody tr[data-key="${keyId}"]`);
    expect(await page.textContent(`#usage tbody tr[data-key="${keyId}"]`)).toContain('sim-chat');
    await shot('usage');
    await go('overview');
    await page.waitForSelector('#chart-requests canvas');
    expect(Number(await page.textContent('#total-requests'))).toBeGreaterThanOrEqual(1);
    expect(Number(await page.getAttribute('#chart-requests', 'data-total'))).toBeGreaterThan(0);
    await shot('overview');

    // Top up, then revoke: the key stops working.
    await go('keys');
    const row = 'tr[data-name="browser-app"]';
    const balance = async () => parseFloat((await page.textContent(`${row} td.credit`))!.replace('$', ''));
    const before = await balance();
    await page.click(`${row} button.topup`);
    await page.fill(`${row} input[name=usd]`, '+10');
    await page.click(`${row} form button[type=submit]`);
    await expect.poll(balance, { timeout: 15_000 }).toBeGreaterThan(before + 9.99);
    await page.click(`${row} button.revoke`);
    await page.click(`${row} button.confirm-revoke`);
    await page.waitForSelector(`${row} td.status-revoked`);
    await expect(client.models.list()).rejects.toMatchObject({ status: 401 });

    // A finished video task plays inline.
    const other = await gw.createKey({ name: 'video-app' });
    const created = await createTask(gw.url, other.key, { model: 'sim-video', prompt: 'a corgi on grass' });
    const taskId = created.body.data.task_id;
    await waitForTask(gw.url, other.key, taskId, (r) => r.status === 'SUCCESS');
    await go('tasks');
    await page.waitForSelector(`#tasks tr[data-task="${taskId}"]`);
    await shot('tasks');
    await page.click(`#tasks tr[data-task="${taskId}"] a`);
    await page.waitForSelector('#video');
    expect(await page.textContent('#timeline')).toContain('SUCCESS');
    const played = await page.evaluate(async () => {
      const v = (globalThis as any).document.querySelector('video');
      await v.play();
      const start = v.currentTime;
      await new Promise((r) => setTimeout(r, 1500));
      return { start, now: v.currentTime, error: v.error?.code ?? null };
    });
    expect(played.error).toBeNull();
    expect(played.now).toBeGreaterThan(played.start);
    await shot('task');

    // A channel test.
    await go('channels');
    await page.click('tr[data-channel="simulator"] button.test');
    await page.waitForSelector('tr[data-channel="simulator"] .test-result.ok');
    await shot('channels');
    await go('config');
    await page.waitForSelector('#config');
    expect(await page.textContent('#config')).not.toContain('simulator-key');
    await shot('config');
    await go('audit');
    await page.waitForSelector('#audit tbody tr');
    expect(await page.textContent('#audit')).toContain('key.revoke');
    await shot('audit');

    // From the page: a state change without the CSRF token is refused; an application key is refused.
    const refused = await page.evaluate(async (appKey) => {
      const noCsrf = await fetch('/admin/api/keys', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'forged' }) });
      const withKey = await fetch('/admin/api/keys', { headers: { authorization: `Bearer ${appKey}` } });
      return [noCsrf.status, withKey.status];
    }, other.key);
    expect(refused).toEqual([403, 401]);

    // Log out: the session is gone.
    await page.click('#logout');
    await page.waitForSelector('#token');
    await shot('login');
    expect(await page.evaluate(async () => (await fetch('/admin/api/keys')).status)).toBe(401);
    expect(problems).toEqual([]);
  }, 120_000);

  it('shows a key name stored with control characters escaped: never reversed, never split', async () => {
    // Stored straight through the repository, as names were before the gateway refused such characters.
    const { id } = await gw.createKey({ name: 'legacy\u202Eevil\nline' });
    await page.goto(`${gw.url}/console`);
    await page.fill('#token', gw.token);
    await page.click('#login');
    await page.waitForSelector('header nav');
    await go('keys');
    await page.fill('#key-search', 'legacy');
    await page.waitForSelector(`tr[data-key="${id}"]`);
    const cell = (await page.textContent(`tr[data-key="${id}"] td`))!;
    expect(cell).toContain('legacy\\u202eevil\\u000aline');
    expect(cell).not.toMatch(/[\u202e\n]/);
    expect(problems).toEqual([]);
  }, 60_000);
});
