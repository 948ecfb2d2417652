/**
 * The support agent example: a chat server and a worker over PostgreSQL, in one process or in two
 * (ROLE). Configuration from the environment (the model's: see src/model.ts):
 *
 *   ROLE               all (default), server or worker
 *   STEPFOLD_PG_URL    postgres://stepfold:stepfold@127.0.0.1:5432/stepfold
 *   STEPFOLD_SCHEMA    schema of the store and the refunds table (default stepfold_agent)
 *   PORT, HOST         where the server listens (default 3000 on 127.0.0.1; PORT=0 picks a free port)
 *   INSPECTOR_TOKEN    the inspector's bearer token at /inspector (default: change-this-token)
 *
 * Logs are JSON lines on stdout: the server's first is `{"event":"listening","port":…}`, the
 * worker's `{"event":"working",…}`.
 */
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { composition, createRunner, createWorker } from '@stepfold/engine';
import { serveWorker } from '@stepfold/node';
import { createPostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { modelFromEnv } from './model.js';
import { chatServer } from './server.js';
import { setupRefunds, supportHandlers, workflows } from './support-agent.js';

const env = process.env;
const role = env['ROLE'] || 'all';
if (!['all', 'server', 'worker'].includes(role)) throw new Error('ROLE must be all, server or worker');
const schema = env['STEPFOLD_SCHEMA'] || 'stepfold_agent';
if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error('STEPFOLD_SCHEMA must be a plain identifier');

const log = (event: string, fields: Record<string, unknown> = {}) =>
  console.log(JSON.stringify({ event, at: new Date().toISOString(), role, ...fields }));

const pool = new pg.Pool({
  connectionString: env['STEPFOLD_PG_URL'] || 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold',
  max: 10,
});
pool.on('error', (e) => log('pool.error', { error: e.message }));
const store = createPostgresStore({ pool, schema });
await store.setup();
await setupRefunds(pool, schema);

const closing: Array<() => Promise<void>> = [];
const stopped = async () => {
  for (const close of closing) await close();
  await store.close();
  await pool.end();
  log('stopped');
};

if (role !== 'worker') {
  // The server only writes: a message, an approval. The worker runs what they start.
  const runner = createRunner({ store, workflows, kinds: [composition], execute: false });
  const app = chatServer({ runner, store, inspectorToken: env['INSPECTOR_TOKEN'] || 'change-this-token' });
  const server = await new Promise<Server>((resolve) => {
    const s = serve(
      { fetch: app.fetch, hostname: env['HOST'] || '127.0.0.1', port: Number(env['PORT'] ?? 3000) },
      () => resolve(s as Server),
    );
  });
  closing.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  const address = server.address();
  log('listening', { port: typeof address === 'object' && address ? address.port : null, pid: process.pid });
}

if (role !== 'server') {
  const { model, name } = await modelFromEnv(env);
  const runner = createRunner({
    store,
    workflows,
    kinds: [composition],
    handlers: supportHandlers({ model, store, pool, schema }),
  });
  const worker = createWorker({
    runner,
    concurrency: 8,
    on: { error: (e, where) => log('worker.error', { where, error: String(e) }) },
  });
  // SIGTERM/SIGINT: the worker drains (running steps finish or are given back), then all closes.
  await serveWorker(worker, { onStopped: stopped });
  log('working', { model: name, pid: process.pid });
} else {
  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    process.once(signal, () => void stopped().then(() => process.exit(0)));
}
