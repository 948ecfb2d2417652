import { type Snapshot, snapshotBytes, step } from '@stepfold/engine';
import { LINEAR_STEPS, linear10 } from './workflows.js';

/**
 * A real snapshot of the 10-step workflow (started, three steps done, the fourth dispatched)
 * whose JSON is `bytes` long, padded through its input. Stores save copies of it with a new id
 * and version.
 */
export function snapshotOfAbout(bytes = 2048): Snapshot {
  const make = (pad: number) => {
    let s = step(linear10, null, {
      type: 'start',
      at: 1_700_000_000_000,
      id: 'bench-payload',
      input: { customer: 'c-1042', note: 'x'.repeat(pad) },
    });
    for (const [k, id] of LINEAR_STEPS.slice(0, 3).entries()) {
      s = step(linear10, s, {
        type: 'task.completed',
        at: 1_700_000_000_100 + k,
        step: id,
        attempt: 1,
        output: { ok: true, ref: `ref-${id}` },
      });
    }
    return s;
  };
  const base = snapshotBytes(JSON.stringify(make(0)));
  const s = make(Math.max(0, bytes - base));
  return JSON.parse(JSON.stringify(s)) as Snapshot;
}
