import { type Backoff, checkBackoff, OUTAGE_BACKOFF } from '../backoff.js';
import { runnerPort } from '../runner/port.js';
import type { Runner } from '../runner/types.js';
import type { WakeSource } from '../store/store.js';
import { systemClock } from './clock.js';
import type { FleetPosition, WorkerEvents, WorkerOptions } from './types.js';

/** Default lease of a worker's claims: long enough for a claim's tick on a slow store, short enough that a killed worker's claims lapse within seconds. */
export const DEFAULT_CLAIM_LEASE_MS = 5_000;

/** Default time between the turns of workers that heard one notice (see `WorkerOptions.standbyMs`). */
export const DEFAULT_STANDBY_MS = 50;

/** A worker's polling pace, every field set. */
export interface Pace {
  minMs: number;
  maxMs: number;
  maxWithWakesMs: number;
  factor: number;
  jitter: number;
  /**
   * Longest pause while wakes are live and `maxWithWakesMs` is longer: a third of the runner's
   * `taskLeaseMs`. A running attempt's lease sends no wake notice (a notice per dispatch or renewal
   * would wake every worker, and have each claim the instance by id later, for handlers that
   * nearly all end in time), so the due poll is what finds a lease that lapsed with a dead worker.
   * Polling every third of a lease, it is found within about 1.4 leases of the last renewal (plus
   * the second the stores round it to): under 15 s with the defaults, not up to 30 s more. Idle, a
   * worker polls each lane every 3.3 s instead of 30 s: one indexed query each.
   */
  leaseCapMs: number;
}

/** Every option of a worker with its default applied and checked, once, when the worker is made. */
export interface ResolvedWorkerOptions {
  runner: Runner;
  concurrency: number;
  workflowConcurrency: Readonly<Record<string, number>>;
  pace: Pace;
  lanes: 'workflow' | 'single';
  /** The wake source to follow, or undefined to poll only. */
  wakes: WakeSource | undefined;
  handoffSnapshots: boolean;
  startMarginMs: number;
  claimLeaseMs: number;
  fleet: FleetPosition | undefined;
  standbyMs: number;
  skipMs: number;
  graceMs: number;
  abortMs: number;
  /** Given by the user: sleeps are then planned on it as it is (no sub-millisecond wall timer). */
  customClock: boolean;
  clock: () => number;
  /** Retries of a failed poll and of the wake subscription. */
  outage: Backoff;
  on: Partial<WorkerEvents>;
}

/** Whole milliseconds of at least `min`, or the default; a RangeError naming the option otherwise. */
function ms(name: string, value: number | undefined, fallback: number, min: 0 | 1): number {
  if (value === undefined) return fallback;
  if (!(Number.isSafeInteger(value) && value >= min))
    throw new RangeError(`createWorker: ${name} must be an integer of at least ${min}, got ${String(value)}`);
  return value;
}

/** A positive finite number, or the default. */
function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!(Number.isFinite(value) && value > 0))
    throw new RangeError(`createWorker: ${name} must be a positive number, got ${String(value)}`);
  return value;
}

function checkFleet(fleet: FleetPosition | undefined): FleetPosition | undefined {
  if (fleet === undefined) return undefined;
  const { index, size } = fleet;
  if (!(Number.isSafeInteger(size) && size >= 1 && Number.isSafeInteger(index) && index >= 0 && index < size))
    throw new RangeError(`createWorker: fleet must have 0 <= index < size, got ${JSON.stringify(fleet)}`);
  return { index, size };
}

/**
 * Applies every default of {@link WorkerOptions} and checks each value, so the worker's parts
 * read settled numbers and a bad option fails `createWorker`, not a later round.
 */
export function resolveWorkerOptions(o: WorkerOptions): ResolvedWorkerOptions {
  const concurrency = ms('concurrency', o.concurrency, 10, 1);
  const caps = (o.workflowConcurrency ?? {}) as Readonly<Record<string, number>>;
  for (const [workflow, cap] of Object.entries(caps)) ms(`workflowConcurrency.${workflow}`, cap, 1, 1);
  const pace: Pace = {
    minMs: positive('poll.minMs', o.poll?.minMs, 50),
    maxMs: positive('poll.maxMs', o.poll?.maxMs, 5_000),
    maxWithWakesMs: positive('poll.maxWithWakesMs', o.poll?.maxWithWakesMs, 30_000),
    factor: positive('poll.factor', o.poll?.factor, 2),
    jitter: o.poll?.jitter ?? 0.1,
    leaseCapMs: 0,
  };
  pace.leaseCapMs = Math.max(pace.minMs, Math.floor(runnerPort(o.runner).taskLeaseMs / 3));
  if (!(pace.jitter >= 0 && pace.jitter < 1))
    throw new RangeError(`createWorker: poll.jitter must be in [0, 1), got ${String(pace.jitter)}`);
  return {
    runner: o.runner,
    concurrency,
    workflowConcurrency: caps,
    pace,
    lanes: o.lanes ?? 'workflow',
    wakes: o.wakes === false ? undefined : (o.wakes ?? o.runner.store.wakes),
    handoffSnapshots: o.handoffSnapshots !== false,
    startMarginMs: ms('startMarginMs', o.startMarginMs, 1_000, 0),
    claimLeaseMs: ms('claimLeaseMs', o.claimLeaseMs, DEFAULT_CLAIM_LEASE_MS, 1),
    fleet: checkFleet(o.fleet),
    standbyMs: ms('standbyMs', o.standbyMs, DEFAULT_STANDBY_MS, 0),
    skipMs: ms('skipMs', o.skipMs, 1_000, 1),
    graceMs: ms('shutdown.graceMs', o.shutdown?.graceMs, 30_000, 0),
    abortMs: ms('shutdown.abortMs', o.shutdown?.abortMs, 5_000, 0),
    customClock: o.clock !== undefined,
    clock: o.clock ?? systemClock,
    outage: checkBackoff('createWorker', { ...OUTAGE_BACKOFF, jitter: pace.jitter }),
    on: o.on ?? {},
  };
}
