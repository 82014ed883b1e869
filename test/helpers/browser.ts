import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from '@playwright/test';

/** Debian's chromium, which the browser tests drive (Playwright's own download is not used). */
export const CHROMIUM = '/usr/bin/chromium';
/** Where the browser tests put their screenshots. */
export const SHOTS = join(__dirname, '..', '..', 'test-results', 'console');

/** Debian's chromium, headless, with the screenshot folder made. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}
