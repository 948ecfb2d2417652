/**
 * The worker as a real process (dist/main.js) on the real PostgreSQL: the order saga and a human
 * approval over HTTP, bad input, SIGKILL in the middle of a task and recovery by a new process
 * , and SIGTERM waiting for the handler in flight.
 */
import { ERROR_KINDS, type ErrorCode, HTTP_STATUS } from '@stepfold/engine';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until, Worker } from './worker.js';

const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';
const schema = `stepfold_worker_test_${process.pid}`;
const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
const env = { STEPFOLD_PG_URL: PG_URL, STEPFOLD_SCHEMA: schema, CONCURRENCY: '4' };
const workers: Worker[] = [];
const TERMINAL = ['completed', 'failed', 'cancelled', 'aborted'];

interface CallRow {
  step: string;
  phase: string;
  attempt: number;
  idempotency_key: string;
  pid: number;
  started_at: Date;
  finished_at: Date | null;
  outcome: string | null;
}

async function calls(instance: string): Promise<CallRow[]> {
  const r = await pool.query<CallRow>(
    `SELECT step, phase, attempt, idempotency_key, pid, started_at, finished_at, outcome
     FROM "${schema}".calls WHERE instance = $1 ORDER BY id`,
    [instance],
  );
  return r.rows;
}

async function start(env2: Record<string, string> = {}): Promise<Worker> {
  const w = await Worker.start({ ...env, ...env2 });
  workers.push(w);
  return w;
}

// biome-ignore lint/suspicious/noExplicitAny: snapshots as JSON
const finished = (w: Worker, id: string) => async (): Promise<any> => {
  const r = await w.request('GET', `/instances/${encodeURIComponent(id)}`);
  return r.status === 200 && TERMINAL.includes(r.body.status) ? r.body : undefined;
};

const steps = (rows: CallRow[]) =>
  rows.map((c) => `${c.step}${c.phase === 'compensate' ? ':undo' : ''}#${c.attempt}`);

let w1: Worker;
let w2: Worker;

beforeAll(async () => {
  try {
    await pool.query('SELECT 1');
  } catch (e) {
    throw new Error(
      `no PostgreSQL at ${PG_URL} (set STEPFOLD_PG_URL or run \`bash scripts/services.sh up pg\`)`,
      { cause: e },
    );
  }
  w1 = await start();
});

afterAll(async () => {
  for (const w of workers) await w.dispose();
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
  await pool.end();
});

describe('node worker over HTTP on PostgreSQL', () => {
  it('runs the order saga to completion', async () => {
    const id = `order-ok-${process.pid}`;
    const r = await w1.request('POST', `/workflows/order/instances/${id}`, { sku: 'BOOK', amount: 25 });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ id, version: 1, status: 'running' });
    const s = await until('the order to finish', finished(w1, id));
    expect(s.status).toBe('completed');
    expect(s.output).toEqual({ sent: true, payment: 'P-BOOK-25' });
    const rows = await calls(id);
    expect(steps(rows)).toEqual(['reserve-stock#1', 'charge-payment#1', 'send-email#1']);
    expect(rows.every((c) => c.pid === w1.pid && c.outcome === 'ok')).toBe(true);
  });

  it('retries a failing charge with backoff through the worker, then compensates', async () => {
    const id = `order-fail-${process.pid}`;
    const input = {
      sku: 'PEN',
      amount: 3,
      behaviour: { 'charge-payment': { failAttempts: 3, failCode: 'GATEWAY' } },
    };
    expect((await w1.request('POST', `/workflows/order/instances/${id}`, input)).status).toBe(201);
    const s = await until('the order to fail', finished(w1, id));
    expect(s.status).toBe('failed');
    expect(s.error).toMatchObject({ code: 'GATEWAY', step: 'charge-payment' });
    const rows = await calls(id);
    expect(steps(rows)).toEqual([
      'reserve-stock#1',
      'charge-payment#1',
      'charge-payment#2',
      'charge-payment#3',
      'reserve-stock:undo#1',
    ]);
    expect(new Set(rows.filter((c) => c.step === 'charge-payment').map((c) => c.idempotency_key))).toEqual(
      new Set([`${id}/1/charge-payment/1`]),
    );
    // Backoff 500 ms, then 1 s, held in the snapshot as timers and fired by the worker.
    const t = rows.filter((c) => c.step === 'charge-payment').map((c) => c.started_at.getTime());
    expect(t[1]! - t[0]!).toBeGreaterThanOrEqual(450);
    expect(t[2]! - t[1]!).toBeGreaterThanOrEqual(950);
  });

  it('waits for a human decision: approve publishes, reject compensates the draft', async () => {
    const yes = `approval-yes-${process.pid}`;
    const no = `approval-no-${process.pid}`;
    for (const id of [yes, no]) {
      expect((await w1.request('POST', `/workflows/approval/instances/${id}`, { title: id })).status).toBe(
        201,
      );
    }
    for (const id of [yes, no]) {
      await until(
        'the review step',
        async () => (await w1.request('GET', `/instances/${id}`)).body.status === 'waiting',
      );
    }
    const approved = await w1.request('POST', `/instances/${yes}/decision`, {
      decision: 'approve',
      comment: 'ok',
    });
    expect(approved.status).toBe(202);
    const rejected = await w1.request('POST', `/instances/${no}/decision`, { decision: 'reject' });
    expect(rejected.status).toBe(202);

    const a = await until('the approval to finish', finished(w1, yes));
    expect(a.status).toBe('completed');
    expect(a.output).toEqual({ published: `doc:${yes}` });
    expect(steps(await calls(yes))).toEqual(['draft#1', 'publish#1']);
    const b = await until('the rejection to finish', finished(w1, no));
    expect(b.status).toBe('failed');
    expect(steps(await calls(no))).toEqual(['draft#1', 'draft:undo#1']);

    // A decision for an instance that is no longer waiting for one.
    const late = await w1.request('POST', `/instances/${yes}/decision`, { decision: 'reject' });
    expect(late).toMatchObject({ status: 409, body: { error: { code: 'NOT_WAITING_FOR_DECISION' } } });

    // list, filtered and paged
    const page = await w1.request('GET', '/instances?workflow=approval&limit=1');
    expect(page.status).toBe(200);
    expect(page.body.items).toHaveLength(1);
    expect(page.body.cursor).not.toBeNull();
    const failed = await w1.request('GET', '/instances?status=failed&workflow=approval');
    expect(failed.body.items.map((s: { id: string }) => s.id)).toEqual([no]);
  });

  it('cancel, abort and requeue over HTTP', async () => {
    const c = `approval-cancel-${process.pid}`;
    await w1.request('POST', `/workflows/approval/instances/${c}`, {});
    await until(
      'the review step',
      async () => (await w1.request('GET', `/instances/${c}`)).body.status === 'waiting',
    );
    expect((await w1.request('POST', `/instances/${c}/cancel`, { reason: 'customer left' })).status).toBe(
      202,
    );
    const cancelled = await until('the cancel', finished(w1, c));
    expect(cancelled).toMatchObject({ status: 'cancelled', reason: 'customer left' });
    expect(steps(await calls(c))).toEqual(['draft#1', 'draft:undo#1']);

    const a = `approval-abort-${process.pid}`;
    await w1.request('POST', `/workflows/approval/instances/${a}`, {});
    expect((await w1.request('POST', `/instances/${a}/abort`)).status).toBe(202);
    expect(await until('the abort', finished(w1, a))).toMatchObject({ status: 'aborted' });

    // requeue: a compensation that keeps failing parks the instance in dlq; requeue retries it.
    const r = `order-requeue-${process.pid}`;
    const input = {
      sku: 'X',
      amount: 1,
      behaviour: {
        'charge-payment': { failAttempts: 1, nonRetryable: true, failCode: 'DECLINED' },
        'reserve-stock:compensate': { failAttempts: 3 },
      },
    };
    await w1.request('POST', `/workflows/order/instances/${r}`, input);
    const parked = await until('the dlq', async () => {
      const x = await w1.request('GET', `/instances/${r}`);
      return x.body.status === 'dlq' ? x.body : undefined;
    });
    expect(parked).toMatchObject({ error: { code: 'DECLINED' }, compensationError: { code: 'INJECTED' } });
    expect((await w1.request('POST', `/instances/${r}/requeue`, {})).status).toBe(202);
    const requeued = await until('the requeued rollback', finished(w1, r));
    expect(requeued).toMatchObject({ status: 'failed', error: { code: 'DECLINED' } });
    expect(steps(await calls(r))).toEqual([
      'reserve-stock#1',
      'charge-payment#1',
      'reserve-stock:undo#1',
      'reserve-stock:undo#2',
      'reserve-stock:undo#3',
      'reserve-stock:undo#4',
    ]);
    // A finished instance has nothing to requeue: the request writes nothing and says so.
    const noop = await w1.request('POST', `/instances/${r}/requeue`, {});
    expect(noop.status).toBe(200);
    expect(noop.body.version).toBe(requeued.version);
  });

  it('rejects bad input with a 4xx and its error code, writing nothing', async () => {
    const id = `approval-bad-${process.pid}`;
    await w1.request('POST', `/workflows/approval/instances/${id}`, { title: 'x' });
    const before = await until('the review step', async () => {
      const r = await w1.request('GET', `/instances/${id}`);
      return r.body.status === 'waiting' ? r.body : undefined;
    });
    const callsBefore = (await calls(id)).length;
    const ghost = `ghost-${process.pid}`;
    const cases: Array<[string, string, unknown, string | undefined, number, string]> = [
      ['POST', `/workflows/order/instances/${ghost}`, undefined, '{"sku": ', 400, 'INVALID_EVENT'],
      // A workflow the API does not serve is a path to nothing, decided before the engine is asked.
      ['POST', `/workflows/no-such-workflow/instances/${ghost}`, {}, undefined, 404, 'NO_ROUTE'],
      [
        'POST',
        `/workflows/order/instances/${encodeURIComponent('bad id!')}`,
        {},
        undefined,
        400,
        'INVALID_ID',
      ],
      ['POST', `/workflows/approval/instances/${id}`, {}, undefined, 409, 'ALREADY_EXISTS'],
      ['GET', `/instances/${ghost}`, undefined, undefined, 404, 'NOT_FOUND'],
      ['POST', `/instances/${ghost}/signals/review`, { decision: 'approve' }, undefined, 404, 'NOT_FOUND'],
      ['POST', `/instances/${ghost}/cancel`, {}, undefined, 404, 'NOT_FOUND'],
      ['POST', `/instances/${ghost}/decision`, { decision: 'approve' }, undefined, 404, 'NOT_FOUND'],
      // malformed signals: a decision that is neither approve nor reject, a review signal without one,
      // a bad signal name, invalid JSON, unknown fields
      ['POST', `/instances/${id}/decision`, { decision: 'maybe' }, undefined, 400, 'INVALID_EVENT'],
      ['POST', `/instances/${id}/decision`, {}, undefined, 400, 'INVALID_EVENT'],
      ['POST', `/instances/${id}/signals/review`, { approved: 'sure' }, undefined, 400, 'INVALID_EVENT'],
      [
        'POST',
        `/instances/${id}/signals/${encodeURIComponent('no spaces')}`,
        {},
        undefined,
        400,
        'INVALID_ID',
      ],
      ['POST', `/instances/${id}/signals/review`, undefined, '{"decision":', 400, 'INVALID_EVENT'],
      ['POST', `/instances/${id}/cancel`, { reason: 42 }, undefined, 400, 'INVALID_EVENT'],
      ['POST', `/instances/${id}/requeue`, { stepp: 'x' }, undefined, 400, 'INVALID_EVENT'],
      ['GET', '/instances?status=weird', undefined, undefined, 400, 'INVALID_EVENT'],
      ['GET', '/instances?limit=1000', undefined, undefined, 400, 'INVALID_EVENT'],
      ['DELETE', `/instances/${id}`, undefined, undefined, 404, 'NO_ROUTE'],
    ];
    for (const [method, path, body, raw, status, code] of cases) {
      const r = await w1.request(method, path, body, raw);
      expect({ method, path, status: r.status, code: r.body?.error?.code }).toEqual({
        method,
        path,
        status,
        code,
      });
      expect(typeof r.body.error.message).toBe('string');
      // An engine code comes with its kind's status, from the engine's table.
      if (Object.hasOwn(ERROR_KINDS, code))
        expect(status, code).toBe(HTTP_STATUS[ERROR_KINDS[code as ErrorCode]]);
    }
    // Nothing was written: the unknown ids still don't exist, the waiting instance is unchanged.
    expect((await w1.request('GET', `/instances/${ghost}`)).status).toBe(404);
    expect((await w1.request('GET', `/instances/${encodeURIComponent('bad id!')}`)).status).toBe(400);
    expect((await w1.request('GET', `/instances/${id}`)).body).toEqual(before);
    expect(await calls(ghost)).toEqual([]);
    expect((await calls(id)).length).toBe(callsBefore);
  });

  it('SIGKILL mid-task: a new worker re-dispatches it after the deadline, same key, next attempt', async () => {
    const id = `order-kill-${process.pid}`;
    // charge-payment sleeps 60 s on attempt 1 (its deadline is 3 s); later attempts are quick.
    const input = {
      sku: 'LAMP',
      amount: 40,
      behaviour: { 'charge-payment': { delayMs: 60_000, delayAttempts: 1 } },
    };
    expect((await w1.request('POST', `/workflows/order/instances/${id}`, input)).status).toBe(201);
    const first = await until('charge attempt 1 to start', async () =>
      (await calls(id)).find((c) => c.step === 'charge-payment' && c.attempt === 1),
    );
    w1.proc.kill('SIGKILL');
    const killed = await w1.exited;
    expect(killed.signal).toBe('SIGKILL');
    expect(first.pid).toBe(w1.pid);
    expect(first.finished_at).toBeNull();

    w2 = await start();
    const mid = (await w2.request('GET', `/instances/${id}`)).body;
    expect(mid.status).toBe('running');
    expect(mid.tasks['charge-payment']).toMatchObject({
      attempt: 1,
      idempotencyKey: `${id}/1/charge-payment/1`,
    });

    const s = await until('the order to complete on the new worker', finished(w2, id));
    expect(s.status).toBe('completed');
    const charges = (await calls(id)).filter((c) => c.step === 'charge-payment');
    expect(
      charges.map((c) => ({ attempt: c.attempt, key: c.idempotency_key, pid: c.pid, outcome: c.outcome })),
    ).toEqual([
      { attempt: 1, key: `${id}/1/charge-payment/1`, pid: w1.pid, outcome: null },
      { attempt: 2, key: `${id}/1/charge-payment/1`, pid: w2.pid, outcome: 'ok' },
    ]);
    // Attempt 2 came only after attempt 1's deadline (3 s after its dispatch) had passed.
    expect(charges[1]!.started_at.getTime()).toBeGreaterThanOrEqual(mid.tasks['charge-payment'].deadline);
    expect(s.output).toEqual({ sent: true, payment: 'P-LAMP-40' });
    expect(s.steps['charge-payment']).toMatchObject({ status: 'completed', attempt: 2 });
    expect(s.log).toContainEqual(
      expect.objectContaining({ step: 'charge-payment', attempt: 2, type: 'task.dispatched' }),
    );
    console.log(
      `kill test: ${charges
        .map((c) => `attempt ${c.attempt} key ${c.idempotency_key} pid ${c.pid} (${c.outcome ?? 'killed'})`)
        .join('; ')}`,
    );
  });

  it('SIGTERM waits for the handler in flight: stops polling and taking requests, writes its result, exits 0', async () => {
    const t = `order-term-${process.pid}`;
    const slow = { sku: 'CUP', amount: 2, behaviour: { 'send-email': { delayMs: 1_500 } } };
    expect((await w2.request('POST', `/workflows/order/instances/${t}`, slow)).status).toBe(201);
    const email = await until('send-email to start', async () =>
      (await calls(t)).find((c) => c.step === 'send-email'),
    );
    expect(email.finished_at).toBeNull();
    const sent = Date.now();
    w2.proc.kill('SIGTERM');
    await until('shutdown to begin', () => w2.lines.some((l) => l.event === 'shutdown.begin'));
    await expect(w2.request('GET', `/instances/${t}`)).rejects.toThrow();
    const exit = await w2.exited;
    expect(exit.code).toBe(0);
    const [done] = (await calls(t)).filter((c) => c.step === 'send-email');
    expect(done).toMatchObject({ attempt: 1, outcome: 'ok', pid: w2.pid });
    expect(done!.finished_at!.getTime()).toBeLessThanOrEqual(exit.at);
    expect(exit.at - sent).toBeGreaterThanOrEqual(1_000);
    expect(w2.lines.filter((l) => l.event.startsWith('shutdown') || l.id === t).map((l) => l.event)).toEqual([
      'shutdown.begin',
      'workflow.completed',
      'shutdown.worker-stopped',
      'shutdown.done',
    ]);
    // The result was written before the exit: another worker sees the order completed.
    const w3 = await start();
    expect((await w3.request('GET', `/instances/${t}`)).body).toMatchObject({ status: 'completed' });
  });
});
