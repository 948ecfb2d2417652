import { createRunner, flowControl } from '@stepfold/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { flowWorkflows } from './fixtures/flow-worker.mjs';
import { allCompleted, inBatches, overlaps, type Run, runsOf, startFlowFleet } from './flow-fleet.js';
import { openTestStore, type TestStore } from './support/test-stores.js';

// One charge at a time per customer holds across worker processes that die. Orders of 20
// customers (`concurrency: { key: 'input.customerId', limit: 1 }`) run on three worker processes
// while one of them is SIGKILLed every few seconds and started again. The handlers report each
// run's start and end; a killed run ends at its process's kill. Asserted: no two runs of one
// customer overlap, every order completes, and the slot a killed run held is taken again within
// its lease (the slot lapses with nobody renewing it) plus the pace of the workers' polls.

const ORDERS = 1000;
const CUSTOMERS = 20;
const WORKERS = 3;
const SLOTS = 8;
const LEASE_MS = 3000;
const WORK_MS = 100;
// A worker polls at least every third of the lease, and a lapsed lease is indexed to the second.
const POLL_SLACK_MS = Math.floor(LEASE_MS / 3) + 1000 + 1500;

const opened: TestStore[] = [];
afterAll(async () => {
  for (const s of opened) await s.drop();
});

describe('per-key concurrency across SIGKILLed worker processes', () => {
  for (const name of ['postgres', 'redis'] as const) {
    it(`${name}: never two charges of one customer at once, every order completes, a killed slot is taken within its lease`, async () => {
      const db = openTestStore(name, `flowkill_${name}_${process.pid}`);
      opened.push(db);
      await db.store.setup();
      const began = Date.now();
      const fleet = await startFlowFleet({
        store: db,
        workers: WORKERS,
        slots: SLOTS,
        leaseMs: LEASE_MS,
        workMs: WORK_MS,
      });
      let killing = true;
      try {
        const producer = createRunner({
          store: db.store,
          workflows: flowWorkflows,
          kinds: [flowControl],
          execute: false,
          taskLeaseMs: LEASE_MS,
        });
        // Kills at random from the first order on: a worker every 0.5–1.5 s for the first five (on
        // PostgreSQL the orders may all be through in 15 s), then every 1–2.5 s, twelve at most (each
        // kill holds its slots until their lease lapses, so more only make the run longer); never
        // the last one up, each started again 0.3 s later.
        const killer = (async () => {
          while (killing && fleet.kills.length < 12) {
            const pause = fleet.kills.length < 5 ? 500 + Math.random() * 1000 : 1000 + Math.random() * 1500;
            await new Promise((r) => setTimeout(r, pause));
            if (killing) fleet.killOne(300);
          }
        })();
        await inBatches(ORDERS, 50, (n) =>
          producer.start('flow-serial-order', `order-${n}`, { customerId: `c-${n % CUSTOMERS}` }),
        );
        // Kills stop once most orders are through, so the rest drain on live workers.
        const drained = allCompleted(db.store, 'flow-serial-order', ORDERS, 150_000);
        await Promise.race([
          drained,
          (async () => {
            while (fleet.ledger.filter((e) => e.ledger === 'end').length < ORDERS * 0.8 && killing)
              await new Promise((r) => setTimeout(r, 200));
          })(),
        ]);
        killing = false;
        await killer;
        await drained;
      } finally {
        killing = false;
        await fleet.stop();
      }
      const seconds = (Date.now() - began) / 1000;

      const runs = runsOf(fleet.ledger, fleet.kills);
      const clashes = overlaps(runs);
      const killed = runs.filter((r) => r.killed);
      // For each run a kill ended, the next run of its customer: its slot taken again.
      const retaken = killed.map((k) => {
        const next = runs
          .filter((r) => r.key === k.key && r.start >= k.end)
          .reduce((a, b) => (a === undefined || b.start < a ? b.start : a), undefined as number | undefined);
        return (next ?? Number.POSITIVE_INFINITY) - k.end;
      });
      console.log(
        `${name}: ${ORDERS} orders, ${fleet.kills.length} kills (${killed.length} runs killed), ` +
          `slot retaken after a kill in at most ${Math.max(0, ...retaken)} ms, ${runs.length} runs, ${seconds.toFixed(1)} s`,
      );
      expect(fleet.kills.length).toBeGreaterThanOrEqual(5);
      const run = (r: Run) =>
        `${r.id}#${r.attempt} in ${r.pid} ${r.start}..${r.end}${r.killed ? ' (killed)' : ''}`;
      expect(clashes.map(([a, b]) => `${a.key}: ${run(a)} and ${run(b)}`)).toEqual([]);
      // Every order ran to its end at least once (a killed run is run again).
      const ended = new Set(fleet.ledger.flatMap((e) => (e.ledger === 'end' ? [e.id] : [])));
      expect(ended.size).toBe(ORDERS);
      for (const ms of retaken) expect(ms).toBeLessThanOrEqual(LEASE_MS + POLL_SLACK_MS);
    }, 200_000);
  }
});
