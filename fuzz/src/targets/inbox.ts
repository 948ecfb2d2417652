import {
  createMemoryStore,
  createRunner,
  createWorker,
  type InboxSendOutcome,
  type MemoryStore,
  SENT_CLAIM_AFTER_MS,
  type Snapshot,
  step,
  type Worker,
  type WorkflowEvent,
  workflow,
} from '@stepfold/engine';
import fc from 'fast-check';
import type { Target } from '../driver.js';
import { expect, typedOrValue } from '../guard.js';
import { hostileJson, hostileSmall, type Mutation, mutate, mutationsArb, protoObject } from '../hostile.js';
import { checkSnapshotOut } from './definitions.js';

// Inbox rows: signals sent to an instance's inbox are untrusted JSON until the reducer checks
// them. Hostile ones go in through `store.inbox.send`, a worker takes them (from the wake notice or
// its inbox lane): each is applied or refused, nothing crashes, and the inbox ends empty.

const inboxed = workflow('inboxed', 1, { limits: { inbox: 5 } })
  .wait('w', { signal: 'go' })
  .wait('more', { signal: 'more', timeoutMs: 60_000 })
  .task('t', { handler: 'work' })
  .build();

interface InboxContext {
  store: MemoryStore;
  worker: Worker;
  next: number;
  /** The worker's clock runs ahead of the wall by this much: moved on past each input's grace. */
  skew: { ms: number };
  clock(): number;
}

/** One row: a valid signal mutated, or loose parts. */
type Row = { base: number; mutations: Mutation[] } | { loose: Record<string, unknown> };

const validRow = (base: number, at: number): WorkflowEvent =>
  [
    { type: 'signal', at, name: 'go', payload: { n: 1 }, id: `s-${at}` },
    { type: 'signal', at, name: 'more', payload: protoObject() },
    { type: 'signal', at, name: 'go' },
  ][base % 3] as WorkflowEvent;

const rowArb: fc.Arbitrary<Row> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ base: fc.nat(2), mutations: mutationsArb(0, 3, hostileSmall) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      loose: fc.record(
        {
          type: fc.constantFrom('signal', 'tick', 'cancel', 'task.completed', 'requeue', 'nope'),
          name: fc.oneof(fc.constantFrom('go', 'more', 'other'), hostileSmall),
          at: fc.oneof(fc.nat(), hostileSmall),
          id: hostileSmall,
          payload: hostileJson,
          step: fc.constantFrom('t', 'w'),
          attempt: fc.constantFrom(1, 2),
        },
        { requiredKeys: ['type'] },
      ),
    }),
  },
);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const inbox: Target<Row[], InboxContext> = {
  name: 'inbox',
  runs: 1_500,
  budgetMs: 4_000,
  async open() {
    const store = createMemoryStore();
    const skew = { ms: 0 };
    const clock = () => Date.now() + skew.ms;
    const runner = createRunner({ store, workflows: [inboxed], handlers: { work: async () => 1 }, clock });
    const debug = process.env['FUZZ_DEBUG'] !== undefined;
    const worker = createWorker({
      runner,
      clock,
      standbyMs: 0,
      poll: { minMs: 5, maxMs: 50, maxWithWakesMs: 50 },
      ...(debug
        ? {
            on: {
              error: (e, where) => console.log(Date.now() % 100_000, 'error', where, String(e).slice(0, 100)),
              claimed: (ids, lane) => ids.length && console.log(Date.now() % 100_000, 'claimed', ids, lane),
              wake: (h) =>
                console.log(
                  Date.now() % 100_000,
                  'wake',
                  h.id,
                  h.at,
                  h.sent?.map((p) => JSON.stringify(p.event).slice(0, 80)),
                ),
            },
          }
        : {}),
    });
    await worker.start();
    return { store, worker, next: 0, skew, clock };
  },
  async close({ worker }) {
    await worker.stop({ graceMs: 100, abortMs: 100 });
  },
  arbitrary() {
    return fc.array(rowArb, { minLength: 1, maxLength: 3 });
  },
  async check(rows, c) {
    const id = `i-${++c.next}`;
    const runner = createRunner({
      store: c.store,
      workflows: [inboxed],
      handlers: { work: async () => 1 },
      clock: c.clock,
    });
    const s = await runner.start('inboxed', id, {});
    const accept = [`${s.workflow.name}@${s.workflow.version}@${s.workflow.hash}`];
    const now = c.clock();
    const texts: string[] = [];
    for (const row of rows) {
      const event = 'loose' in row ? row.loose : mutate(validRow(row.base, now), row.mutations);
      // The store's contract takes an event object; what is inside it is the hostile part.
      if (typeof event !== 'object' || event === null || Array.isArray(event)) continue;
      texts.push(JSON.stringify(event)?.slice(0, 200) ?? '?');
      const sent = await typedOrValueAsync(() => c.store.inbox!.send(id, event as WorkflowEvent, accept));
      if (sent !== true) continue;
    }
    // Past the grace a notice gets: what the notice path left is the inbox lane's now.
    c.skew.ms += SENT_CLAIM_AFTER_MS + 1;
    c.worker.nudge();
    // Drained: every row applied or refused (the worker drops refusals that will not change).
    for (let i = 0; ; i++) {
      const due = await c.store.inbox!.claim(Date.now(), 10, [id]);
      if (!due.length || due.every((d) => d.sent.length === 0)) break;
      expect(
        i < 600,
        () =>
          `the inbox of ${id} was not drained: ${JSON.stringify(due[0]?.sent).slice(0, 300)} (sent: ${texts.join(' ')})`,
      );
      await sleep(5);
    }
    const after = (await c.store.load(id)) as Snapshot;
    checkSnapshotOut(inboxed, after, 'inbox', false);
    typedOrValue(
      () => step(inboxed, JSON.parse(JSON.stringify(after)), { type: 'tick', at: after.updatedAt }),
      'reload',
    );
    await c.store.delete(id);
  },
};

async function typedOrValueAsync(fn: () => Promise<InboxSendOutcome>): Promise<InboxSendOutcome> {
  try {
    return await fn();
  } catch (e) {
    expect((e as { code?: unknown }).code !== undefined, () => `inbox.send threw untyped: ${String(e)}`);
    return false;
  }
}
