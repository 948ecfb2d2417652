import { readPath } from '../../definition/data-path.js';
import type { StepOf } from '../../definition/schema.js';
import { addTimer, type Cx, clearTimers, stepState } from '../transition-context.js';
import type { Flow, StepRules } from './step-rules.js';

/**
 * collect: gathers its signal's payloads into a batch (deduplicated by `dedupeBy`) and completes
 * with them at `maxItems`, after `idleMs` of quiet, or `maxWaitMs` after the first item; a draining
 * one completes on entry with the buffered ones.
 */
export const collect: StepRules<StepOf<'collect'> & { id: string }> = {
  enter(cx, def) {
    // Its idle and max-wait timers start with the first item: an empty batch never closes.
    stepState(cx, def.id).batch = { items: [], since: cx.at, lastAt: cx.at, keys: [] };
  },

  signal(cx, def, sig, flow) {
    const batch = stepState(cx, def.id).batch!;
    const key = def.dedupeBy === undefined ? undefined : readPath({ payload: sig.payload }, def.dedupeBy);
    // A payload without the key is kept: it is not a duplicate of anything.
    if (key !== undefined) {
      const k = JSON.stringify(key);
      if (batch.keys.includes(k)) return;
      batch.keys.push(k);
    }
    batch.items.push(sig.payload ?? null);
    batch.lastAt = cx.at;
    if (batch.items.length === 1 && def.maxWaitMs !== undefined) {
      // maxWaitMs bounds how long the batch's first item waits (lodash's debounce maxWait).
      addTimer(cx, { kind: 'max-wait', step: def.id, at: cx.at + def.maxWaitMs });
    }
    if (def.maxItems !== undefined && batch.items.length >= def.maxItems) {
      closeBatch(cx, def.id, flow);
      return;
    }
    if (def.idleMs !== undefined) {
      cx.s.timers = cx.s.timers.filter((t) => !(t.step === def.id && t.kind === 'idle'));
      addTimer(cx, { kind: 'idle', step: def.id, at: cx.at + def.idleMs });
    }
  },

  // A draining collect closes with what the inbox held for it (maybe nothing) instead of waiting.
  entered(cx, def, flow) {
    if (def.drain === true) closeBatch(cx, def.id, flow);
  },

  // Its only timers are idle and max-wait: either closes the batch.
  timer: (cx, def, _timer, flow) => closeBatch(cx, def.id, flow),
};

/** Completes a collect step with the items gathered so far. */
function closeBatch(cx: Cx, id: string, flow: Flow): void {
  clearTimers(cx, id);
  const st = stepState(cx, id);
  const items = st.batch?.items ?? [];
  delete st.batch;
  flow.complete(cx, id, items);
}
