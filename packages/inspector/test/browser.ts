import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium, type Page, type Response } from 'playwright-core';

/** Debian's Chromium: Playwright's own browser download is blocked here, so the tests drive this one. */
export const CHROMIUM = '/usr/bin/chromium';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Installs Chromium when it is missing (scripts/services/chromium.sh, idempotent, the same apt
 * helper as the servers), and fails loudly when it still is not there.
 */
export function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  try {
    execFileSync('bash', [join(ROOT, 'scripts/services/chromium.sh')], { stdio: 'inherit' });
  } catch (e) {
    throw new Error(
      `installing Chromium failed (bash scripts/services/chromium.sh): ${(e as Error).message}`,
    );
  }
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing after scripts/services/chromium.sh; the browser tests cannot run`,
    );
  }
}

/** A headless Chromium with a fresh profile; `close` ends it and removes the profile. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  ensureChromium();
  const profile = mkdtempSync(join(tmpdir(), 'stepfold-inspector-chromium-'));
  // launchPersistentContext is how Playwright takes a user-data-dir of our choosing (a fresh one).
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1360, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Clicks a form's submit button and waits for the response to its POST and for the next page to load. */
export async function submitForm(page: Page, selector: string): Promise<Response> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST'),
    page.click(selector),
  ]);
  await page.waitForLoadState('load');
  return response;
}
