import { createRunner, flowControl } from '@stepfold/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { flowWorkflows } from './fixtures/flow-worker.mjs';
import { inBatches, startFlowFleet, startsOf } from './flow-fleet.js';
import { openTestStore, type TestStore } from './support/test-stores.js';

// A tenant's flood does not hold back another tenant, across worker processes: the store's due
// order takes turns by fairness key, whichever process asks. Tenant A enqueues 1,000 jobs
// (`fairness: { key: 'input.tenant' }`), then tenant B one; B's job must start within the next
// (workers × slots) starts of the ledger: at most every slot already taken or claimed, then B's.

const WORKERS = 3;
const SLOTS = 4;
const FLOOD = 1000;

const opened: TestStore[] = [];
afterAll(async () => {
  for (const s of opened) await s.drop();
});

describe('fairness across worker processes', () => {
  for (const name of ['postgres', 'redis'] as const) {
    it(`${name}: one job of a light tenant starts within workers × slots starts of a 1,000-job flood`, async () => {
      const db = openTestStore(name, `flowfair_${name}_${process.pid}`);
      opened.push(db);
      await db.store.setup();
      const fleet = await startFlowFleet({
        store: db,
        workers: WORKERS,
        slots: SLOTS,
        leaseMs: 10_000,
        workMs: 300,
      });
      let asked = 0;
      try {
        const producer = createRunner({
          store: db.store,
          workflows: flowWorkflows,
          kinds: [flowControl],
          execute: false,
        });
        await inBatches(FLOOD, 25, (n) => producer.start('flow-fair-job', `a-${n}`, { tenant: 'a' }));
        asked = Date.now();
        await producer.start('flow-fair-job', 'b-0', { tenant: 'b' });
        const deadline = Date.now() + 20_000;
        while (!startsOf(fleet.ledger).some((e) => e.id === 'b-0') && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 50));
      } finally {
        await fleet.stop();
      }
      const after = startsOf(fleet.ledger)
        .filter((e) => e.at >= asked)
        .sort((x, y) => x.at - y.at);
      const position = after.findIndex((e) => e.id === 'b-0') + 1;
      const backlog = FLOOD - startsOf(fleet.ledger).filter((e) => e.key === 'a' && e.at < asked).length;
      console.log(
        `${name}: b's job was start ${position} after it was enqueued (a's backlog then: ${backlog})`,
      );
      // A's flood was still mostly waiting, so B had all of it to wait behind.
      expect(backlog).toBeGreaterThan(WORKERS * SLOTS * 10);
      expect(position).toBeGreaterThan(0);
      expect(position).toBeLessThanOrEqual(WORKERS * SLOTS);
    }, 120_000);
  }
});
