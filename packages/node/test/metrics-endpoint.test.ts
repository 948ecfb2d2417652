import { readFileSync } from 'node:fs';
import {
  createRunner,
  createWorker,
  flowControl,
  type HandlerContext,
  isTerminal,
  TaskError,
  workflow,
} from '@stepfold/engine';
import { serveMetrics } from '@stepfold/node';
import { createOtelMetrics } from '@stepfold/otel';
import { createPostgresStore, postgresDueBacklog } from '@stepfold/store-postgres';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';

// The metrics endpoint end to end: an API runner and a worker on PostgreSQL run payments (some
// retried, some failing), a limited job holds its key while another waits, a cancel and racing
// signals; the test scrapes GET /metrics over HTTP and reads the counts, and checks that every
// metric the Grafana dashboard in examples/grafana queries is one the endpoint exports.

const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';
const SCHEMA = `metrics_${process.pid}`;
const DASHBOARD = new URL('../../../examples/grafana/stepfold-dashboard.json', import.meta.url);

const pay = workflow('pay', 1, { defaults: { retry: { maxAttempts: 2, initialMs: 10, jitter: 0 } } })
  .task('charge', { handler: 'charge' })
  .build();
const limited = workflow('limited', 1)
  .input<{ customer: string }>()
  .task('call', { handler: 'call', concurrency: { key: 'input.customer', limit: 1 } })
  .build();
const notes = workflow('notes', 1)
  .collect('gather', { signal: 'note', maxItems: 1000, idleMs: 600_000 })
  .build();

/** charge: `ok-*` succeeds, `flaky-*` fails its first attempt, `bad-*` fails both. */
const charge = (ctx: HandlerContext) => {
  if (ctx.instanceId.startsWith('bad')) throw new TaskError('declined', { code: 'DECLINED' });
  if (ctx.instanceId.startsWith('flaky') && ctx.attempt === 1) throw new Error('gateway timeout');
  return 'paid';
};

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition. */
function parse(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** GET `url`: the parsed samples (the status must be 200). */
async function scrape(url: string): Promise<Sample[]> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return parse(await res.text());
}

/** The sum of `name`'s samples whose labels include `labels`. */
function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((n, s) => n + s.value, 0);
}

afterAll(async () => {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  await admin.end();
});

describe('serveMetrics', () => {
  it('serves a PostgreSQL run’s starts, ends, attempts, durations, claims, lag, backlog, flow keys and conflicts over HTTP', async () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 6 });
    const store = createPostgresStore({ pool, schema: SCHEMA });
    await store.setup();
    const served = await serveMetrics({ port: 0 });
    let letGo!: () => void;
    const gate = new Promise<void>((r) => (letGo = r));
    try {
      expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const metrics = createOtelMetrics({ meterProvider: served.meterProvider });
      const shared = {
        store,
        workflows: [pay, limited, notes],
        kinds: [flowControl],
        instrument: metrics.instrument,
      };
      const api = createRunner({ ...shared, execute: false });
      const runner = createRunner({
        ...shared,
        handlers: { charge, call: () => gate.then(() => 'called') },
      });
      const worker = createWorker({ runner, poll: { minMs: 5, maxMs: 50 }, on: metrics.workerEvents() });
      const backlog = postgresDueBacklog({ pool, store });
      const observations = [metrics.observe({ runner: api }), metrics.observe({ runner, worker, backlog })];

      const ids = ['ok-1', 'ok-2', 'ok-3', 'ok-4', 'ok-5', 'ok-6', 'flaky-1', 'flaky-2', 'bad-1', 'bad-2'];
      for (const id of ids) await api.start('pay', id);
      // Nothing runs them yet: every start is due on the pay lane.
      let samples = await scrape(served.url);
      expect(total(samples, 'stepfold_due_backlog', { stepfold_lane: 'pay' })).toBe(ids.length);
      expect(total(samples, 'stepfold_workflows_started_total', { stepfold_workflow_name: 'pay' })).toBe(
        ids.length,
      );

      await worker.start();
      const ended = async () => {
        for (const id of ids) if (!isTerminal((await store.load(id))!.status)) return false;
        return true;
      };
      for (let i = 0; i < 400 && !(await ended()); i++) await new Promise((r) => setTimeout(r, 25));
      expect(await ended()).toBe(true);

      // c-1's call holds its key (its handler waits for the gate); the second waits for the slot.
      await api.start('limited', 'l-1', { customer: 'c-1' });
      await api.start('limited', 'l-2', { customer: 'c-1' });
      for (let i = 0; i < 200 && (await runner.get('l-2'))?.steps['call']?.throttled === undefined; i++)
        await new Promise((r) => setTimeout(r, 25));
      // Signals racing from two runners: one write loses and is applied again.
      await api.start('notes', 'n-1');
      for (let i = 0; i < 50 && api.stats.conflicts + runner.stats.conflicts === 0; i++)
        await Promise.all([api.signal('n-1', 'note', i), runner.signal('n-1', 'note', -i)]);
      await api.cancel('n-1', 'enough');

      samples = await scrape(served.url);
      const by = (workflow: string) => ({ stepfold_workflow_name: workflow });
      expect(total(samples, 'stepfold_workflows_started_total', by('pay'))).toBe(10);
      expect(total(samples, 'stepfold_workflows_completed_total', by('pay'))).toBe(8);
      expect(total(samples, 'stepfold_workflows_failed_total', by('pay'))).toBe(2);
      expect(total(samples, 'stepfold_workflows_cancelled_total', by('notes'))).toBe(1);
      const charges = { ...by('pay'), stepfold_step: 'charge' };
      // ok ×6 and each flaky's second attempt completed; each flaky's first and both of each bad failed.
      const done = { ...charges, stepfold_outcome: 'completed' };
      const failed = { ...charges, stepfold_outcome: 'failed' };
      expect(total(samples, 'stepfold_task_attempts_total', done)).toBe(8);
      expect(total(samples, 'stepfold_task_attempts_total', failed)).toBe(6);
      expect(total(samples, 'stepfold_task_duration_count', done)).toBe(8);
      expect(total(samples, 'stepfold_task_duration_count', failed)).toBe(6);
      expect(total(samples, 'stepfold_task_duration_bucket', { ...failed, le: '+Inf' })).toBe(6);
      // Every start and every retry was claimed and ticked by the worker, each with its lag.
      expect(total(samples, 'stepfold_worker_claims_total')).toBeGreaterThanOrEqual(14);
      expect(total(samples, 'stepfold_worker_lag_count', by('pay'))).toBeGreaterThanOrEqual(14);
      expect(total(samples, 'stepfold_due_backlog', { stepfold_lane: 'pay' })).toBe(0);
      const key = { stepfold_flow_scope: 'limited/call', stepfold_flow_key: 'c-1' };
      expect(total(samples, 'stepfold_flow_holders', key)).toBe(1);
      expect(total(samples, 'stepfold_flow_waiters', key)).toBe(1);
      expect(total(samples, 'stepfold_worker_tasks', { stepfold_task_state: 'running' })).toBe(1);
      expect(total(samples, 'stepfold_write_conflicts_total')).toBeGreaterThan(0);
      expect(total(samples, 'stepfold_writes_total')).toBeGreaterThan(30);
      // Bounded attributes: no sample carries an instance id.
      for (const s of samples) expect(Object.values(s.labels)).not.toContain('ok-1');

      // Every metric a dashboard panel (or variable) queries is one this endpoint exports: each
      // stepfold_ name in the dashboard is an exported metric or one of their labels.
      const exported = new Set(samples.map((s) => s.name));
      const labels = new Set(samples.flatMap((s) => Object.keys(s.labels)));
      const dashboard = readFileSync(DASHBOARD, 'utf8');
      const queried = [...new Set(dashboard.match(/\bstepfold_[a-z_]+/g))].filter((n) => !labels.has(n));
      expect(queried.length).toBeGreaterThan(10);
      expect(queried.filter((name) => !exported.has(name))).toEqual([]);

      letGo();
      await worker.stop();
      for (const o of observations) o.close();
    } finally {
      letGo();
      await served.close();
      await pool.end();
    }
  });

  it('listens on 127.0.0.1 by default, answers 404 off its endpoint, and frees its port on close', async () => {
    const served = await serveMetrics({ port: 0, endpoint: '/stats' });
    const url = new URL(served.url);
    expect(url.hostname).toBe('127.0.0.1');
    expect((await fetch(new URL('/metrics', url))).status).toBe(404);
    const res = await fetch(served.url);
    expect(res.status).toBe(200);
    await res.text();
    await served.close();
    await served.close(); // idempotent
    await expect(fetch(served.url)).rejects.toThrow();
    // The port is free again: a new endpoint can take it.
    const again = await serveMetrics({ port: Number(url.port) });
    await again.close();
  });
});
