import {
  createMemoryStore,
  defineWorkflow,
  flowControl,
  type Snapshot,
  step as stepWith,
  type WorkflowEvent,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { FlowGate } from '../src/runner/flow-gate.js';

// Writers of one instance race: each reduces the snapshot it loaded, acquires what its write
// dispatches, and saves; the loser gives back what it took after reading the instance as stored.
// That read can be older than a third writer's acquire that is still on its way to its save, so
// the loser must never free a slot the third writer holds.

const orders = defineWorkflow({
  name: 'orders',
  version: 1,
  start: 'charge',
  steps: {
    charge: { kind: 'task', handler: 'charge', concurrency: { key: 'input.customer', limit: 1 } },
  },
});

const step = (s: Snapshot | null, e: WorkflowEvent) => stepWith(orders, s, e, { kinds: [flowControl] });
const fold = (s: Snapshot, e: WorkflowEvent) => ({ snapshot: step(s, e), transitions: [] });
const need = { scope: 'orders/charge', key: 'c1', limit: 1 };

describe('flow gate: a writer that lost its race gives back only its own take', () => {
  it('a give-back read before another writer saves the same attempt does not free that writer’s slot', async () => {
    const store = createMemoryStore();
    const flow = store.flow!;
    let stored: Snapshot | null = null;
    let now = 1000;
    const woken: string[] = [];
    const gate = new FlowGate(
      flow,
      () => now,
      (ids) => woken.push(...ids),
      async () => stored,
    );

    // v1: the charge of o-1 was refused (another instance held the key), so it waits.
    const v1 = step(null, { type: 'start', at: 1000, id: 'o-1', input: { customer: 'c1' } });
    const t = v1.tasks['charge']!;
    const waiting = step(v1, {
      type: 'task.throttled',
      at: 1001,
      step: 'charge',
      attempt: t.attempt,
      key: t.idempotencyKey,
      need,
      until: 5000,
    });
    stored = waiting;

    // Writer B ticks the waiting instance: the retry dispatches the attempt, and the key is free now.
    now = 1100;
    const fromB = step(waiting, { type: 'tick', at: now });
    const b = await gate.acquire(waiting, fromB, [], fold);
    expect(b.taken).toHaveLength(1);

    // Writer C won B's race with a write that leaves the attempt waiting (a signal, say): the
    // stored version moves on and B's save fails.
    stored = { ...waiting, version: waiting.version + 1 };
    const c = stored;

    // Writer A ticks C's version: the same attempt dispatched again, and A asks for its slot.
    now = 1200;
    const fromA = step(c, { type: 'tick', at: now });
    const a = await gate.acquire(c, fromA, [], fold);

    // B gives back having read C's version (A's save has not landed yet), then A's save lands.
    gate.giveBack('o-1', b.taken);
    await new Promise((r) => setTimeout(r, 10));
    stored = a.next;
    if (!a.next.tasks['charge']) {
      // A found B's take still there and waits: B's give-back woke it, and its tick runs the charge.
      expect(woken).toContain('o-1');
      now = 1300;
      const again = await gate.acquire(a.next, step(a.next, { type: 'tick', at: now }), [], fold);
      expect(again.taken).toHaveLength(1);
      stored = again.next;
    }
    expect(stored.tasks['charge']).toBeDefined();

    // The charge runs: the key's one slot is its, so another customer-c1 instance waits.
    const other = await flow.acquire('o-2/1/charge/1#run#1', 'o-2', [need], 1400, 60_000);
    expect(other.granted).toBe(false);
  });

  it('a throttled attempt dispatched again leaves no waiter behind, though nothing runs after its save', async () => {
    const store = createMemoryStore();
    const flow = store.flow!;
    let now = 1000;
    const gate = new FlowGate(
      flow,
      () => now,
      () => {},
      async () => null,
    );
    // Another instance holds the key: o-1's charge is refused and recorded as a waiter.
    await flow.acquire('other#run#1', 'other', [need], now, 60_000);
    const v1 = step(null, { type: 'start', at: now, id: 'o-1', input: { customer: 'c1' } });
    const refused = await gate.acquire(null, v1, [], fold);
    expect(refused.next.tasks['charge']).toBeUndefined();
    expect((await flow.list({ limit: 10, now })).items[0]!.waiting).toHaveLength(1);
    // The holder ends; o-1's tick dispatches the attempt again and is granted. Its write's
    // releases after the save never happen (a Lambda that froze): no waiter is left anyway.
    await flow.release(['other#run#1'], now);
    now = 1100;
    const retried = await gate.acquire(refused.next, step(refused.next, { type: 'tick', at: now }), [], fold);
    expect(retried.taken).toHaveLength(1);
    const [counter] = (await flow.list({ limit: 10, now })).items;
    expect(counter!.waiting).toEqual([]);
    expect(counter!.holders.map((h) => h.holder)).toEqual(retried.taken);
  });
});
