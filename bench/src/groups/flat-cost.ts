import {
  dispatchedBy,
  type Snapshot,
  snapshotBytes,
  step,
  taskView,
  type WorkflowEvent,
} from '@stepfold/engine';
import { median } from '../measure.js';
import { costRow, type Group } from '../row.js';
import { entity, processBatch } from '../workflows.js';

// Flat cost: one document-lifecycle entity (collect → process → loop, continue-as-new every 10
// batches) takes 100,000 signals; the 100,000th must cost no more than 1.5× the 10th in time and
// in snapshot bytes.
//
// The cost of one event is what the engine does for it: the reducer step for the signal, the
// process handler's result when that signal closed a batch (so the batch cost is spread as it
// is in production), and JSON.stringify of the new snapshot (what every store's save does).
// Store I/O is the same at any age and is left out; see runner-memory and store-* for it.
//
// Time per event is a median over a window, never one event: at the 10th signal, the median of
// signals 6..15 over many fresh entities (the process is warmed up on another entity first, so
// the 10th is not charged for JIT compilation); at the 100,000th, the median of signals
// 99,751..100,250 of the one long-lived entity.

const TARGET = 100_000;
const WINDOW = 500;
const FRESH = 300;
const WARMUP = 3_000;

/** CPU microseconds of this process (see cpuNow in measure.ts: other load on the machine is not ours). */
const nowUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** One entity driven by hand: the pure reducer plus the batch handler, on a fake clock. */
class Entity {
  s: Snapshot;
  at = 1_700_000_000_000;
  json = '';
  constructor(readonly id: string) {
    this.s = step(entity, null, { type: 'start', at: this.at, id, input: { doc: id } });
  }
  /**
   * Signal n (1-based), with a delivery id (deduplicated by the engine) of fixed width, so ids do
   * not grow the snapshot as n grows (as UUIDs would not).
   */
  signal(n: number): void {
    this.at += 1;
    const ev: WorkflowEvent = {
      type: 'signal',
      at: this.at,
      name: 'event',
      payload: { doc: this.id, seq: n },
      id: `${this.id}:${String(n).padStart(6, '0')}`,
    };
    let s = step(entity, this.s, ev);
    for (const task of dispatchedBy(s)) {
      const view = taskView(entity, s, task);
      const output = processBatch({ input: view.input, idempotencyKey: task.idempotencyKey } as never);
      s = step(entity, s, {
        type: 'task.completed',
        at: this.at,
        step: task.step,
        attempt: task.attempt,
        output: output as never,
      });
    }
    this.json = JSON.stringify(s);
    this.s = s;
  }
}

const bytes = (e: Entity) => snapshotBytes(e.json);

export const flatCost: Group = {
  name: 'flat-cost',
  async run() {
    const warm = new Entity('warm');
    for (let n = 1; n <= WARMUP; n++) warm.signal(n);

    // The 10th signal, over FRESH new entities. Their ids are as long as the long-lived entity's
    // ('entity'), so both carry the same id, signal-id and payload lengths.
    const early: number[] = [];
    const bytes10: number[] = [];
    for (let k = 0; k < FRESH; k++) {
      const e = new Entity(`f${String(k).padStart(5, '0')}`);
      for (let n = 1; n <= 15; n++) {
        const t0 = nowUs();
        e.signal(n);
        const dt = nowUs() - t0;
        if (n >= 6) early.push(dt);
        if (n === 10) bytes10.push(bytes(e));
      }
    }

    // The 100,000th signal of one entity (and the 1,000th, after every bounded ring has filled).
    const late: number[] = [];
    const e = new Entity('entity');
    let b1k = 0;
    let b80 = 0;
    let b100k = 0;
    let at100k: Snapshot | null = null;
    const started = performance.now();
    for (let n = 1; n <= TARGET + WINDOW / 2; n++) {
      if (n > TARGET - WINDOW / 2) {
        const t0 = nowUs();
        e.signal(n);
        late.push(nowUs() - t0);
      } else e.signal(n);
      if (n === 80) b80 = bytes(e);
      if (n === 1_000) b1k = bytes(e);
      if (n === TARGET) {
        b100k = bytes(e);
        at100k = e.s;
      }
    }
    const driveSeconds = (performance.now() - started) / 1000;
    if (!at100k) throw new Error('never reached the target signal');

    const window = (xs: number[]) => ({
      p25: percentile(xs, 0.25),
      median: median(xs),
      p75: percentile(xs, 0.75),
      count: xs.length,
    });
    const shape = (s: Snapshot) => ({
      run: s.run,
      version: s.version,
      seenSignals: s.seenSignals.length,
      log: s.log.length,
      inbox: s.inbox.length,
      batchItems: s.steps['gather']?.batch?.items.length ?? 0,
    });
    return [
      costRow('flat-cost-time', median(late), median(early), 'µs/event', 0.67, {
        note: `ours = median CPU µs per signal (reducer step + batch result + JSON.stringify) over signals ${TARGET - WINDOW / 2 + 1}..${TARGET + WINDOW / 2} of one entity; baseline = same over signals 6..15 of ${FRESH} fresh entities`,
        details: { at10: window(early), at100k: window(late), secondsFor100kSignals: driveSeconds },
      }),
      costRow('flat-cost-bytes', b100k, median(bytes10), 'bytes', 0.67, {
        note: `snapshot JSON bytes after the 100,000th signal vs after the 10th (after the 1,000th: ${b1k})`,
        // The engine's 100k test compares with the size after the 10th batch (signal 80 here).
        details: { at80: b80, at1000: b1k, shapeAt100k: shape(at100k) },
      }),
    ];
  },
};

function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}
