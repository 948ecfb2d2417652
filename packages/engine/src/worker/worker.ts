import type { TaskJob } from '../runner/types.js';
import type { Snapshot } from '../snapshot.js';
import type { WakeHint, WakeSubscription } from '../store/store.js';
import { wakeNotice } from '../store/wake-notice.js';
import { after, jittered, randomToken, Sleeper, systemClock, WallTimer } from './clock.js';
import { DuePoller, type RoundResult } from './due-poller.js';
import { TakeOrder } from './take-order.js';
import { TaskPool } from './task-pool.js';
import type { ShutdownOptions, Worker, WorkerEvents, WorkerOptions, WorkerStats } from './types.js';
import { WakeTimes } from './wake-times.js';

// Backoff while the store is down: from 100 ms, doubling, at most 5 s. Outages are mostly a restart
// or a failover of seconds; a longer pause would only delay every instance by as much once the
// store is back, while a poll every 5 s per worker costs a down server nothing worth saving.
const OUTAGE_MIN_MS = 100;
const OUTAGE_MAX_MS = 5_000;
// Future wake times remembered; more are left to polling.
const MAX_KNOWN = 256;

/** Default lease of a worker's claims: long enough for a claim's tick on a slow store, short enough that a killed worker's claims lapse within seconds. */
export const DEFAULT_CLAIM_LEASE_MS = 5_000;

/** Default time between the turns of workers that heard one notice (see `WorkerOptions.standbyMs`). */
export const DEFAULT_STANDBY_MS = 50;

/** A worker option of whole milliseconds checked (at least `min`), or its default. */
function msOption(name: string, ms: number | undefined, fallback: number, min: 0 | 1): number {
  if (ms === undefined) return fallback;
  if (!(Number.isSafeInteger(ms) && ms >= min))
    throw new RangeError(`createWorker: ${name} must be an integer of at least ${min}, got ${String(ms)}`);
  return ms;
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
export function createWorker(options: WorkerOptions): Worker {
  const { runner } = options;
  const store = runner.store;
  const clock = options.clock ?? systemClock;
  // Sleeps on the system clock end within a fraction of a ms of their time; a given clock is taken as it is.
  const wall = options.clock ? undefined : new WallTimer();
  const until = (at: number) => (wall ? wall.until(at) : at - clock());
  const poll = {
    minMs: options.poll?.minMs ?? 50,
    maxMs: options.poll?.maxMs ?? 5_000,
    maxWithWakesMs: options.poll?.maxWithWakesMs ?? 30_000,
    factor: options.poll?.factor ?? 2,
    jitter: options.poll?.jitter ?? 0.1,
  };
  const stats: WorkerStats = {
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
    running: 0,
    queued: 0,
    lastLagMs: 0,
    maxLagMs: 0,
  };
  const emit = <K extends keyof WorkerEvents>(k: K, ...args: Parameters<WorkerEvents[K]>): void => {
    try {
      (options.on?.[k] as ((...a: Parameters<WorkerEvents[K]>) => void) | undefined)?.(...args);
    } catch {
      // An observer that throws must not stop the worker.
    }
  };
  const sleeper = new Sleeper();
  // Set by every wake that should start a round; a wake that only re-plans the sleep around an
  // earlier wake time (a timer heard of) leaves it unset, and the loop sleeps on.
  let urgent = false;
  // Set by every wake that does not name its instance: the next round polls every lane. A round
  // started only by named instances claims just those (the lanes wait for the planned poll).
  let lanesDue = true;
  const wakeNow = (named = false) => {
    urgent = true;
    if (!named) lanesDue = true;
    sleeper.wake();
  };
  const pool = new TaskPool(
    options.concurrency ?? 10,
    options.workflowConcurrency ?? {},
    options.startMarginMs ?? 1_000,
    clock,
    {
      start: (job) => emit('taskStart', job),
      end(job, outcome, ms, error) {
        stats[outcome === 'error' ? 'errors' : outcome]++;
        // A run that threw outside its handler, or a give-back whose write failed.
        if (outcome === 'error' || error !== undefined) emit('error', error, 'task');
        emit('taskEnd', job, outcome, ms);
      },
      // A freed slot goes to the named instances waiting for one first (their round polls no
      // lane: a full lane poll already brought the planned poll forward).
      freed: () => {
        if (waitingForSlot) wakeNow(poller.namedDue(clock()));
      },
    },
  );
  const poller = new DuePoller(runner, store, pool, stats, emit, clock, {
    skipMs: options.skipMs ?? 1_000,
    lanes: options.lanes,
    leaseMs: msOption('claimLeaseMs', options.claimLeaseMs, DEFAULT_CLAIM_LEASE_MS, 1),
    heldDue: (at) => hear(at, true),
  });

  let state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  let loop: Promise<void> | undefined;
  let stopped: Promise<void> | undefined;
  let subscription: WakeSubscription | undefined;
  let wakesLive = false;
  let waitingForSlot = false;
  const known = new WakeTimes(MAX_KNOWN);
  let roundsDone = 0;
  let lastRoundEmpty = false;
  const roundWaiters: Array<() => void> = [];

  // A wake time arrived (or was heard of already past): `named` when the poller remembers the
  // instance it names, so a round for it alone need not poll the lanes.
  const hear = (at: number, named: boolean) => {
    if (at <= clock()) {
      wakeNow(named);
      return;
    }
    if (known.add(at, named)) sleeper.wake(); // a new earliest time: re-plan the sleep around it
  };
  let detach: (() => void) | undefined;

  async function run(): Promise<void> {
    let pause = poll.minMs;
    let outages = 0;
    let planned = 0; // when the next round that polls every lane is due
    while (state === 'running') {
      if (pool.free() === 0) {
        waitingForSlot = true;
        await sleeper.sleep(poll.maxWithWakesMs);
        waitingForSlot = false;
        continue;
      }
      let result: RoundResult;
      const roundAt = clock();
      urgent = false; // a wake from now on asks for the next round
      // Times up to the round's start were due when it polled: it takes what they woke.
      const lanes = known.pass(roundAt) || lanesDue || roundAt >= planned;
      lanesDue = false;
      try {
        result = await poller.round(lanes);
        outages = 0;
      } catch (e) {
        stats.errors++;
        emit('error', e, 'poll');
        outages++;
        lanesDue = true;
        await sleeper.sleep(
          jittered(Math.min(OUTAGE_MAX_MS, OUTAGE_MIN_MS * 2 ** (outages - 1)), poll.jitter),
        );
        continue;
      } finally {
        stats.conflicts = runner.stats.conflicts;
      }
      roundsDone++;
      lastRoundEmpty = result.ticked === 0;
      for (const w of roundWaiters.splice(0)) w();
      if (result.full) {
        pause = poll.minMs;
        planned = 0;
        continue;
      }
      // A round for named instances alone leaves the pace and the planned poll as they were.
      if (lanes) {
        pause =
          result.ticked > 0
            ? poll.minMs
            : Math.min(pause * poll.factor, wakesLive ? poll.maxWithWakesMs : poll.maxMs);
        planned = clock() + jittered(pause, poll.jitter);
      }
      // Named instances left for want of a slot: the next round takes them (once a slot frees).
      if (result.left) continue;
      // Until the planned poll or the earliest known wake time, whichever is first; a wake time
      // heard meanwhile moves that end earlier; an urgent wake ends the sleep.
      for (let end = Math.min(planned, known.earliest ?? planned); state === 'running' && !urgent; ) {
        if (end - clock() <= 0) break;
        await sleeper.sleep(until(end));
        end = Math.min(planned, known.earliest ?? planned);
      }
    }
  }

  async function subscribe(failures = 0): Promise<void> {
    const source = options.wakes === false ? undefined : (options.wakes ?? store.wakes);
    if (!source || state !== 'running') return;
    try {
      subscription = await source.subscribe({
        wake(hint: WakeHint) {
          stats.wakes++;
          emit('wake', hint);
          if (hint.workflow !== undefined) poller.prefer(hint.workflow);
          const { id } = hint;
          // A task handed to every worker (a snapshot or sent signals): whose turn is it?
          if (id !== undefined && (hint.snapshot?.id === id || hint.sent)) {
            const wait = order.delay(id, clock());
            if (wait > 0) {
              standBy(id, hint, wait);
              return;
            }
          }
          const snapshot = options.handoffSnapshots === false ? undefined : hint.snapshot;
          // A snapshot handed over with the notice is taken from as it is (with the signals sent
          // to it); else the id is claimed (its sent signals by id too).
          const named =
            id !== undefined &&
            ((snapshot?.id === id && poller.give(snapshot, hint.at, hint.sent)) ||
              (hint.sent ? poller.claimSentTo(id) : poller.hint(id, hint.at, false, !hint.busy)));
          hear(hint.at, named);
        },
        lost(error) {
          wakesLive = false;
          emit('wakeLost', error);
          wakeNow(); // back to the fast pace
        },
        restored() {
          wakesLive = true;
          emit('wakeRestored');
          wakeNow(); // notices sent meanwhile are gone: poll once
        },
      });
      wakesLive = true;
      if (state !== 'running') await subscription.close().catch(() => {});
    } catch (e) {
      // Polling alone finds everything meanwhile; the subscription is tried again with backoff.
      stats.errors++;
      emit('error', e, 'wake');
      const ms = jittered(Math.min(OUTAGE_MAX_MS, OUTAGE_MIN_MS * 2 ** failures), poll.jitter);
      resubscribe = setTimeout(() => void subscribe(failures + 1), ms);
    }
  }
  let resubscribe: ReturnType<typeof setTimeout> | undefined;

  const order = new TakeOrder(
    options.fleet,
    msOption('standbyMs', options.standbyMs, DEFAULT_STANDBY_MS, 0),
    randomToken(),
    stats,
  );
  const standing = new Set<ReturnType<typeof setTimeout>>();
  /** After `wait`, claims `id` by id (its signals, for a send): nothing is found once its taker wrote. */
  function standBy(id: string, hint: WakeHint, wait: number): void {
    const timer = setTimeout(() => {
      standing.delete(timer);
      if (state !== 'running') return;
      const named = hint.sent ? poller.claimSentTo(id, true) : poller.hint(id, hint.at, true);
      hear(Math.min(hint.at, clock()), named);
    }, wait);
    standing.add(timer);
  }

  const worker: Worker = {
    stats,
    async start() {
      if (state !== 'new') return;
      state = 'running';
      detach = runner.executeWith(
        (job: TaskJob) => pool.submit(job),
        (s: Snapshot) => {
          const at = wakeNotice(s);
          if (at === null) return;
          hear(at, poller.hint(s.id, at));
        },
      );
      loop = run();
      await subscribe();
    },
    stop(o: ShutdownOptions = {}) {
      stopped ??= (async () => {
        const graceMs = o.graceMs ?? options.shutdown?.graceMs ?? 30_000;
        const abortMs = o.abortMs ?? options.shutdown?.abortMs ?? 5_000;
        const was = state;
        state = 'stopping';
        wakeNow();
        for (const w of roundWaiters.splice(0)) w();
        if (resubscribe !== undefined) clearTimeout(resubscribe);
        for (const timer of standing) clearTimeout(timer);
        standing.clear();
        await loop;
        await subscription?.close().catch(() => {});
        await poller.releaseHeld();
        emit('stopping', pool.size);
        const before = { dropped: stats.dropped, released: stats.released };
        // From here every job that has not started, and every one a finishing handler's result
        // dispatches, is written back as queued for any worker.
        pool.closed = true;
        pool.releaseWaiting();
        let aborted = 0;
        const idle = pool.whenIdle();
        if (pool.size.running > 0) await Promise.race([idle, after(graceMs)]);
        if (pool.size.running > 0) {
          aborted = pool.abortRunning(new Error('worker stopping'));
          await Promise.race([idle, after(abortMs)]);
        }
        // Nothing waits in a closed pool (it gives every job back as it comes): the writes remain.
        await Promise.race([pool.released(), after(abortMs)]);
        detach?.();
        state = 'stopped';
        const dropped = stats.dropped - before.dropped;
        const released = stats.released - before.released;
        if (was !== 'new') emit('stopped', { aborted, dropped, released });
      })();
      return stopped;
    },
    nudge: () => wakeNow(),
    async idle() {
      for (;;) {
        await pool.whenIdle();
        if (state !== 'running') return;
        // A round that starts after the pool went idle and finds nothing, with the pool still idle.
        const target = roundsDone + 2;
        while (roundsDone < target && state === 'running') {
          await new Promise<void>((resolve) => {
            roundWaiters.push(resolve);
            wakeNow();
          });
        }
        const size = pool.size;
        if (lastRoundEmpty && size.running === 0 && size.queued === 0) return;
      }
    },
  };
  Object.defineProperties(stats, {
    running: { get: () => pool.size.running, enumerable: true },
    queued: { get: () => pool.size.queued, enumerable: true },
  });
  return worker;
}
