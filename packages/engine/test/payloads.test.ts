import { describe, expect, it } from 'vitest';
import { createRunner, defineWorkflow, replay } from '../src/index.js';
import {
  collectPayloads,
  createMemoryPayloadStore,
  deleteInstance,
  isPayloadRef,
  offloading,
  type PayloadRef,
  payloadRefs,
  resolvePayloads,
  sha256Hex,
} from '../src/payloads/index.js';
import { createMemoryStore } from '../src/store/memory-store.js';
import { createHarness } from '../src/testing/index.js';

// Offloading in the runner: values over the threshold go to the payload store, the snapshot keeps
// a reference (with the fields a step keeps), handlers and `get` see values, conditions see `keep`.

const MB = 1024 * 1024;
const big = (n: number) => ({
  status: 'ok',
  count: n,
  rows: Array.from({ length: n }, (_, i) => `row-${i}-${'x'.repeat(40)}`),
});

const report = defineWorkflow({
  name: 'report',
  version: 1,
  start: 'fetch',
  steps: {
    fetch: { kind: 'task', handler: 'fetch', offload: { keep: ['status', 'count'] }, next: 'check' },
    check: {
      kind: 'choice',
      branches: [{ when: { '==': [{ var: 'outputs.fetch.status' }, 'ok'] }, next: 'sum' }],
      otherwise: 'bad',
    },
    sum: {
      kind: 'task',
      handler: 'sum',
      input: { rows: 'outputs.fetch.rows', count: 'outputs.fetch.count' },
    },
    bad: { kind: 'fail', error: { message: 'not ok' } },
  },
});

function setup(o: { threshold?: number; fetch?: () => unknown } = {}) {
  const store = createMemoryStore();
  const payloads = createMemoryPayloadStore();
  const seen: { sum?: unknown; outputs?: unknown; workflowInput?: unknown } = {};
  let puts = 0;
  const put = payloads.put;
  payloads.put = (...a) => {
    puts++;
    return put(...a);
  };
  const runner = createRunner({
    store,
    workflows: [report],
    payloads: offloading({ store: payloads, threshold: o.threshold ?? 64 * 1024 }),
    handlers: {
      fetch: async () => (o.fetch ?? (() => big(20_000)))(),
      sum: async ({ input, outputs, workflowInput }) => {
        seen.sum = input;
        seen.outputs = outputs;
        seen.workflowInput = workflowInput;
        const { rows } = input as { rows: string[] };
        return { rows: rows.length, last: rows[rows.length - 1] };
      },
    },
  });
  return { store, payloads, runner, seen, puts: () => puts };
}

describe('offloading in the runner', () => {
  it('refuses a payload store passed without offloading(...) with INVALID_OPTIONS naming it (not a TypeError)', () => {
    const wf = defineWorkflow({
      name: 'p',
      version: 1,
      start: 'a',
      steps: { a: { kind: 'task', handler: 'a' } },
    });
    const store = createMemoryStore();
    const make = () =>
      createRunner({
        store,
        workflows: [wf],
        handlers: { a: () => 1 },
        // @ts-expect-error the store itself, where offloading({ store }) is due
        payloads: createMemoryPayloadStore(),
      });
    expect(make).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS', message: expect.stringContaining('offloading') }),
    );
  });

  it('offloads a 1 MB output; the next step reads it; a condition reads a kept field; the snapshot stays small', async () => {
    const { store, payloads, runner, seen } = setup();
    const done = await runner.start('report', 'r-1', { region: 'eu' });
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({ rows: 20_000, last: big(20_000).rows[19_999] });
    const stored = await store.load('r-1');
    const ref = stored!.steps['fetch']!.output as PayloadRef;
    expect(isPayloadRef(ref)).toBe(true);
    expect(ref).toMatchObject({ owner: 'r-1', keep: { status: 'ok', count: 20_000 } });
    expect(ref.bytes).toBeGreaterThan(MB);
    expect(JSON.stringify(stored).length).toBeLessThan(10_000);
    expect(payloads.size).toBe(1);
    // The handler saw values: its mapped input and `outputs`.
    expect((seen.sum as { rows: string[] }).rows).toEqual(big(20_000).rows);
    expect((seen.outputs as { fetch: unknown }).fetch).toEqual(big(20_000));
    expect(seen.workflowInput).toEqual({ region: 'eu' });
  });

  it('a path into the body that is not kept reads undefined for conditions', async () => {
    const wf = defineWorkflow({
      name: 'peek',
      version: 1,
      start: 'fetch',
      steps: {
        fetch: { kind: 'task', handler: 'fetch', offload: { keep: ['count'] }, next: 'check' },
        check: {
          kind: 'choice',
          branches: [{ when: { exists: 'outputs.fetch.status' }, next: 'yes' }],
          otherwise: 'no',
        },
        yes: { kind: 'succeed' },
        no: { kind: 'fail', error: { message: 'status not kept', code: 'NOT_KEPT' } },
      },
    });
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [wf],
      payloads: offloading({ store: createMemoryPayloadStore(), threshold: 1000 }),
      handlers: { fetch: async () => big(100) },
    });
    const s = await runner.start('peek', 'p-1');
    expect(s.status).toBe('failed');
    expect(s.error?.code).toBe('NOT_KEPT');
  });

  it('keeps a value under the threshold inline, and a step with offload: false inline whatever its size', async () => {
    const { store, payloads, runner } = setup({ fetch: () => big(10) });
    await runner.start('report', 'r-small');
    expect(isPayloadRef((await store.load('r-small'))!.steps['fetch']!.output)).toBe(false);
    expect(payloads.size).toBe(0);
    const inline = defineWorkflow({
      name: 'inline',
      version: 1,
      start: 'fetch',
      steps: { fetch: { kind: 'task', handler: 'fetch', offload: false } },
    });
    const r2 = createRunner({
      store,
      workflows: [inline],
      payloads: offloading({ store: payloads, threshold: 100 }),
      handlers: { fetch: async () => big(100) },
    });
    const s = await r2.start('inline', 'i-1');
    expect(s.output).toEqual(big(100));
    expect(payloads.size).toBe(0);
  });

  it('the reference survives a store round trip and get resolves it (or not, when asked)', async () => {
    const { runner } = setup();
    await runner.start('report', 'r-2');
    const raw = await runner.get('r-2', { resolve: false });
    expect(isPayloadRef(raw!.steps['fetch']!.output)).toBe(true);
    const got = await runner.get('r-2');
    expect(got!.steps['fetch']!.output).toEqual(big(20_000));
    expect(payloadRefs(got)).toEqual([]);
  });

  it('offloads a start input and a signal payload over the threshold', async () => {
    const waits = defineWorkflow({
      name: 'waits',
      version: 1,
      start: 'go',
      steps: {
        go: { kind: 'wait', signal: 'go', next: 'use' },
        use: { kind: 'task', handler: 'use', input: { doc: 'outputs.go', seed: 'input' } },
      },
    });
    const store = createMemoryStore();
    const payloads = createMemoryPayloadStore();
    let got: unknown;
    const runner = createRunner({
      store,
      workflows: [waits],
      payloads: offloading({ store: payloads, threshold: 1000 }),
      handlers: {
        use: async ({ input }) => {
          got = input;
          return { ok: true };
        },
      },
    });
    const input = 'i'.repeat(5000);
    const waiting = await runner.start('waits', 'w-1', input);
    expect(isPayloadRef(waiting.input)).toBe(true);
    expect(isPayloadRef((await runner.get('w-1', { resolve: false }))!.input)).toBe(true);
    const doc = big(50);
    // Sent through the inbox: the event written there carries the reference already.
    await runner.send('w-1', 'go', doc);
    const [due] = await store.inbox!.claim(Date.now(), 10, ['w-1']);
    const sent = due!.sent[0]!.event as { payload?: unknown };
    expect(isPayloadRef(sent.payload)).toBe(true);
    await store.inbox!.drop('w-1', [due!.sent[0]!.seq], due!.snapshot.version);
    await runner.signal('w-1', 'go', doc);
    const s = await runner.get('w-1', { resolve: false });
    expect(s!.status).toBe('completed');
    expect(isPayloadRef(s!.steps['go']!.output)).toBe(true);
    expect(got).toEqual({ doc, seed: input });
    expect(payloads.size).toBe(2);
  });

  it('the same output retried or written twice is put once', async () => {
    const { payloads, runner, puts } = setup();
    await runner.start('report', 'r-3');
    await runner.start('report', 'r-3', undefined, { reuseFinished: true });
    expect(puts()).toBe(2);
    expect(payloads.size).toBe(1);
  });

  it('a missing payload fails the attempt with PAYLOAD_NOT_FOUND, not retried', async () => {
    const { payloads, runner } = setup();
    // Remove the body between the write of fetch's output and sum's attempt.
    const original = payloads.get.bind(payloads);
    payloads.get = async () => null;
    const s = await runner.start('report', 'r-4');
    payloads.get = original;
    expect(s.status).toBe('failed');
    expect(s.steps['sum']!.error).toMatchObject({ code: 'PAYLOAD_NOT_FOUND', retryable: false });
    expect(s.steps['sum']!.attempt).toBe(1);
  });

  it('a corrupt body is PAYLOAD_NOT_FOUND too (resolve checks the hash)', async () => {
    const { store, payloads, runner } = setup();
    await runner.start('report', 'r-5');
    const ref = (await store.load('r-5'))!.steps['fetch']!.output as PayloadRef;
    payloads.get = async () => JSON.stringify({ status: 'forged' });
    await expect(resolvePayloads(await store.load('r-5'), payloads)).rejects.toMatchObject({
      code: 'PAYLOAD_NOT_FOUND',
    });
    expect(ref.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('deleting collects the payloads; collecting removes only the unreferenced ones', async () => {
    const { store, payloads, runner } = setup();
    await runner.start('report', 'r-6');
    await runner.start('report', 'r-7');
    // An orphan: put, never referenced (a write that lost its race).
    await payloads.put('r-6', sha256Hex('"orphan"'), '"orphan"');
    expect(payloads.size).toBe(3);
    expect(await collectPayloads(store, payloads, 'r-6')).toBe(1);
    expect(payloads.size).toBe(2);
    expect((await runner.get('r-6'))!.steps['fetch']!.output).toEqual(big(20_000));
    expect(await deleteInstance(store, payloads, 'r-6')).toBe(true);
    expect(await store.load('r-6')).toBeNull();
    expect(payloads.size).toBe(1);
    expect((await payloads.list('r-7', { limit: 10 })).items).toHaveLength(1);
  });

  it('a running instance is not collected unless asked', async () => {
    const waits = defineWorkflow({
      name: 'idle',
      version: 1,
      start: 'go',
      steps: { go: { kind: 'wait', signal: 'go' } },
    });
    const store = createMemoryStore();
    const payloads = createMemoryPayloadStore();
    const runner = createRunner({
      store,
      workflows: [waits],
      handlers: {},
      payloads: offloading({ store: payloads, threshold: 10 }),
    });
    await runner.start('idle', 'x-1', 'a long enough input');
    await payloads.put('x-1', sha256Hex('"orphan"'), '"orphan"');
    expect(await collectPayloads(store, payloads, 'x-1')).toBe(0);
    expect(await collectPayloads(store, payloads, 'x-1', { running: true })).toBe(1);
    expect((await runner.get('x-1'))!.input).toBe('a long enough input');
  });

  it('refuses a requeue patch of an offloaded input; offloads large patch values', async () => {
    const wf = defineWorkflow({
      name: 'parks',
      version: 1,
      start: 'work',
      steps: { work: { kind: 'task', handler: 'work', onFailure: 'dlq' } },
    });
    const payloads = createMemoryPayloadStore();
    let fail = true;
    let seen: unknown;
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [wf],
      payloads: offloading({ store: payloads, threshold: 100 }),
      handlers: {
        work: async ({ input }) => {
          seen = input;
          if (fail) throw Object.assign(new Error('no'), { retryable: false });
          return 1;
        },
      },
    });
    expect((await runner.start('parks', 'q-1', { note: 'n'.repeat(200) })).status).toBe('dlq');
    await expect(runner.requeue('q-1', { inputPatch: { a: 1 } })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    expect((await runner.start('parks', 'q-2', { small: true })).status).toBe('dlq');
    fail = false;
    const s = await runner.requeue('q-2', { inputPatch: { doc: 'd'.repeat(500) } });
    expect(s.status).toBe('completed');
    expect(seen).toEqual({ small: true, doc: 'd'.repeat(500) });
    const raw = await runner.get('q-2', { resolve: false });
    expect(isPayloadRef((raw!.input as { doc: unknown }).doc)).toBe(true);
  });
});

describe('references in the reducer', () => {
  it('replaying events with references reproduces the snapshot, and a condition reads keep', () => {
    const h = createHarness(report).start({ region: 'eu' });
    const ref: PayloadRef = {
      $ref: 'stepfold/payload@1',
      owner: 'test-1',
      sha256: 'c'.repeat(64),
      bytes: 2 * MB,
      keep: { status: 'ok', count: 3 },
    };
    h.complete('fetch', ref as never);
    // The choice read `status` through the reference: `sum` runs, its input maps what was kept.
    const [sum] = h.dispatched('sum');
    expect(sum!.input).toEqual({ rows: undefined, count: 3 });
    expect(replay(report, h.events)).toEqual(h.snapshot);
  });
});

describe('offloading across child workflows', () => {
  it("a child's input is offloaded under the child; its output is copied under the parent", async () => {
    const { composition } = await import('../src/composition/index.js');
    const inner = defineWorkflow({
      name: 'inner',
      version: 1,
      start: 'make',
      steps: { make: { kind: 'task', handler: 'make' } },
    });
    const outer = defineWorkflow({
      name: 'outer',
      version: 1,
      start: 'call',
      steps: {
        call: { kind: 'child', workflow: 'inner', input: 'input', next: 'use' },
        use: { kind: 'task', handler: 'use', input: 'outputs.call' },
      },
    });
    const store = createMemoryStore();
    const payloads = createMemoryPayloadStore();
    let made: unknown;
    const runner = createRunner({
      store,
      workflows: [outer, inner],
      kinds: [composition],
      payloads: offloading({ store: payloads, threshold: 1000 }),
      handlers: {
        make: async ({ input }) => {
          made = input;
          return big(100);
        },
        use: async ({ input }) => (input as { rows: string[] }).rows.length,
      },
    });
    const seed = { note: 'n'.repeat(2000) };
    const s = await runner.start('outer', 'o-1', seed);
    expect(s.status).toBe('completed');
    expect(s.output).toBe(100);
    expect(made).toEqual(seed);
    const childId = (await store.load('o-1'))!.steps['call']!.child!.id;
    const child = await runner.get(childId, { resolve: false });
    expect((child!.input as PayloadRef).owner).toBe(childId);
    const parentRef = (await store.load('o-1'))!.steps['call']!.output as PayloadRef;
    expect(parentRef.owner).toBe('o-1');
    // Deleting the child leaves the parent whole.
    await deleteInstance(store, payloads, childId);
    expect((await runner.get('o-1'))!.steps['call']!.output).toEqual(big(100));
  });
});
