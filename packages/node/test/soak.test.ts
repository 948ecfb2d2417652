import type { Snapshot } from '@stepfold/engine';
import { createHarness } from '@stepfold/engine/testing';
import { describe, expect, it } from 'vitest';
import { runSoak } from './soak/driver.mjs';
import { fleetStats, giveBacks, latency, percentile } from './soak/metrics.mjs';
import { checkLog, checkSnapshots } from './soak/oracles.mjs';
import { design, order } from './soak/workflows.mjs';

// The AWS SDK warns once per process on Node 20 about its future Node 22 floor: noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// Scenario 17, short: 60 workflows per store (retries, compensation, parallel branches, a durable
// sleep, signals and cancels) while worker processes are SIGKILLed about every second, and once on
// PostgreSQL with its server stopped and started mid-run, and once on PostgreSQL with the soak's
// processDue-loop workers. `pnpm soak` runs the long version, which measures latency.
const CASES = [
  { kind: 'postgres', restart: true, mode: 'worker' },
  { kind: 'postgres', restart: false, mode: 'loop' },
  { kind: 'redis', restart: false, mode: 'worker' },
  { kind: 'mongo', restart: false, mode: 'worker' },
  { kind: 'dynamo', restart: false, mode: 'worker' },
] as const;

describe('soak: SIGKILLed worker processes', () => {
  for (const { kind, restart, mode } of CASES) {
    const what = `${kind}${mode === 'loop' ? ' (processDue loop)' : ''}${restart ? ', server restarted mid-run' : ''}`;
    it(`${what}: every instance ends as designed, nothing completes twice, nothing is left dispatched`, async () => {
      const result = await runSoak({
        kind,
        mode,
        instances: 60,
        budgetMs: 90_000,
        restart,
        // These check the oracles, not latency (pnpm soak measures that on the stores' defaults):
        // 3 s claims bring a killed worker's instances back within the short run, and FerretDB,
        // saturated, can take seconds to write a result, so its deadlines are 10 s.
        claimMs: 3000,
        timeoutMs: kind === 'mongo' ? 10_000 : 2000,
        // Starts spread over 4 s, kills every 0.5-1.2 s: a few kills land while work is in flight.
        startsPerSecond: 15,
        killEveryMs: [500, 1200],
      });
      expect(result.violations).toEqual([]);
      expect(result.kills).toBeGreaterThan(0);
      expect(result.restarts).toBe(restart ? 1 : 0);
    });
  }
});

describe('soak metrics', () => {
  it('latency runs from createdAt to the final updatedAt; one not final counts up to the end', () => {
    const s = (status: string, createdAt: number, updatedAt: number) =>
      ({ status, createdAt, updatedAt }) as unknown as Snapshot;
    const l = latency(
      [s('completed', 1000, 1500), s('failed', 1000, 4000), s('waiting', 2000, 2100), null],
      9000,
    );
    expect(l).toEqual({ n: 3, p50: 3000, p99: 7000, max: 7000, notFinal: 1 });
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.5)).toBe(5);
    expect(percentile([], 0.99)).toBeNaN();
  });

  it("give-backs count per task attempt; fleet counters take each process's last line", () => {
    expect(
      giveBacks([
        ['R', 'o-1', 'o-1/1/charge/1', 'run', '1', 'w0-11'],
        ['R', 'o-1', 'o-1/1/charge/1', 'run', '1', 'w1-12'],
        ['R', 'o-1', 'o-1/1/charge/1', 'run', '2', 'w1-12'],
        ['H', 'o-1', 'charge', 'run', '2', 'o-1/1/charge/1', 'ok', 'w0-11'],
      ]),
    ).toEqual({ total: 3, maxPerAttempt: 2 });
    expect(
      fleetStats([
        ['W', 'w0-11', '3', '1', '0', '10', '5'],
        ['W', 'w0-11', '7', '2', '1', '20', '9'],
        ['W', 'w1-12', '4', '0', '0', '15', '8'],
      ]),
    ).toEqual({ conflicts: 11, lostTakes: 2, released: 1, incarnations: 2 });
  });
});

describe('soak oracles', () => {
  it('report a double step completion, a double compensation and an undo of work never done', () => {
    const { violations, reruns } = checkLog([
      ['S', 'o-1', '1', 'charge', '1', '5', 'w0-11'],
      ['S', 'o-1', '1', 'charge', '1', '7', 'w1-12'],
      ['K', 'o-1', '1', 'reserve', '9', 'w0-11'],
      ['K', 'o-1', '1', 'reserve', '10', 'driver'],
      ['H', 'o-1', 'charge', 'run', '1', 'o-1/1/charge/1', 'ok', 'w0-11'],
      ['H', 'o-1', 'charge', 'run', '2', 'o-1/1/charge/1', 'ok', 'w1-12'],
      ['H', 'o-1', 'reserve', 'compensate', '1', 'o-1/1/reserve/1', 'ok', 'w0-11'],
    ]);
    expect(violations).toEqual([
      'step completed 2 times: o-1 run 1 step charge #1 (v5 by w0-11; v7 by w1-12)',
      'compensation completed 2 times: o-1 run 1 undo reserve (v9 by w0-11; v10 by driver)',
      'o-1: compensation of reserve (attempt 1) ran, but its forward step never succeeded (key o-1/1/reserve/1)',
    ]);
    expect(reruns).toBe(1); // charge ran twice: at-least-once, not a violation
  });

  it('report a wrong status, work left dispatched and a missing compensation', () => {
    const h = createHarness(order).start({ fate: 'fail', failAt: 'ship' });
    const want = design(6); // soak-order failing at ship: failed, charge and reserve compensated
    expect(want.input).toEqual({ fate: 'fail', failAt: 'ship' });
    expect(checkSnapshots(new Map([['x', want]]), new Map([['x', { ...h.snapshot, id: 'x' }]]))).toEqual([
      'x: status running, designed failed',
      expect.stringMatching(/^x: left dispatched: run:reserve#1 \(deadline /),
      expect.stringMatching(/^x: wakeAt \d+ on a final snapshot$/),
      'x: compensated [], designed [charge,reserve]',
    ]);
  });
});
