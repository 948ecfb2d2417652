import { describe, expect, it } from 'vitest';
import { createRunner, workflow } from '../../src/index.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import {
  DEFAULT_CLAIM_LEASE_MS,
  DEFAULT_STANDBY_MS,
  resolveWorkerOptions,
} from '../../src/worker/options.js';

const wf = workflow('w', 1).task('t', { handler: 't' }).build();
const runner = createRunner({ store: createMemoryStore(), workflows: [wf], handlers: { t: () => null } });

describe('resolveWorkerOptions', () => {
  it('fills every default once', () => {
    const o = resolveWorkerOptions({ runner });
    expect(o).toMatchObject({
      concurrency: 10,
      workflowConcurrency: {},
      pace: { minMs: 50, maxMs: 5_000, maxWithWakesMs: 30_000, factor: 2, jitter: 0.1, leaseCapMs: 3_333 },
      lanes: 'workflow',
      handoffSnapshots: true,
      startMarginMs: 1_000,
      claimLeaseMs: DEFAULT_CLAIM_LEASE_MS,
      standbyMs: DEFAULT_STANDBY_MS,
      skipMs: 1_000,
      graceMs: 30_000,
      abortMs: 5_000,
      customClock: false,
      fleet: undefined,
    });
    expect(o.wakes).toBe(runner.store.wakes);
    expect(o.outage).toMatchObject({ firstMs: 100, maxMs: 5_000, jitter: 0.1 });
  });

  it('keeps what the user gave; wakes: false polls only', () => {
    const clock = () => 42;
    const o = resolveWorkerOptions({
      runner,
      concurrency: 3,
      wakes: false,
      handoffSnapshots: false,
      fleet: { index: 1, size: 2 },
      shutdown: { graceMs: 0 },
      clock,
    });
    expect(o).toMatchObject({ concurrency: 3, wakes: undefined, handoffSnapshots: false, graceMs: 0 });
    expect(o.fleet).toEqual({ index: 1, size: 2 });
    expect(o.customClock).toBe(true);
    expect(o.clock()).toBe(42);
  });

  it.each([
    [{ concurrency: 0 }, /concurrency must be an integer of at least 1/],
    [{ concurrency: 1.5 }, /concurrency/],
    [{ workflowConcurrency: { w: 0 } }, /workflowConcurrency\.w/],
    [{ claimLeaseMs: 0 }, /claimLeaseMs/],
    [{ standbyMs: -1 }, /standbyMs/],
    [{ poll: { minMs: 0 } }, /poll\.minMs/],
    [{ poll: { jitter: 1 } }, /poll\.jitter/],
    [{ fleet: { index: 2, size: 2 } }, /fleet/],
    [{ shutdown: { abortMs: Number.NaN } }, /shutdown\.abortMs/],
  ])('refuses %j with a RangeError naming the option', (bad, message) => {
    expect(() => resolveWorkerOptions({ runner, ...bad })).toThrow(message);
    expect(() => resolveWorkerOptions({ runner, ...bad })).toThrow(RangeError);
  });
});
