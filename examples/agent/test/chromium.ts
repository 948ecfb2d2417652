import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';

/** Debian's Chromium (`pnpm services` installs it): Playwright's own browser download is not used. */
const CHROMIUM = '/usr/bin/chromium';
const INSTALL = fileURLToPath(new URL('../../../scripts/services/chromium.sh', import.meta.url));

/** A headless Chromium with a fresh profile, installed first if it is missing; `close` ends it. */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  if (!existsSync(CHROMIUM)) execFileSync('bash', [INSTALL], { stdio: 'inherit' });
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing after ${INSTALL}`);
  const profile = mkdtempSync(join(tmpdir(), 'stepfold-agent-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
