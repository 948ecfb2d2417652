import type { ScheduledFor } from '../snapshot.js';
import { type SlotSource, slotRunId, slotSource } from './spec.js';
import {
  pushRecent,
  type RunRecord,
  type ScheduleCommand,
  type ScheduleState,
  type SkipReason,
} from './state.js';

// One decision of a schedule: what its fire handler does with the state it was given, the command
// that woke it (if any) and the time it was woken. Every run it starts has a deterministic id, so a
// fire that runs twice (a retry after a crash, two workers) starts nothing twice: the store's
// create refuses the second with ALREADY_EXISTS, which counts as started.

/** Most slots one fire decides; the rest are decided by the next fire, due at once. */
export const MAX_SLOTS_PER_FIRE = 500;
/** Most slots one backfill may name. */
export const MAX_BACKFILL_SLOTS = 1_000;

/** What a fire can do outside the state: start runs and look at them. */
export interface FireIo {
  /**
   * Starts the target run with this id, for this slot (its `snapshot.schedule`): `started`,
   * `existed` (ALREADY_EXISTS: started before), or the message of an error retrying cannot fix (an
   * input the target's schema refuses). Anything else throws, and the fire is retried.
   */
  start(runId: string, slot: ScheduledFor): Promise<'started' | 'existed' | { invalid: string }>;
  /** Whether the run with this id exists and has not finished. */
  running(runId: string): Promise<boolean>;
}

/** The schedule's next state after the fire at `now`, woken by `command` or by its timer. */
export async function fire(
  scheduleId: string,
  given: ScheduleState,
  command: ScheduleCommand | undefined,
  now: number,
  io: FireIo,
): Promise<ScheduleState> {
  const s: ScheduleState = structuredClone(given);
  const slots = slotSource(s.spec);
  const f = new Fire(scheduleId, s, slots, now, io);
  // A resume applies first: the slots that fell while paused are decided by it. Any other command
  // applies after the slots already due, which came before it.
  if (command?.op === 'resume') {
    // Only slots that passed while paused are skipped as such: a resume of a running schedule changes nothing.
    const skip = s.paused && command.catchup !== true ? 'paused' : undefined;
    s.paused = false;
    await f.dueSlots(skip);
  } else {
    // A pause takes effect when it was sent, even if the fire applying it runs later (a worker
    // busy, or the fire of an earlier slot still running when it arrived): slots after that time
    // are the paused ones.
    const until = command?.op === 'pause' && command.at !== undefined ? Math.min(now, command.at) : now;
    if (!s.paused) await f.dueSlots(undefined, until);
    if (command) await f.apply(command);
  }
  f.plan();
  return s;
}

class Fire {
  /** Whether the last run is still going, once looked up (a run this fire started is). */
  private lastRunning: boolean | undefined;
  /** Slots were left undecided (over the per-fire bound): wake again at once. */
  private more = false;

  constructor(
    private readonly scheduleId: string,
    private readonly s: ScheduleState,
    private readonly slots: SlotSource,
    private readonly now: number,
    private readonly io: FireIo,
  ) {}

  /** Decides every slot due by `until`; `skipAll` skips them all for that reason (the paused ones). */
  async dueSlots(skipAll?: SkipReason, until = this.now): Promise<void> {
    const { s, now } = this;
    await this.releaseBuffered(skipAll);
    let decided = 0;
    for (let slot = this.slots(s.cursor); slot !== null && slot <= until; slot = this.slots(slot)) {
      if (decided++ === MAX_SLOTS_PER_FIRE) {
        this.more = true;
        return;
      }
      s.cursor = slot;
      s.lastSlot = slot;
      if (skipAll) this.skip(slot, skipAll);
      else if (slot < now - s.spec.catchupWindowMs) this.skip(slot, 'catchup');
      else await this.slotDue(slot);
    }
    s.cursor = Math.max(s.cursor, until);
  }

  /** A slot due now, under the overlap policy. */
  private async slotDue(slot: number): Promise<void> {
    const { overlap } = this.s.spec;
    if (overlap === 'allow' || !(await this.previousRunning())) {
      await this.startSlot(slot, 'slot');
      return;
    }
    if (overlap === 'bufferOne' && this.s.buffered === undefined) this.s.buffered = slot;
    else this.skip(slot, 'overlap');
  }

  /** A buffered slot starts once the run before it has finished (or is skipped with the others). */
  private async releaseBuffered(skipAll: SkipReason | undefined): Promise<void> {
    const slot = this.s.buffered;
    if (slot === undefined) return;
    if (skipAll) {
      delete this.s.buffered;
      this.skip(slot, skipAll);
    } else if (!(await this.previousRunning())) {
      delete this.s.buffered;
      await this.startSlot(slot, 'slot');
    }
  }

  private async previousRunning(): Promise<boolean> {
    const last = this.s.lastRun;
    if (last === undefined) return false;
    this.lastRunning ??= await this.io.running(last);
    return this.lastRunning;
  }

  private skip(slot: number, reason: SkipReason): void {
    this.s.counts.skipped++;
    this.s.skippedBy[reason]++;
    pushRecent(this.s.skips, { slot, reason });
  }

  /** Starts a slot's run; an input its target refuses skips the slot (`invalid`) rather than retry for ever. */
  private async startSlot(slot: number, how: 'slot' | 'backfill'): Promise<boolean> {
    const id = slotRunId(this.scheduleId, slot);
    const outcome = await this.io.start(id, { id: this.scheduleId, slot, how });
    if (typeof outcome === 'object') {
      this.s.lastError = outcome.invalid;
      if (how === 'slot') this.skip(slot, 'invalid');
      return false;
    }
    if (how === 'backfill') {
      if (outcome === 'existed') return false;
      this.s.counts.backfilled++;
    } else {
      this.s.counts.started++;
      this.s.lastRun = id;
      this.lastRunning = true;
    }
    this.record({ id, slot, at: this.now, how });
    return true;
  }

  private record(run: RunRecord): void {
    pushRecent(this.s.recent, run);
  }

  /** Applies a command other than resume. */
  async apply(command: ScheduleCommand): Promise<void> {
    const { s } = this;
    switch (command.op) {
      case 'pause':
        s.paused = true;
        if (command.note !== undefined) s.note = command.note;
        await this.releaseBuffered('paused');
        return;
      case 'resume':
        return;
      case 'trigger': {
        // Trigger-now ignores the overlap policy: asked for, it starts. Its slot is the time it was
        // triggered (a command written before triggers carried it: the fire's time).
        const slot = command.at ?? this.now;
        const outcome = await this.io.start(command.runId, { id: this.scheduleId, slot, how: 'trigger' });
        if (typeof outcome === 'object') {
          s.lastError = outcome.invalid;
          return;
        }
        if (outcome === 'started') s.counts.triggered++;
        s.lastRun = command.runId;
        this.record({ id: command.runId, at: this.now, how: 'trigger' });
        return;
      }
      case 'backfill': {
        // Every slot of the range whose run does not exist yet; the overlap policy does not apply.
        let n = 0;
        for (
          let slot = this.slots(command.from - 1);
          slot !== null && slot <= command.to;
          slot = this.slots(slot)
        ) {
          if (n++ === MAX_BACKFILL_SLOTS) break;
          await this.startSlot(slot, 'backfill');
        }
        return;
      }
    }
  }

  /** Sets the next slot and the next wake time. */
  plan(): void {
    const { s, now } = this;
    const next = s.paused ? null : this.slots(s.cursor);
    if (next === null) delete s.nextSlot;
    else s.nextSlot = next;
    const wakes: number[] = [];
    if (this.more) wakes.push(now);
    if (next !== null) wakes.push(next);
    if (s.buffered !== undefined && !s.paused) wakes.push(now + s.spec.overlapCheckMs);
    if (wakes.length) s.wakeAt = Math.min(...wakes);
    else delete s.wakeAt;
  }
}
