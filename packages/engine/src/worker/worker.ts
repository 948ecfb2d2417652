import type { AnyDefinition } from '../runner/handler-types.js';
import { runnerPort, type TaskJob } from '../runner/port.js';
import type { Snapshot } from '../snapshot.js';
import { wakeNotice } from '../store/wake-notice.js';
import { Alarm } from './alarm.js';
import { randomToken } from './clock.js';
import { DuePoller } from './due-poller.js';
import { WorkerLoop } from './loop.js';
import { resolveWorkerOptions } from './options.js';
import { drainPool } from './shutdown.js';
import { TakeOrder } from './take-order.js';
import { TaskPool } from './task-pool.js';
import type { ShutdownOptions, Worker, WorkerEvents, WorkerOptions, WorkerStats } from './types.js';
import { WakeFollower } from './wake-follower.js';

export { DEFAULT_CLAIM_LEASE_MS, DEFAULT_STANDBY_MS } from './options.js';

/** A worker's life: made, running, stopping (draining), stopped. */
type WorkerState = 'new' | 'running' | 'stopping' | 'stopped';

function newStats(): WorkerStats {
  return {
    claimed: 0,
    ticks: 0,
    completed: 0,
    failed: 0,
    errors: 0,
    dropped: 0,
    released: 0,
    skipped: 0,
    polls: 0,
    wakes: 0,
    conflicts: 0,
    lostTakes: 0,
    refusedNotices: 0,
    unreadable: 0,
    running: 0,
    queued: 0,
    lastLagMs: 0,
    maxLagMs: 0,
  };
}

/**
 * A worker over a runner: polls due instances lane by lane (one lane per workflow) with only as many
 * ids as it has free slots, sleeps between empty rounds with a growing pause (cut short by the
 * store's wake notices and by the earliest wake time it knows), runs every handler the runner's
 * writes dispatch through a bounded, fair pool, backs off while the store is down, and drains on
 * stop. Portable: timers and promises only.
 *
 * @example
 * const runner = createRunner({ store, workflows: [order], handlers });
 * const worker = createWorker({ runner, concurrency: 20, workflowConcurrency: { report: 2 } });
 * await worker.start();
 * await runner.client(order).start('order-1', input, { wait: 'write' }); // the worker runs it
 * // on shutdown:
 * await worker.stop();
 */
export function createWorker<const W extends readonly AnyDefinition[] = readonly AnyDefinition[]>(
  options: WorkerOptions<W>,
): Worker {
  const o = resolveWorkerOptions(options as unknown as WorkerOptions);
  const { runner, clock } = o;
  const stats = newStats();
  let state: WorkerState = 'new';
  const emit = <K extends keyof WorkerEvents>(k: K, ...args: Parameters<WorkerEvents[K]>): void => {
    try {
      (o.on[k] as ((...a: Parameters<WorkerEvents[K]>) => void) | undefined)?.(...args);
    } catch {
      // An observer that throws must not stop the worker.
    }
  };
  const alarm = new Alarm(clock);
  const pool = new TaskPool(o.concurrency, o.workflowConcurrency, o.startMarginMs, clock, {
    // Asked before emitting: these run for every task, and an emit builds its arguments.
    start: (job) => {
      if (o.on.taskStart) emit('taskStart', job);
    },
    end(job, outcome, startedAt, error) {
      stats[outcome === 'error' ? 'errors' : outcome]++;
      // A run that threw outside its handler, or a give-back whose write failed.
      if (outcome === 'error' || error !== undefined) emit('error', error, 'task');
      if (o.on.taskEnd) emit('taskEnd', job, outcome, startedAt === null ? 0 : clock() - startedAt);
    },
    // A freed slot goes to the named instances waiting for one first (their round polls no lane:
    // a full lane poll already brought the planned poll forward).
    freed: () => {
      if (loop.mode === 'waitingForSlot') alarm.ring(poller.namedDue(clock()));
    },
  });
  const poller = new DuePoller({
    runner,
    pool,
    stats,
    emit,
    clock,
    skipMs: o.skipMs,
    lanes: o.lanes,
    leaseMs: o.claimLeaseMs,
    namedDueAt: (at) => alarm.hear(at, true),
  });
  const loop = new WorkerLoop(o, alarm, poller, pool, stats, emit, () => state === 'running');
  const order = new TakeOrder(o.fleet, o.standbyMs, randomToken(), stats);
  const wakes = new WakeFollower(o, alarm, poller, order, stats, emit, (up) => {
    loop.wakesLive = up;
  });
  let running: Promise<void> | undefined;
  let stopped: Promise<void> | undefined;
  let detach: (() => void) | undefined;

  async function stop(s: ShutdownOptions): Promise<void> {
    const was = state;
    state = 'stopping';
    alarm.ring();
    loop.releaseWaiters();
    const wakesClosed = wakes.close(); // no stand-by or resubscription fires from here on
    await running;
    await wakesClosed;
    await poller.releaseHeld();
    emit('stopping', pool.size);
    const before = { dropped: stats.dropped, released: stats.released };
    const aborted = await drainPool(pool, s.graceMs ?? o.graceMs, s.abortMs ?? o.abortMs);
    detach?.();
    state = 'stopped';
    const dropped = stats.dropped - before.dropped;
    const released = stats.released - before.released;
    if (was !== 'new') emit('stopped', { aborted, dropped, released });
  }

  const worker: Worker = {
    stats,
    async start() {
      if (state !== 'new') return;
      state = 'running';
      detach = runnerPort(runner).executeWith(
        (job: TaskJob) => pool.submit(job),
        (s: Snapshot) => {
          poller.wrote(s.id);
          const at = wakeNotice(s);
          if (at !== null) alarm.hear(at, poller.hint(s.id, at));
        },
      );
      running = loop.run();
      await wakes.start();
    },
    stop(s: ShutdownOptions = {}) {
      stopped ??= stop(s);
      return stopped;
    },
    nudge: () => alarm.ring(),
    async idle() {
      for (;;) {
        await pool.whenIdle();
        if (state !== 'running') return;
        // A round that starts after the pool went idle and finds nothing, with the pool still idle.
        const target = loop.roundsDone + 2;
        while (loop.roundsDone < target && state === 'running') await loop.nextRound();
        const size = pool.size;
        if (loop.lastRoundEmpty && size.running === 0 && size.queued === 0) return;
      }
    },
  };
  Object.defineProperties(stats, {
    running: { get: () => pool.size.running, enumerable: true },
    queued: { get: () => pool.size.queued, enumerable: true },
  });
  return worker;
}
