import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { createPostgresStore, type PostgresStore } from '@stepfold/store-postgres';
import { Hono } from 'hono';
import pg from 'pg';
import type { BrowserContext, Page } from 'playwright-core';
import { createInspector } from '../src/index.js';
import { launchBrowser } from './browser.js';

/** URL of the PostgreSQL test server (`bash scripts/services.sh up pg`). */
export const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';

/** Where the browser tests save screenshots (git-ignored); {@link openInspector} makes it. */
export const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url));

/** A PostgreSQL store in a schema of its own, set up; `drop` closes it and removes the schema. */
export async function schemaStore(
  schema: string,
): Promise<{ pool: pg.Pool; store: PostgresStore; drop(): Promise<void> }> {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
  pool.on('error', () => {});
  const store = createPostgresStore({ pool, schema });
  const drop = async () => {
    await store.close();
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  };
  await store.setup();
  return { pool, store, drop };
}

/** The inspector served on a free port and a Chromium page for it. */
export interface InspectorPage {
  /** The inspector's root URL, `http://127.0.0.1:PORT/ops`. */
  base: string;
  /** The browser's context (for a second page). */
  context: BrowserContext;
  /** A page whose uncaught errors and console errors are pushed to `pageErrors`. */
  page: Page;
  /** Ends the browser (and its profile), then the server. */
  close(): Promise<void>;
}

/**
 * Serves `createInspector(options)` at `/ops` of a Hono app on a free port of 127.0.0.1 and opens
 * a page in a fresh headless Chromium. `pageErrors` collects the page's uncaught errors, and its
 * console errors unless `consoleErrors` is false (a login page's 401 logs one); `bearer` makes
 * every request carry that token (no login page).
 */
export async function openInspector(
  options: Parameters<typeof createInspector>[0],
  pageErrors: string[],
  { bearer, consoleErrors = true }: { bearer?: string; consoleErrors?: boolean } = {},
): Promise<InspectorPage> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const app = new Hono();
  app.route('/ops', createInspector(options));
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ops`;
  const closeServer = () => new Promise((resolve) => server.close(resolve));
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  try {
    browser = await launchBrowser();
  } catch (e) {
    await closeServer();
    throw e;
  }
  if (bearer) await browser.context.setExtraHTTPHeaders({ Authorization: `Bearer ${bearer}` });
  const page = await browser.context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (consoleErrors && m.type() === 'error') pageErrors.push(m.text());
  });
  return {
    base,
    context: browser.context,
    page,
    close: async () => {
      await browser.close();
      await closeServer();
    },
  };
}
