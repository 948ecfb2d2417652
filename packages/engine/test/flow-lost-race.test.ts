import { createMemoryStore, createRunner, flowControl, type Store, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// Two writers of one instance that reduced the same version (here: both take its queued attempt)
// both take the attempt's holder (one holder per attempt, and the store grants a holder that holds
// already again). The one whose save
// loses must not give back the slot: the winner saved that attempt and runs it. Found by the
// per-customer scenario with kills (packages/node/test/flow-concurrency-kills.test.ts), where a
// released slot's tick and a worker's due claim of one waiter met, and two charges of one
// customer ran at once.

const perCustomer = workflow('race-customer', 1)
  .input<{ customer: string }>()
  .task('work', { handler: 'work', concurrency: { key: 'input.customer', limit: 1 } })
  .build();
const need = { scope: 'race-customer/work', key: 'acme', limit: 1 };

describe('a write that lost the race for an attempt', () => {
  it('keeps the slot of the attempt the winning writer saved and runs', async () => {
    const store = createMemoryStore();
    const flow = store.flow!;
    // Handed off: the attempt waits, queued, for a runner to take it (and acme's slot with it).
    const producer = createRunner({ store, workflows: [perCustomer], kinds: [flowControl], execute: false });
    const handedOff = await producer.start('race-customer', 'w', { customer: 'acme' });
    expect(handedOff.tasks['work']?.queued).toBe(true);

    let letGo!: () => void;
    const gate = new Promise<void>((r) => (letGo = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const handlers = {
      work: async () => {
        started();
        await gate;
        return 1;
      },
    };
    const a = createRunner({ store, workflows: [perCustomer], kinds: [flowControl], handlers });
    // B reads the instance before A's write and writes after it: its save loses the race.
    const late: Store = Object.assign(Object.create(store) as Store, {
      async load(id: string) {
        const s = await store.load(id);
        await running;
        return s;
      },
    });
    const b = createRunner({ store: late, workflows: [perCustomer], kinds: [flowControl], handlers });
    const bTick = b.tick('w');
    const aTick = a.tick('w');
    await running;
    await bTick;
    expect(b.stats.conflicts).toBeGreaterThan(0);
    // The give-back (after the lost save) has had its turn.
    await new Promise((r) => setTimeout(r, 20));

    // A's handler still runs: acme's slot is still taken.
    const probe = await flow.acquire('probe', 'p', [need], Date.now(), Date.now() + 1000);
    expect(probe.granted).toBe(false);

    letGo();
    await aTick;
    await flow.release(['probe'], Date.now());
    expect((await store.load('w'))?.status).toBe('completed');
  });
});
