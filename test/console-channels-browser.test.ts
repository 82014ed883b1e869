import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from '@playwright/test';
import { launchChromium, SHOTS } from './helpers/browser.js';
import { startAdminGateway, type AdminGateway } from './helpers/admin.js';

// The console's Channels page in Debian's chromium (headless): add a channel with a credential,
// edit it (the credential input starts empty and keeps what is stored), test it (the health probe),
// disable it and remove it; the config file's channel offers only Test and Enable/Disable. The
// credential never reaches the page.

const CREDENTIAL = `sk-browser-${randomBytes(12).toString('hex')}`;

describe('the console\'s Channels page in a browser', () => {
  let gw: AdminGateway;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    gw = await startAdminGateway({}, {}, { env: { MEDIAGATE_SECRET_KEY: randomBytes(32).toString('base64') } });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    page.on('console', (m) => m.type() === 'error' && !/401|403|Failed to load resource/.test(m.text()) && problems.push(m.text()));
    page.on('pageerror', (e) => problems.push(e.message));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  it('adds, edits, tests, disables and removes a channel', async () => {
    await page.goto(`${gw.url}/console`);
    await page.fill('#token', gw.token);
    await page.click('#login');
    await page.waitForSelector('header nav');
    await page.goto(`${gw.url}/console#/channels`);
    await page.waitForSelector('tr[data-channel="simulator"]');

    // The config file's channel: Test and Enable/Disable only.
    expect(await page.isVisible('tr[data-channel="simulator"] button.edit')).toBe(false);
    expect(await page.isVisible('tr[data-channel="simulator"] button.remove')).toBe(false);

    // Add.
    await page.fill('#add-channel input[name=name]', 'browser-ch');
    await page.fill('#add-channel input[name=type]', 'simulator');
    await page.fill('#add-channel input[name=api_key]', CREDENTIAL);
    await page.fill('#add-channel input[name=models]', 'sim-chat');
    await page.fill('#add-channel input[name=priority]', '5');
    await page.click('#add-channel button[type=submit]');
    const row = 'tr[data-channel="browser-ch"]';
    await page.waitForSelector(`${row}[data-source="api"]`);
    expect(await page.textContent(row)).toContain('key set');
    expect(await page.inputValue('#add-channel input[name=api_key]')).toBe('');

    // A refused add says why.
    await page.fill('#add-channel input[name=name]', 'bad-ch');
    await page.fill('#add-channel input[name=type]', 'simulator');
    await page.fill('#add-channel input[name=models]', 'no-such-model');
    await page.click('#add-channel button[type=submit]');
    await page.waitForSelector('p.error');
    expect(await page.textContent('p.error')).toContain('is not declared under models');

    // Edit: the credential input starts empty; the stored one is kept.
    await page.click(`${row} button.edit`);
    expect(await page.inputValue(`${row} form.edit-channel input[name=api_key]`)).toBe('');
    await page.fill(`${row} form.edit-channel input[name=weight]`, '4');
    await page.click(`${row} form.edit-channel button[type=submit]`);
    await page.waitForSelector(`${row} >> text=weight 4`);
    expect(gw.services.config.channels.find((c) => c.name === 'browser-ch')!.api_key).toBe(CREDENTIAL);

    // Test: the health probe, nothing billable.
    await page.click(`${row} button.test`);
    await page.waitForSelector(`${row} .test-result.ok`);
    expect(await page.textContent(`${row} .test-result`)).toContain('GET /v1/models');
    await page.screenshot({ path: join(SHOTS, 'channels-runtime.png') });

    // Disable, then remove.
    await page.click(`${row} button.toggle`);
    await page.waitForSelector(`${row} td.enabled >> text=disabled`);
    expect(gw.services.catalog.get('sim-chat')!.channels.map((c) => c.name)).not.toContain('browser-ch');
    await page.click(`${row} button.remove`);
    await page.click(`${row} button.confirm-remove`);
    await page.waitForSelector(row, { state: 'detached' });

    expect(await page.content()).not.toContain(CREDENTIAL);
    const actions = (await gw.api('GET', '/admin/api/audit?limit=100')).body.data.map((e: any) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['channel.create', 'channel.update', 'channel.probe', 'channel.disable', 'channel.remove']));
    expect(problems).toEqual([]);
  }, 120_000);

  it('shows a provider balance, sets a channel\'s test interval with field messages, and keeps the header one line at 390 px', async () => {
    await page.goto(`${gw.url}/console#/channels`);
    await page.waitForSelector('tr[data-channel="simulator"]');
    expect(await page.textContent('tr[data-channel="simulator"] td.balance')).toBe('—');
    await page.fill('#add-channel input[name=name]', 'deepseek-ch');
    await page.fill('#add-channel input[name=type]', 'openai');
    await page.fill('#add-channel input[name=base_url]', `${gw.services.simulator!.url}/v1`);
    await page.fill('#add-channel input[name=api_key]', CREDENTIAL);
    await page.fill('#add-channel input[name=models]', 'sim-chat');
    await page.fill('#add-channel input[name=priority]', '90');
    await page.fill('#add-channel input[name=settings]', 'balance=deepseek');
    await page.click('#add-channel button[type=submit]');
    const row = 'tr[data-channel="deepseek-ch"]';
    await page.waitForSelector(`${row} td.balance .amount`);
    const amounts = await page.locator(`${row} td.balance .amount`).allTextContents();
    expect(amounts).toEqual(['110 CNY', '15.5 USD']);
    await page.click(`${row} button.refresh-balance`);
    await page.waitForSelector(`${row} td.balance .amount`);

    await page.click(`${row} button.edit`);
    expect(await page.inputValue(`${row} form.edit-channel input[name=settings]`)).toBe('balance=deepseek');
    await page.fill(`${row} form.edit-channel input[name=test_interval_s]`, 'hourly');
    await page.click(`${row} form.edit-channel button[type=submit]`);
    await page.waitForSelector(`${row} .error`);
    expect(await page.textContent(`${row} .error`)).toMatch(/test_interval_s/);
    await page.fill(`${row} form.edit-channel input[name=test_interval_s]`, '600');
    await page.click(`${row} form.edit-channel button[type=submit]`);
    await page.waitForSelector(`${row} >> text=tested every 600 s`);
    expect(gw.services.config.channels.find((c) => c.name === 'deepseek-ch')!.test_interval_s).toBe(600);

    const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await phone.goto(`${gw.url}/console`);
      await phone.fill('#token', gw.token);
      await phone.click('#login');
      await phone.waitForSelector('header nav');
      await phone.goto(`${gw.url}/console#/channels`);
      await phone.waitForSelector(`${row} td.balance .amount`);
      // One line of headings (about 30 px), not a column of words.
      const header = await phone.locator('#channels thead tr').boundingBox();
      expect(header!.height).toBeLessThan(40);
      const body = await phone.evaluate<number>('document.documentElement.scrollWidth');
      expect(body).toBeLessThanOrEqual(390);
    } finally {
      await phone.close();
    }
    expect(await page.content()).not.toContain(CREDENTIAL);
    expect(problems).toEqual([]);
  }, 120_000);
});
