import { fleetFromEnv, runWorkers } from '@stepfold/node';
import { describe, expect, it } from 'vitest';

const MODULE = new URL('./fixtures/tiny-worker.mjs', import.meta.url);

/** Resolves once `pred` holds, checking every 20 ms (fails the test after 20 s). */
async function until(what: string, pred: () => boolean): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (pred()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('runWorkers', () => {
  it('restarts a killed worker at once, and stop drains every child', async () => {
    const exits: Array<{ index: number; code: number | null; signal: string | null; expected: boolean }> = [];
    const restarts: Array<{ index: number; ms: number }> = [];
    const fleet = runWorkers({
      module: MODULE,
      processes: 2,
      handleSignals: false,
      on: {
        exit: (index, _pid, code, signal, expected) => exits.push({ index, code, signal, expected }),
        restart: (index, ms) => restarts.push({ index, ms }),
      },
    });
    await until('two children', () => fleet.pids.every((p) => p > 0));
    // Let the children start their workers (serveWorker tells the supervisor).
    await new Promise((r) => setTimeout(r, 1500));
    const first = fleet.pids[0]!;
    process.kill(first, 'SIGKILL');
    await until('a new child 0', () => fleet.pids[0]! > 0 && fleet.pids[0] !== first);
    expect(restarts).toEqual([{ index: 0, ms: 100 }]);
    expect(exits).toEqual([{ index: 0, code: null, signal: 'SIGKILL', expected: false }]);
    await new Promise((r) => setTimeout(r, 1500));
    await fleet.stop();
    await fleet.done;
    // SIGTERM: each drained its worker and exited 0.
    expect(exits.slice(1).sort((a, b) => a.index - b.index)).toEqual([
      { index: 0, code: 0, signal: null, expected: true },
      { index: 1, code: 0, signal: null, expected: true },
    ]);
  });

  it('a program that cannot start is restarted after longer and longer pauses', async () => {
    const restarts: number[] = [];
    const fleet = runWorkers({
      module: MODULE,
      processes: 1,
      handleSignals: false,
      env: { TINY_FAIL: '1' },
      on: { restart: (_i, ms) => restarts.push(ms) },
    });
    await until('three restarts', () => restarts.length >= 3);
    await fleet.stop();
    expect(restarts.slice(0, 3)).toEqual([100, 200, 400]);
  });

  it('fleetFromEnv reads the place runWorkers gives each child, and nothing outside a fleet', () => {
    expect(fleetFromEnv({ STEPFOLD_WORKER_INDEX: '2', STEPFOLD_WORKERS: '3' })).toEqual({
      index: 2,
      size: 3,
    });
    expect(fleetFromEnv({})).toBeUndefined();
    expect(fleetFromEnv({ STEPFOLD_WORKER_INDEX: '0' })).toBeUndefined();
    expect(fleetFromEnv({ STEPFOLD_WORKER_INDEX: '3', STEPFOLD_WORKERS: '3' })).toBeUndefined();
    expect(fleetFromEnv({ STEPFOLD_WORKER_INDEX: 'x', STEPFOLD_WORKERS: '3' })).toBeUndefined();
  });
});
