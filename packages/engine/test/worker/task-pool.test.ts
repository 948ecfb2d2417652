import { describe, expect, it } from 'vitest';
import type { TaskJob } from '../../src/runner/port.js';
import { MAX_GIVE_BACKS, TaskPool } from '../../src/worker/task-pool.js';

interface Held {
  job: TaskJob;
  finish: () => void;
}

/** Jobs that run until finished by the test, with a log of what happened. */
function jobs(now: () => number) {
  const log: string[] = [];
  const held = new Map<string, Held>();
  const make = (name: string, workflow = 'w', deadlineIn = 60_000, releases = 0): TaskJob => {
    let finish: () => void = () => {};
    const done = new Promise<void>((r) => (finish = r));
    const job: TaskJob = {
      instanceId: name,
      workflow,
      task: { step: name, deadline: now() + deadlineIn, releases } as TaskJob['task'],
      async run() {
        log.push(`run ${name}`);
        await done;
        return 'completed';
      },
      drop: () => log.push(`drop ${name}`),
      async release() {
        log.push(`release ${name}`);
      },
      abort: () => log.push(`abort ${name}`),
    };
    held.set(name, { job, finish });
    return job;
  };
  const finish = async (name: string) => {
    held.get(name)!.finish();
    await new Promise((r) => setTimeout(r, 0));
  };
  return { log, make, finish };
}

const quiet = { start() {}, end() {}, freed() {} };

describe('TaskPool', () => {
  it('runs at most `concurrency` at once and starts the next when one ends', async () => {
    const j = jobs(Date.now);
    const pool = new TaskPool(2, {}, 0, Date.now, quiet);
    for (const n of ['a', 'b', 'c']) pool.submit(j.make(n));
    expect(j.log).toEqual(['run a', 'run b']);
    expect(pool.size).toEqual({ running: 2, queued: 1 });
    expect(pool.free()).toBe(0);
    await j.finish('a');
    expect(j.log).toEqual(['run a', 'run b', 'run c']);
  });

  it('aborts the jobs still running, in the order they started, none that ended', async () => {
    const j = jobs(Date.now);
    const pool = new TaskPool(4, {}, 0, Date.now, quiet);
    for (const n of ['a', 'b', 'c', 'd']) pool.submit(j.make(n));
    await j.finish('b');
    await j.finish('d');
    pool.submit(j.make('e'));
    expect(pool.abortRunning(new Error('stop'))).toBe(3);
    expect(j.log.filter((l) => l.startsWith('abort'))).toEqual(['abort a', 'abort c', 'abort e']);
  });

  it('keeps each workflow under its cap and serves waiting workflows in turn', async () => {
    const j = jobs(Date.now);
    const pool = new TaskPool(2, { big: 1 }, 0, Date.now, quiet);
    pool.submit(j.make('b1', 'big'));
    pool.submit(j.make('b2', 'big'));
    expect(pool.freeFor('big')).toBe(0);
    expect(pool.freeFor('small')).toBe(0); // the waiting b2 holds the other slot
    pool.submit(j.make('s1', 'small'));
    expect(j.log).toEqual(['run b1', 'run s1']);
    await j.finish('b1');
    expect(j.log).toEqual(['run b1', 'run s1', 'run b2']);
  });

  it('a job that waited until its deadline was near is given back; one that finds a slot starts however near', async () => {
    let now = 0;
    const j = jobs(() => now);
    const pool = new TaskPool(1, {}, 1_000, () => now, quiet);
    pool.submit(j.make('a', 'w', 500)); // a free slot: starts at once despite its near deadline
    pool.submit(j.make('b', 'w', 5_000));
    now = 4_500; // b's deadline is now 500 ms away
    await j.finish('a');
    expect(j.log).toEqual(['run a', 'release b']);
  });

  it(`gives one attempt back at most ${MAX_GIVE_BACKS} times, then runs it when a slot frees`, async () => {
    let now = 0;
    const j = jobs(() => now);
    const pool = new TaskPool(1, {}, 1_000, () => now, quiet);
    pool.submit(j.make('a'));
    pool.submit(j.make('b', 'w', 100, MAX_GIVE_BACKS));
    now = 50;
    await j.finish('a');
    expect(j.log).toEqual(['run a', 'run b']);
  });

  it('once closed, every job is given back unrun; whenIdle waits for the writes', async () => {
    const j = jobs(Date.now);
    const pool = new TaskPool(1, {}, 0, Date.now, quiet);
    pool.closed = true;
    pool.submit(j.make('a'));
    await pool.whenIdle();
    expect(j.log).toEqual(['release a']);
  });

  it('reports each job end with its outcome and frees the slot even when run throws', async () => {
    const ends: string[] = [];
    const pool = new TaskPool(1, {}, 0, Date.now, {
      start() {},
      end: (job, outcome) => ends.push(`${job.instanceId} ${outcome}`),
      freed() {},
    });
    const bad = { ...jobs(Date.now).make('x'), run: () => Promise.reject(new Error('boom')) };
    pool.submit(bad);
    await pool.whenIdle();
    expect(ends).toEqual(['x error']);
    expect(pool.free()).toBe(1);
  });
});
