/**
 * The package in workerd (through Miniflare), with the shipped wrangler.toml's bindings: a user's
 * Worker (test/fixtures/user-worker.ts) bundled from this package's source, driven over HTTP. Real
 * Durable Object storage and real alarms: the tests only poll, nothing else moves an instance.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, bundleWorker, startWorker } from './workerd-harness.js';
import { readWranglerToml } from './wrangler-toml.js';

const root = fileURLToPath(new URL('..', import.meta.url));
let mf: Miniflare;
let http: ReturnType<typeof api>;

beforeAll(async () => {
  const bundle = await bundleWorker(`${root}test/fixtures/user-worker.ts`, `${root}test/dist/worker.js`, {
    alias: { '@stepfold/cloudflare': `${root}src/index.ts` },
  });
  expect(bundle.imports).toEqual([]);
  const config = readWranglerToml(readFileSync(`${root}templates/wrangler.toml`, 'utf8'));
  expect(config.durableObjects).toEqual({ WORKFLOWS: { className: 'WorkflowInstance', useSQLite: true } });
  mf = await startWorker(bundle, config, { SHOP: 'shop-1' });
  http = api(mf, '/api');
});

afterAll(async () => {
  await mf?.dispose();
});

/** The alarm the instance's Durable Object holds, and the alarm failures it reported. */
const objectState = (id: string) =>
  http.object<{
    alarm: number | null;
    errors: { failures: number; retryAt: number; message: string } | null;
    /** Every alarm the object set (null: deleted), oldest first. */
    set: Array<number | null>;
  }>(id, '/test/alarm');

describe('a workflow in its Durable Object', () => {
  it('waits for approval with the timeout as its alarm; approve, the sleep’s alarm, completion, no alarm left', async () => {
    const started = await http.call('POST', '/workflows/order/instances/o-1', { sku: 'BOOK-7' });
    expect(started.status).toBe(201);
    expect(started.body.status).toBe('waiting');
    // Built from env: the handler read the SHOP variable.
    expect(started.body.steps.reserve?.output).toEqual({ reservation: 'shop-1:BOOK-7' });
    expect(started.body.wakeAt! - started.body.updatedAt).toBe(48 * 3600_000);
    const waiting = await objectState('o-1');
    expect(waiting.alarm).toBe(started.body.wakeAt);

    const approved = await http.call('POST', '/instances/o-1/signals/approval', { decision: 'approve' });
    expect(approved.status).toBe(200);
    expect(approved.body.steps['cool-off']?.status).toBe('active');

    const done = await http.until('o-1', (s) => s.status === 'completed');
    expect(done.status).toBe('completed');
    expect(done.steps.charge).toMatchObject({ status: 'completed', attempt: 1 });
    expect(done.wakeAt).toBeNull();
    const { set, ...end } = await objectState('o-1');
    expect(end).toEqual({ alarm: null, errors: null });
    // The approval's write made the 1 s cool-off the alarm (read from the object's record once it
    // has rung: reading the alarm after the approval would race it), and the end deleted it.
    expect(set.slice(waiting.set.length)[0]).toBe(approved.body.wakeAt);
    expect(set.at(-1)).toBeNull();
  });

  it('retries a failed charge when the alarm rings after the backoff, then clears the alarm', async () => {
    await http.call('POST', '/workflows/order/instances/o-2', { sku: 'BOOK-8', chargeFailures: 1 });
    await http.call('POST', '/instances/o-2/signals/approval', { decision: 'approve' });
    const retrying = await http.until('o-2', (s) => s.timers.some((t) => t.kind === 'retry'));
    expect(retrying.steps.charge).toMatchObject({ status: 'active', attempt: 1 });

    const done = await http.until('o-2', (s) => s.status === 'completed');
    expect(done.steps.charge).toMatchObject({ status: 'completed', attempt: 2 });
    const { alarm, set } = await objectState('o-2');
    expect(alarm).toBeNull();
    // The failure's write made the 500 ms backoff the alarm (the alarm read then would race it).
    expect(set).toContain(retrying.wakeAt);
    expect(set.at(-1)).toBeNull();
  });

  it('cancel, reject and abort end the instance and delete its alarm', async () => {
    await http.call('POST', '/workflows/order/instances/o-3', { sku: 'X' });
    const cancelled = await http.call('POST', '/instances/o-3/cancel', { reason: 'changed my mind' });
    expect(cancelled.body).toMatchObject({ status: 'cancelled', wakeAt: null });
    expect(cancelled.body.steps.reserve?.status).toBe('compensated');
    expect((await objectState('o-3')).alarm).toBeNull();

    await http.call('POST', '/workflows/order/instances/o-4', { sku: 'X' });
    const rejected = await http.call('POST', '/instances/o-4/signals/approval?signalId=d-1', {
      decision: 'reject',
    });
    expect(rejected.body.status).toBe('failed');
    expect((await objectState('o-4')).alarm).toBeNull();

    await http.call('POST', '/workflows/order/instances/o-5', { sku: 'X' });
    const aborted = await http.call('POST', '/instances/o-5/abort');
    expect(aborted.body).toMatchObject({ status: 'aborted', wakeAt: null });
    expect((await objectState('o-5')).alarm).toBeNull();
  });

  it('an alarm whose tick throws is set again 1 s later and reported; the next one completes the instance', async () => {
    await http.call('POST', '/workflows/order/instances/o-6', { sku: 'Y' });
    await http.object('o-6', '/test/fail-alarms?n=1');
    const approved = await http.call('POST', '/instances/o-6/signals/approval', { decision: 'approve' });
    const due = approved.body.wakeAt!;

    const done = await http.until('o-6', (s) => s.status === 'completed');
    expect(done.status).toBe('completed');
    const { alarm, errors } = await objectState('o-6');
    expect(alarm).toBeNull();
    expect(errors).toMatchObject({ failures: 1, message: expect.stringContaining('storage unavailable') });
    // The failed alarm rang at (or after) the cool-off's end and set the next one 1 s later.
    expect(errors!.retryAt).toBeGreaterThanOrEqual(due + 1_000);
    expect(done.updatedAt).toBeGreaterThanOrEqual(errors!.retryAt);
  });
});

describe('the Worker’s routing', () => {
  it('answers paths outside the prefix, and workflows it does not run, with NO_ROUTE before any object', async () => {
    for (const path of [
      'http://stepfold.test/instances/o-1',
      'http://stepfold.test/api/workflows/other/instances/z',
    ]) {
      const res = await mf.dispatchFetch(path, { method: path.includes('workflows') ? 'POST' : 'GET' });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: 'NO_ROUTE' } });
    }
  });

  it('gives engine errors their kind’s status and the stable code, and writes nothing', async () => {
    await http.call('POST', '/workflows/order/instances/o-7', { sku: 'Z' });
    const before = (await http.get('o-7')).body;
    const noDecision = await http.call<{ error: { code: string } }>(
      'POST',
      '/instances/o-7/signals/approval',
      {},
    );
    expect(noDecision).toMatchObject({ status: 400, body: { error: { code: 'INVALID_EVENT' } } });
    const again = await http.call<{ error: { code: string } }>('POST', '/workflows/order/instances/o-7', {});
    expect(again).toMatchObject({ status: 409, body: { error: { code: 'ALREADY_EXISTS' } } });
    const ghost = await http.call<{ error: { code: string } }>('GET', '/instances/ghost');
    expect(ghost).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
    expect((await http.get('o-7')).body).toEqual(before);
  });

  it('a decision for an instance that has finished is 409 INSTANCE_FINISHED, and writes nothing', async () => {
    await http.call('POST', '/workflows/order/instances/o-8', { sku: 'Z' });
    const aborted = await http.call('POST', '/instances/o-8/abort');
    expect(aborted.body.status).toBe('aborted');
    const late = await http.call<{ error: { code: string; message: string } }>(
      'POST',
      '/instances/o-8/signals/approval',
      { decision: 'approve' },
    );
    expect(late).toMatchObject({ status: 409, body: { error: { code: 'INSTANCE_FINISHED' } } });
    expect(late.body.error.message).toMatch(/has finished \(aborted\)/);
    expect((await http.get('o-8')).body).toEqual(aborted.body);
  });

  it('a wrong method is 405 with the method the path takes in `Allow`', async () => {
    const res = await mf.dispatchFetch('http://stepfold.test/api/instances/o-1', { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect(await res.json()).toMatchObject({ error: { code: 'METHOD_NOT_ALLOWED' } });
  });
});
