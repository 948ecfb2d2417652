/**
 * The stepfold worker: a long-running Node process with a `processDue` poller and an HTTP API,
 * over the PostgreSQL store. Configuration from the environment:
 *
 *   STEPFOLD_PG_URL          postgres://stepfold:stepfold@127.0.0.1:5432/stepfold
 *   STEPFOLD_SCHEMA          schema of the store and the call log (default stepfold_worker)
 *   PORT                     HTTP port on 127.0.0.1 (default 3000; 0 picks a free one)
 *   HOST                     default 127.0.0.1
 *   POLL_INTERVAL_MS         pause between poller rounds that found little to do (default 500)
 *   CONCURRENCY              instances ticked at once per round (default 8)
 *   SHUTDOWN_GRACE_MS        longest wait for in-flight handlers on SIGTERM/SIGINT (default 30000)
 *   CLAIM_MS                 how long a poller round holds the due ids it took (default 2000)
 *
 * Logs are JSON lines on stdout; the first is `{"event":"listening","port":…,"pid":…}`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { createRunner, type Snapshot } from '@stepfold/engine';
import { createPostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { createApi } from './api.js';
import { createCallLog } from './call-log.js';
import { createPoller } from './poller.js';
import { createHandlers, workflows } from './workflows.js';

const env = process.env;
const int = (name: string, fallback: number) => {
  const v = env[name] === undefined || env[name] === '' ? fallback : Number(env[name]);
  if (!Number.isInteger(v) || v < 0) throw new Error(`${name} must be a non-negative integer`);
  return v;
};
const config = {
  pgUrl: env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold',
  schema: env.STEPFOLD_SCHEMA ?? 'stepfold_worker',
  host: env.HOST ?? '127.0.0.1',
  port: int('PORT', 3000),
  pollIntervalMs: int('POLL_INTERVAL_MS', 500),
  concurrency: Math.max(1, int('CONCURRENCY', 8)),
  graceMs: int('SHUTDOWN_GRACE_MS', 30_000),
  claimMs: int('CLAIM_MS', 2_000),
};
if (!/^[a-z_][a-z0-9_]{0,62}$/.test(config.schema))
  throw new Error('STEPFOLD_SCHEMA must be a plain identifier');

const log = (event: string, fields: Record<string, unknown> = {}) =>
  console.log(JSON.stringify({ event, at: new Date().toISOString(), ...fields }));
const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

const pool = new pg.Pool({ connectionString: config.pgUrl, max: config.concurrency + 4 });
pool.on('error', (e) => log('pool.error', { error: errorText(e) }));
// listDue claims the ids it returns for claimMs, so workers polling one table take disjoint batches.
// A tick saves (clearing the claim) within milliseconds, so a short lease is enough; the ids a
// SIGKILLed worker had claimed go to the other workers once CLAIM_MS has passed.
const store = createPostgresStore({ pool, schema: config.schema, claimMs: config.claimMs });
const callLog = createCallLog(pool, config.schema);
await store.setup();
await callLog.setup();

/**
 * Each successful write is reported to the request (if any) whose async context it happens in:
 * that is how an HTTP request learns that its event was written, without waiting for the handlers
 * the write dispatched.
 */
const writes = new AsyncLocalStorage<(s: Snapshot) => void>();

const runner = createRunner({
  store,
  onWritten: (s) => writes.getStore()?.(s),
  workflows,
  handlers: createHandlers(callLog),
  hooks: {
    onWorkflowCompleted: (s) => log('workflow.completed', { id: s.id, version: s.version }),
    onWorkflowFailed: (s) => log(`workflow.${s.status}`, { id: s.id, error: s.error }),
    onStepFailed: (step, s) => log('step.failed', { id: s.id, step, error: s.steps[step]?.error }),
    onHookError: (e, hook) => log('hook.error', { hook, error: errorText(e) }),
  },
});

/** Runner calls started by HTTP requests that are still running their handlers. */
const background = new Set<Promise<unknown>>();

function accepted(call: () => Promise<Snapshot>): Promise<{ snapshot: Snapshot; written: boolean }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const first = (snapshot: Snapshot, written: boolean) => {
      if (answered) return;
      answered = true;
      resolve({ snapshot, written });
    };
    const p = writes.run((s) => first(s, true), call);
    background.add(p);
    p.then(
      (s) => first(s, false),
      (e) => {
        if (!answered) reject(e);
        else log('background.error', { error: errorText(e) });
      },
    ).finally(() => background.delete(p));
  });
}

const poller = createPoller({
  runner,
  concurrency: config.concurrency,
  intervalMs: config.pollIntervalMs,
  onError: (e) => log('poller.error', { error: errorText(e) }),
});

const app = createApi({ runner, store, workflows, accepted });
const server = await new Promise<Server>((resolve) => {
  const s = serve({ fetch: app.fetch, hostname: config.host, port: config.port }, () => resolve(s as Server));
});
poller.start();
const address = server.address();
log('listening', {
  port: typeof address === 'object' && address ? address.port : config.port,
  pid: process.pid,
  concurrency: config.concurrency,
  pollIntervalMs: config.pollIntervalMs,
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  const grace = setTimeout(() => {
    log('shutdown.timeout', { graceMs: config.graceMs, background: background.size });
    process.exit(1);
  }, config.graceMs);
  grace.unref();
  log('shutdown.begin', { signal, background: background.size });
  // No new requests; idle keep-alive connections go now, busy ones after their response.
  const closed = new Promise<void>((r) => server.close(() => r()));
  server.closeIdleConnections();
  await poller.stop();
  log('shutdown.poller-stopped');
  // Handlers started by requests and by the poller, and whatever their results dispatched.
  while (background.size) await Promise.allSettled([...background]);
  await runner.idle();
  await closed;
  await pool.end();
  log('shutdown.done');
  clearTimeout(grace);
  process.exit(0);
}
process.once('SIGTERM', () => void shutdown('SIGTERM'));
process.once('SIGINT', () => void shutdown('SIGINT'));
