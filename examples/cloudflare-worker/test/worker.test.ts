/**
 * Runs the Worker in workerd (through Miniflare) and drives it over HTTP: the engine and
 * @stepfold/cloudflare bundled unchanged by esbuild, the bindings of this example's wrangler.toml,
 * one Durable Object per instance, real DO storage and real alarms.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { ERROR_KINDS, type ErrorCode, HTTP_STATUS } from '@stepfold/engine';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWranglerToml } from '../../../packages/cloudflare/test/wrangler-toml.js';

const root = fileURLToPath(new URL('..', import.meta.url));
let mf: Miniflare;

const bundle = (outfile: string, minify: boolean) =>
  build({
    entryPoints: [`${root}src/worker.ts`],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    outfile,
    minify,
    metafile: true,
    logLevel: 'silent',
  });

beforeAll(async () => {
  const outfile = `${root}dist/worker.js`;
  const result = await bundle(outfile, false);
  // The packages go in as they are: no Node built-ins, nothing left external.
  const imports = Object.values(result.metafile.outputs).flatMap((o) => o.imports);
  expect(imports).toEqual([]);
  const inputs = Object.keys(result.metafile.inputs);
  expect(inputs.some((p) => p.includes('engine/dist/'))).toBe(true);
  expect(inputs.some((p) => p.includes('cloudflare/dist/'))).toBe(true);

  // The example's wrangler.toml is the package's template with the example's name.
  const toml = readFileSync(`${root}wrangler.toml`, 'utf8');
  const template = readFileSync(`${root}../../packages/cloudflare/templates/wrangler.toml`, 'utf8');
  expect(toml.replace(/^name = .*$/m, '')).toBe(template.replace(/^name = .*$/m, ''));
  const config = readWranglerToml(toml);
  expect(`${root}${config.main}`).toBe(`${root}src/worker.ts`);

  mf = new Miniflare({
    modules: true,
    scriptPath: outfile,
    compatibilityDate: config.compatibilityDate,
    durableObjects: config.durableObjects,
  });
  await mf.ready;
});

afterAll(async () => {
  await mf?.dispose();
});

describe('the Worker bundle', () => {
  it('is small: minified and gzipped, the engine and the package come to under 42 KB', async () => {
    const result = await bundle(`${root}dist/worker.min.js`, true);
    const code = readFileSync(`${root}dist/worker.min.js`);
    const gz = gzipSync(code, { level: 9 }).length;
    console.log(
      `worker bundle: ${(code.length / 1024).toFixed(1)} KB minified, ${(gz / 1024).toFixed(1)} KB gz`,
    );
    expect(Object.values(result.metafile.outputs).flatMap((o) => o.imports)).toEqual([]);
    expect(gz).toBeLessThan(42 * 1024);
  });
});

interface Snapshot {
  id: string;
  version: number;
  status: string;
  output?: unknown;
  error?: { message: string; code?: string; step?: string };
  reason?: string;
  wakeAt: number | null;
  updatedAt: number;
  steps: Record<string, { status: string; attempt: number; output?: unknown }>;
  timers: Array<{ kind: string; step: string; at: number }>;
}
interface ErrorBody {
  error: { code: string; message: string };
}

async function call<T = Snapshot>(
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await mf.dispatchFetch(`http://stepfold.test${path}`, {
    method,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  expect(res.headers.get('content-type')).toBe('application/json');
  return { status: res.status, body: (await res.json()) as T };
}
const get = (id: string) => call('GET', `/instances/${encodeURIComponent(id)}`);
/** A refused request; an engine code must come with its kind's status, from the engine's table. */
async function fails(path: string, body?: unknown, method: 'GET' | 'POST' | 'PUT' = 'POST') {
  const r = await call<ErrorBody>(method, path, body);
  const code = r.body.error.code;
  if (Object.hasOwn(ERROR_KINDS, code))
    expect(r.status, code).toBe(HTTP_STATUS[ERROR_KINDS[code as ErrorCode]]);
  return r;
}

describe('order saga in workerd', () => {
  it('runs reserve → charge → email to completion', async () => {
    const started = await call('POST', '/workflows/order/instances/order-1', { sku: 'BOOK-7', amount: 25 });
    expect(started.status).toBe(201);
    expect(started.body.status).toBe('completed');

    const { status, body } = await get('order-1');
    expect(status).toBe(200);
    expect(body.status).toBe('completed');
    expect(body.output).toEqual({ sent: true, payment: 'P-BOOK-7-25' });
    expect(Object.values(body.steps).map((s) => s.status)).toEqual(['completed', 'completed', 'completed']);
    expect(body.wakeAt).toBeNull();
  });

  it('compensates the reservation when the charge is declined, then fails', async () => {
    const started = await call('POST', '/workflows/order/instances/order-2', {
      sku: 'BOOK-8',
      amount: 10,
      declineCharge: true,
    });
    expect(started.status).toBe(201);

    const { body } = await get('order-2');
    expect(body.status).toBe('failed');
    expect(body.error).toMatchObject({ code: 'CARD_DECLINED', message: 'card declined' });
    expect(body.steps['reserve-stock']?.status).toBe('compensated');
    expect(body.steps['charge-payment']?.status).toBe('failed');
    expect(body.steps['send-email']).toBeUndefined();
    expect(body.wakeAt).toBeNull();
  });

  it('retries a failed charge when the Durable Object alarm fires after the 1 s backoff', async () => {
    const started = await call('POST', '/workflows/order/instances/order-3', {
      sku: 'BOOK-9',
      amount: 5,
      chargeFailures: 1,
    });
    expect(started.status).toBe(201);
    // Attempt 1 failed inside the request; a retry timer 1 s later is the instance's wakeAt.
    expect(started.body.status).not.toBe('completed');
    expect(started.body.steps['charge-payment']).toMatchObject({ status: 'active', attempt: 1 });
    expect(started.body.timers).toEqual([expect.objectContaining({ kind: 'retry', step: 'charge-payment' })]);
    expect(started.body.wakeAt! - started.body.updatedAt).toBe(1_000);

    // Nobody calls the Worker again: only the alarm can move the instance on.
    const deadline = Date.now() + 15_000;
    let s = started.body;
    while (s.status !== 'completed' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      s = (await get('order-3')).body;
    }
    expect(s.status).toBe('completed');
    expect(s.steps['charge-payment']).toMatchObject({ status: 'completed', attempt: 2 });
    expect(s.output).toEqual({ sent: true, payment: 'P-BOOK-9-5' });
    expect(s.wakeAt).toBeNull();
  });
});

describe('human approval in workerd', () => {
  it('waits for a decision, then approve completes it', async () => {
    const started = await call('POST', '/workflows/publish/instances/doc-1', { title: 'Q3 report' });
    expect(started.status).toBe(201);

    const waiting = await get('doc-1');
    expect(waiting.body.status).toBe('waiting');
    expect(waiting.body.steps.draft?.status).toBe('completed');
    // The 48 h review timeout is the alarm.
    expect(waiting.body.wakeAt! - waiting.body.updatedAt).toBe(48 * 3600_000);

    const approved = await call('POST', '/instances/doc-1/signals/review', { decision: 'approve' });
    expect(approved.status).toBe(200);

    const { body } = await get('doc-1');
    expect(body.status).toBe('completed');
    expect(body.output).toEqual({ published: 'doc:Q3 report' });
    expect(body.wakeAt).toBeNull();
  });

  it('reject fails the workflow and discards the draft', async () => {
    await call('POST', '/workflows/publish/instances/doc-2', { title: 'draft 2' });
    const rejected = await call('POST', '/instances/doc-2/signals/review?signalId=decision-1', {
      decision: 'reject',
    });
    expect(rejected.status).toBe(200);
    const { body } = await get('doc-2');
    expect(body.status).toBe('failed');
    expect(body.steps.draft?.status).toBe('compensated');
  });

  it('cancel compensates and abort stops at once', async () => {
    await call('POST', '/workflows/publish/instances/doc-3', { title: 'three' });
    expect((await call('POST', '/instances/doc-3/cancel', { reason: 'obsolete' })).status).toBe(200);
    const cancelled = (await get('doc-3')).body;
    expect(cancelled).toMatchObject({ status: 'cancelled', reason: 'obsolete', wakeAt: null });
    expect(cancelled.steps.draft?.status).toBe('compensated');

    await call('POST', '/workflows/publish/instances/doc-4', { title: 'four' });
    expect((await call('POST', '/instances/doc-4/abort')).status).toBe(200);
    const aborted = (await get('doc-4')).body;
    expect(aborted).toMatchObject({ status: 'aborted', wakeAt: null });
    expect(aborted.steps.draft?.status).toBe('completed');
  });
});

describe('bad input over HTTP: 4xx with a stable code, nothing written', () => {
  it('invalid JSON on start', async () => {
    const r = await fails('/workflows/order/instances/bad-1', '{"sku": ');
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('INVALID_EVENT');
    expect(r.body.error.message).toMatch(/not valid JSON/);
    expect((await fails('/instances/bad-1', undefined, 'GET')).body.error.code).toBe('NOT_FOUND');
  });

  it('an input the workflow’s zod/mini schema refuses: INVALID_INPUT with the issue, nothing written', async () => {
    const r = await call<ErrorBody & { error: { issues: Array<{ path: string }> } }>(
      'POST',
      '/workflows/order/instances/bad-input',
      { sku: 'BOOK-1', amount: 'ten' },
    );
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('INVALID_INPUT');
    expect(r.body.error.issues.map((i) => i.path)).toEqual([expect.stringContaining('amount')]);
    expect((await fails('/instances/bad-input', undefined, 'GET')).body.error.code).toBe('NOT_FOUND');
  });

  it('a decision after the instance finished: 409 INSTANCE_FINISHED, nothing written', async () => {
    await call('POST', '/workflows/publish/instances/doc-late', { title: 'late' });
    const approved = await call('POST', '/instances/doc-late/signals/review', { decision: 'approve' });
    expect(approved.status).toBe(200);
    const done = (await get('doc-late')).body;
    expect(done.status).toBe('completed');
    const late = await fails('/instances/doc-late/signals/review', { decision: 'reject' });
    expect([late.status, late.body.error.code]).toEqual([409, 'INSTANCE_FINISHED']);
    expect((await get('doc-late')).body).toEqual(done);
  });

  it('unknown workflow: a path to nothing (the engine’s UNKNOWN_WORKFLOW would be a 500, a deployment fault)', async () => {
    const r = await fails('/workflows/no-such-flow/instances/bad-2', { x: 1 });
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('NO_ROUTE');
    const after = await fails('/instances/bad-2', undefined, 'GET');
    expect(after.status).toBe(404);
    expect(after.body.error.code).toBe('NOT_FOUND');
  });

  it('a signal, cancel or abort for an unknown instance id', async () => {
    for (const path of [
      '/instances/ghost/signals/review',
      '/instances/ghost/cancel',
      '/instances/ghost/abort',
    ]) {
      const r = await fails(path, { decision: 'approve' });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('NOT_FOUND');
    }
    expect((await fails('/instances/ghost', undefined, 'GET')).status).toBe(404);
  });

  it('malformed signals to a waiting instance leave it untouched', async () => {
    await call('POST', '/workflows/publish/instances/doc-5', { title: 'five' });
    const before = (await get('doc-5')).body;
    expect(before.status).toBe('waiting');

    const noDecision = await fails('/instances/doc-5/signals/review', { approvedBy: 'ada' });
    expect(noDecision.status).toBe(400);
    expect(noDecision.body.error.code).toBe('INVALID_EVENT');
    expect(noDecision.body.error.message).toMatch(/decision/);

    const badJson = await fails('/instances/doc-5/signals/review', '{decision: approve}');
    expect(badJson.status).toBe(400);
    expect(badJson.body.error.code).toBe('INVALID_EVENT');

    const badSignalId = await fails('/instances/doc-5/signals/review?signalId=no%20spaces', {
      decision: 'approve',
    });
    expect(badSignalId.status).toBe(400);
    expect(badSignalId.body.error.code).toBe('INVALID_ID');

    const badReason = await fails('/instances/doc-5/cancel', { reason: 42 });
    expect(badReason.status).toBe(400);
    expect(badReason.body.error.code).toBe('INVALID_EVENT');

    const again = await fails('/workflows/publish/instances/doc-5', { title: 'again' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('ALREADY_EXISTS');

    const after = (await get('doc-5')).body;
    expect(after).toEqual(before);
  });

  it('invalid ids, unknown routes and wrong methods', async () => {
    const badId = await fails(`/workflows/order/instances/${encodeURIComponent('no spaces!')}`, { sku: 'x' });
    expect(badId.status).toBe(400);
    expect(badId.body.error.code).toBe('INVALID_ID');
    const tooLong = await fails(`/instances/${'x'.repeat(201)}`, undefined, 'GET');
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.code).toBe('INVALID_ID');

    const noRoute = await fails('/nope');
    expect(noRoute.status).toBe(404);
    expect(noRoute.body.error.code).toBe('NO_ROUTE');
    const wrongMethod = await fails('/instances/order-1', {}, 'PUT');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.body.error.code).toBe('METHOD_NOT_ALLOWED');
  });
});
