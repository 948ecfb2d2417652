import {
  createMemoryStore,
  createRunner,
  createWorker,
  isValidId,
  type MemoryStore,
  parseWakePayload,
  type Snapshot,
  type WakeListener,
  type WakeNotice,
  type Worker,
  workflow,
} from '@stepfold/engine';
import fc from 'fast-check';
import type { Target } from '../driver.js';
import { describe, expect } from '../guard.js';
import { hostileSmall, type Mutation, mutate, mutationsArb, PROTO_JSON, textDamage } from '../hostile.js';

// Wake notices: anyone who can send on a store's channel can send anything. parseWakePayload must
// answer null or a well-formed notice for any text, and a worker given a forged notice must write
// nothing unless the notice is exactly what is stored.

/** The waiting instance the notices are about, as a store holds it. */
const waiting = workflow('noticed', 1).wait('w', { signal: 'go' }).task('t', { handler: 'work' }).build();

/** A notice's payload as stores write it: `{"at","w","i","s","p","b"}`. */
function wirePayload(s: Snapshot, at: number): Record<string, unknown> {
  return {
    at,
    w: s.workflow.name,
    i: s.id,
    s,
    p: [{ n: 1, e: { type: 'signal', at, name: 'go', payload: { n: 1 } } }],
    b: 1,
  };
}

async function sampleSnapshot(): Promise<Snapshot> {
  const store = createMemoryStore();
  const runner = createRunner({ store, workflows: [waiting], handlers: { work: async () => 1 } });
  return runner.start('noticed', 'n-1', { a: 1 });
}

const payloadText = (sample: Snapshot) =>
  fc.oneof(
    { weight: 2, arbitrary: fc.string({ maxLength: 60 }) },
    { weight: 2, arbitrary: fc.json({ maxDepth: 3 }) },
    {
      weight: 6,
      arbitrary: fc
        .record({ at: fc.oneof(fc.integer(), fc.double()), mutations: mutationsArb(0, 4) })
        .map(({ at, mutations }) => textOf(mutate(wirePayload(sample, at), mutations))),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.integer(), textDamage)
        .map(([at, damage]) => damage(JSON.stringify(wirePayload(sample, at)))),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        PROTO_JSON,
        '{"at":1,"__proto__":{"at":2}}',
        '{"at":1,"i":"n-1","s":{"id":"n-1","__proto__":{"x":1}}}',
      ),
    },
  );

function textOf(v: unknown): string {
  try {
    return JSON.stringify(v) ?? 'undefined';
  } catch {
    return '{';
  }
}

/** The shape rules of a parsed notice. */
function checkNotice(n: WakeNotice | null): void {
  if (n === null) return;
  expect(typeof n.at === 'number' && Number.isFinite(n.at), 'a notice without a finite at');
  if (n.workflow !== undefined) expect(typeof n.workflow === 'string', 'a notice with a non-string workflow');
  if (n.id !== undefined) expect(isValidId(n.id), 'a notice with an invalid id');
  if (n.snapshot !== undefined)
    expect(n.id !== undefined && n.snapshot.id === n.id, 'a notice kept a snapshot of another id');
  if (n.sent !== undefined) {
    expect(Array.isArray(n.sent), 'sent is not a list');
    for (const p of n.sent) expect(Number.isSafeInteger(p.seq), 'a sent signal without an integer seq');
  }
  if (n.busy !== undefined) expect(n.busy === true, 'busy is not true');
}

export const notices: Target<string | undefined, Snapshot> = {
  name: 'notices',
  runs: 15_000,
  open: sampleSnapshot,
  arbitrary(sample) {
    return fc.oneof(
      { weight: 30, arbitrary: payloadText(sample) },
      { weight: 1, arbitrary: fc.constant(undefined) },
    );
  },
  check(text) {
    let n: WakeNotice | null;
    try {
      n = parseWakePayload(text);
    } catch (e) {
      throw new Error(`parseWakePayload threw: ${describe(e)}`);
    }
    checkNotice(n);
  },
};

interface WorkerContext {
  store: MemoryStore;
  worker: Worker;
  listener: () => WakeListener;
  next: number;
}

/** A forged notice: the stored instance's own, maybe posing as a hand-off of a task, then mutated. */
type Forged = { at: number; handoff: boolean; mutations: Mutation[] };

/** The snapshot with a task queued for any worker, due at `at`: what a real hand-off notice carries. */
function posingAsHandoff(s: Snapshot, at: number): Snapshot {
  const task = {
    step: 't',
    phase: 'run' as const,
    attempt: 1,
    idempotencyKey: `${s.id}/1/t/1`,
    handler: 'work',
    deadline: at,
    queued: true,
    dispatchedAt: s.updatedAt,
    dispatchVersion: s.version,
  };
  return { ...s, tasks: { t: task }, wakeAt: at };
}

export const noticeWorker: Target<Forged, WorkerContext> = {
  name: 'notice-worker',
  runs: 1_500,
  budgetMs: 2_000,
  async open() {
    const store = createMemoryStore();
    const runner = createRunner({ store, workflows: [waiting], handlers: { work: async () => 1 } });
    let heard: WakeListener | undefined;
    const worker = createWorker({
      runner,
      // Our own channel: every notice on it is forged by the fuzzer.
      wakes: {
        subscribe: async (l) => {
          heard = l;
          return { close: async () => {} };
        },
      },
      standbyMs: 0,
      poll: { minMs: 5, maxMs: 50, maxWithWakesMs: 50 },
    });
    await worker.start();
    return { store, worker, listener: () => heard!, next: 0 };
  },
  async close({ worker }) {
    await worker.stop({ graceMs: 100, abortMs: 100 });
    if (process.env['FUZZ_DEBUG']) console.log(worker.stats);
  },
  arbitrary() {
    return fc.record({
      at: fc.oneof(fc.constant(0), fc.integer(), fc.constant(Date.now())),
      handoff: fc.boolean(),
      mutations: mutationsArb(0, 3, hostileSmall),
    });
  },
  async check({ at, handoff, mutations }, c) {
    const id = `n-${++c.next}`;
    const runner = createRunner({ store: c.store, workflows: [waiting], handlers: { work: async () => 1 } });
    const s = await runner.start('noticed', id, { a: 1 });
    const stored = JSON.stringify(await c.store.load(id));
    const posed = handoff ? posingAsHandoff(s, at) : s;
    const forged = parseWakePayload(textOf(mutate(wirePayload(posed, at), mutations)));
    if (forged === null) return;
    // The instance waits for a signal nobody sent: no notice about it can be a reason to write.
    c.listener().wake(forged);
    await new Promise((r) => setTimeout(r, 3));
    await c.worker.idle();
    const after = JSON.stringify(await c.store.load(id));
    expect(after === stored, () => `a forged notice changed ${id}: ${after.slice(0, 300)}`);
    await c.store.delete(id);
  },
};
