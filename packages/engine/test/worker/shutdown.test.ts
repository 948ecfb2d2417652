import { describe, expect, it } from 'vitest';
import type { TaskJob } from '../../src/runner/port.js';
import { drainPool } from '../../src/worker/shutdown.js';
import { TaskPool } from '../../src/worker/task-pool.js';

/** A job whose run waits for `hold` (or its abort), recording what happened to it. */
function job(name: string, log: string[], hold: Promise<void>, onAbort = true): TaskJob {
  let aborted: () => void = () => {};
  return {
    instanceId: name,
    workflow: 'w',
    task: { step: name, deadline: Date.now() + 60_000 } as TaskJob['task'],
    async run() {
      log.push(`run ${name}`);
      await Promise.race([hold, new Promise<void>((r) => (aborted = r))]);
      return 'completed';
    },
    drop: () => log.push(`drop ${name}`),
    async release() {
      log.push(`release ${name}`);
    },
    abort: () => {
      log.push(`abort ${name}`);
      if (onAbort) aborted();
    },
  };
}

describe('drainPool', () => {
  it('gives waiting jobs back at once, lets running ones finish within the grace', async () => {
    const log: string[] = [];
    const pool = new TaskPool(1, {}, 0, Date.now, { start() {}, end() {}, freed() {} });
    let finish: () => void = () => {};
    const hold = new Promise<void>((r) => (finish = r));
    pool.submit(job('a', log, hold));
    pool.submit(job('b', log, hold));
    setTimeout(finish, 20);
    expect(await drainPool(pool, 1_000, 1_000)).toBe(0);
    expect(log).toEqual(['run a', 'release b']);
    pool.submit(job('c', log, hold)); // closed: given back, never run
    await pool.released();
    expect(log).toEqual(['run a', 'release b', 'release c']);
  });

  it('aborts handlers still running after the grace and says how many', async () => {
    const log: string[] = [];
    const pool = new TaskPool(2, {}, 0, Date.now, { start() {}, end() {}, freed() {} });
    const never = new Promise<void>(() => {});
    pool.submit(job('a', log, never));
    pool.submit(job('b', log, never));
    expect(await drainPool(pool, 10, 200)).toBe(2);
    expect(log.filter((l) => l.startsWith('abort')).sort()).toEqual(['abort a', 'abort b']);
    expect(pool.size.running).toBe(0);
  });
});
