/**
 * The stepfold worker: a long-running Node process with an HTTP API and a `createWorker` that runs
 * the handlers, over the PostgreSQL store. Configuration from the environment:
 *
 *   STEPFOLD_PG_URL          postgres://stepfold:stepfold@127.0.0.1:5432/stepfold
 *   STEPFOLD_SCHEMA          schema of the store and the call log (default stepfold_worker)
 *   PORT                     HTTP port on 127.0.0.1 (default 3000; 0 picks a free one)
 *   HOST                     default 127.0.0.1
 *   POLL_MAX_MS              longest pause between polls without a wake subscription (default 5000)
 *   CONCURRENCY              handler runs at once (default 8)
 *   SHUTDOWN_GRACE_MS        time in-flight handlers get on SIGTERM/SIGINT (default 30000)
 *   CLAIM_MS                 how long a poll holds the due ids it took (default 2000)
 *
 * Logs are JSON lines on stdout; the first is `{"event":"listening","port":…,"pid":…}`.
 */
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { createRunner, createWorker, defineHooks } from '@stepfold/engine';
import { serveWorker } from '@stepfold/node';
import { createPostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { createApi } from './api.js';
import { createCallLog } from './call-log.js';
import { createHandlers, workflows } from './workflows.js';

const env = process.env;
const int = (name: string, fallback: number) => {
  const v = env[name] === undefined || env[name] === '' ? fallback : Number(env[name]);
  if (!Number.isInteger(v) || v < 0) throw new Error(`${name} must be a non-negative integer`);
  return v;
};
const config = {
  pgUrl: env['STEPFOLD_PG_URL'] ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold',
  schema: env['STEPFOLD_SCHEMA'] ?? 'stepfold_worker',
  host: env['HOST'] ?? '127.0.0.1',
  port: int('PORT', 3000),
  pollMaxMs: Math.max(1, int('POLL_MAX_MS', 5_000)),
  concurrency: Math.max(1, int('CONCURRENCY', 8)),
  graceMs: int('SHUTDOWN_GRACE_MS', 30_000),
  claimMs: int('CLAIM_MS', 2_000),
};
if (!/^[a-z_][a-z0-9_]{0,62}$/.test(config.schema))
  throw new Error('STEPFOLD_SCHEMA must be a plain identifier');

const log = (event: string, fields: Record<string, unknown> = {}) =>
  console.log(JSON.stringify({ event, at: new Date().toISOString(), ...fields }));
const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

// Handlers, the API, and one connection held for LISTEN (wake notices).
const pool = new pg.Pool({ connectionString: config.pgUrl, max: config.concurrency + 5 });
pool.on('error', (e) => log('pool.error', { error: errorText(e) }));
// listDue claims the ids it returns for claimMs, so workers polling one table take disjoint batches.
// A tick saves (clearing the claim) within milliseconds, so a short lease is enough; the ids a
// SIGKILLed worker had claimed go to the other workers once CLAIM_MS has passed.
const store = createPostgresStore({ pool, schema: config.schema, claimMs: config.claimMs });
const callLog = createCallLog(pool, config.schema);
await store.setup();
await callLog.setup();

const runner = createRunner({
  store,
  workflows,
  handlers: createHandlers(callLog),
  hooks: defineHooks({
    onWorkflowCompleted: (s) => log('workflow.completed', { id: s.id, version: s.version }),
    onWorkflowFailed: (s) => log(`workflow.${s.status}`, { id: s.id, error: s.error }),
    onStepFailed: (step, s) => log('step.failed', { id: s.id, step, error: s.steps[step]?.error }),
    onHookError: (e, hook) => log('hook.error', { hook, error: errorText(e) }),
  }),
});

// Every handler — of API writes and of due instances — runs through the worker's bounded pool.
const worker = createWorker({
  runner,
  concurrency: config.concurrency,
  poll: { maxMs: config.pollMaxMs },
  shutdown: { graceMs: config.graceMs },
  on: {
    error: (e, where) => log('worker.error', { where, error: errorText(e) }),
    wakeLost: (e) => log('worker.wake-lost', { error: errorText(e) }),
    wakeRestored: () => log('worker.wake-restored'),
    skipped: (id, e) => log('worker.skipped', { id, error: errorText(e) }),
  },
});

const app = createApi({ runner, store, workflows });
const server = await new Promise<Server>((resolve) => {
  const s = serve({ fetch: app.fetch, hostname: config.host, port: config.port }, () => resolve(s as Server));
});

await serveWorker(worker, {
  // SIGTERM/SIGINT: no new requests, the worker drains (grace, then aborts), the pool closes.
  async onStopped() {
    log('shutdown.worker-stopped', { running: worker.stats.running });
    await new Promise<void>((r) => server.close(() => r()));
    await pool.end();
    log('shutdown.done');
  },
});
process.once('SIGTERM', () => {
  log('shutdown.begin', { signal: 'SIGTERM', running: worker.stats.running });
  server.close();
  server.closeIdleConnections();
});
process.once('SIGINT', () => {
  log('shutdown.begin', { signal: 'SIGINT', running: worker.stats.running });
  server.close();
  server.closeIdleConnections();
});
const address = server.address();
log('listening', {
  port: typeof address === 'object' && address ? address.port : config.port,
  pid: process.pid,
  concurrency: config.concurrency,
});
