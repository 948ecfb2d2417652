import { evaluateCondition } from '../definition/condition.js';
import { mapData, readPath } from '../definition/data-path.js';
import type { StepOf } from '../definition/schema.js';
import type { SignalRecord } from '../snapshot.js';
import { failStep, pivotPassed } from './compensation.js';
import {
  addTimer,
  type Cx,
  clearTimers,
  dataView,
  deactivate,
  dispatchTask,
  finish,
  log,
  pushCompleted,
  spend,
  stepDef,
  stepState,
  terminate,
} from './transition-context.js';

/** Name of the signal a waiting step listens for. */
export function listensFor(def: ReturnType<typeof stepDef>): string | undefined {
  if (def.kind === 'wait' || def.kind === 'collect') return def.signal;
  if (def.kind === 'human') return def.signal ?? def.id;
  return undefined;
}

/** Puts a cursor on a step and runs everything that needs no outside input. */
export function enter(cx: Cx, id: string): void {
  spend(cx);
  const def = stepDef(cx, id);
  const prev = cx.s.steps[id];
  cx.s.steps[id] = { status: 'active', iteration: (prev?.iteration ?? 0) + 1, attempt: 0, startedAt: cx.at };
  cx.s.active.push(id);
  log(cx, 'step.started', id);
  switch (def.kind) {
    case 'task':
      dispatchTask(cx, id, 'run', 1);
      return;
    case 'choice': {
      const data = dataView(cx.s);
      const target = def.branches.find((b) => evaluateCondition(b.when, data))?.next ?? def.otherwise;
      if (target === undefined) {
        failStep(cx, id, {
          message: 'no choice branch matched',
          code: 'NO_BRANCH_MATCHED',
          retryable: false,
        });
        return;
      }
      finish(cx, id, 'completed');
      enter(cx, target);
      return;
    }
    case 'parallel': {
      const st = stepState(cx, id);
      st.branches = def.branches.map(() => 'running');
      st.output = def.branches.map(() => null);
      def.branches.forEach((entry, i) => {
        // An earlier branch may already have satisfied the join, or failed the workflow (which
        // may have ended it without touching this step's status).
        if (cx.s.active.includes(id) && st.branches?.[i] === 'running') enter(cx, entry);
      });
      return;
    }
    case 'wait':
    case 'human':
    case 'collect': {
      if (def.kind === 'collect') {
        // Its idle and max-wait timers start with the first item: an empty batch never closes.
        stepState(cx, id).batch = { items: [], since: cx.at, lastAt: cx.at, keys: [] };
      } else if (def.timeoutMs !== undefined) {
        addTimer(cx, { kind: 'timeout', step: id, at: cx.at + def.timeoutMs });
      }
      drainInbox(cx, id);
      return;
    }
    case 'sleep': {
      const until = def.ms !== undefined ? cx.at + def.ms : readPath(dataView(cx.s), def.until!);
      if (typeof until !== 'number' || !Number.isFinite(until)) {
        failStep(cx, id, {
          message: `sleep target ${def.until} is not a number`,
          code: 'INVALID_SLEEP_TARGET',
          retryable: false,
        });
        return;
      }
      addTimer(cx, { kind: 'sleep', step: id, at: Math.max(0, Math.trunc(until)) });
      return;
    }
    case 'savepoint':
      pushCompleted(cx, `savepoint:${id}`);
      finish(cx, id, 'completed');
      advance(cx, id);
      return;
    case 'succeed': {
      const output = def.output === undefined ? undefined : mapData(dataView(cx.s), def.output);
      finish(cx, id, 'completed', output);
      endPath(cx, id, output);
      return;
    }
    case 'fail':
      failStep(
        cx,
        id,
        {
          message: def.error?.message ?? `workflow failed at step ${id}`,
          code: def.error?.code ?? 'FAILED',
          retryable: false,
        },
        // An explicit failure is final: after a pivot it ends the workflow without rollback.
        pivotPassed(cx) || cx.wf.definition.onFailure === 'fail' ? 'fail' : 'compensate',
      );
      return;
    case 'continueAsNew':
      continueAsNew(cx, def);
      return;
  }
}

/** A step finished normally: follow `next`, or end the path it is on. */
export function advance(cx: Cx, id: string): void {
  const def = stepDef(cx, id);
  const next = 'next' in def ? def.next : undefined;
  if (next !== undefined) enter(cx, next);
  else endPath(cx, id, stepState(cx, id).output);
}

/** A path ran out of steps: the workflow completes, or a parallel branch is done. */
function endPath(cx: Cx, id: string, output: unknown): void {
  const chain = cx.wf.regions.get(id) ?? [];
  const inner = chain[chain.length - 1];
  if (!inner) {
    cx.s.output = output;
    terminate(cx, 'completed');
    return;
  }
  const pst = cx.s.steps[inner.parallel];
  if (pst?.status !== 'active' || pst.branches?.[inner.branch] !== 'running') return;
  pst.branches[inner.branch] = 'done';
  (pst.output as unknown[])[inner.branch] = output ?? null;
  const def = stepDef(cx, inner.parallel) as StepOf<'parallel'>;
  const join = def.join ?? 'all';
  const need = join === 'all' ? def.branches.length : join === 'any' ? 1 : join.atLeast;
  if (pst.branches.filter((b) => b === 'done').length < need) return;
  pst.branches.forEach((b, i) => {
    if (b === 'running') abandonBranch(cx, inner.parallel, i);
  });
  finish(cx, inner.parallel, 'completed');
  log(cx, 'step.completed', inner.parallel);
  advance(cx, inner.parallel);
}

/** Drops the live steps of a branch the join no longer needs; running handlers are detached. */
function abandonBranch(cx: Cx, parallel: string, branch: number): void {
  stepState(cx, parallel).branches![branch] = 'abandoned';
  const inBranch = (id: string) =>
    (cx.wf.regions.get(id) ?? []).some((r) => r.parallel === parallel && r.branch === branch);
  for (const id of [...cx.s.active]) if (inBranch(id)) deactivate(cx, id);
  for (const [id, st] of Object.entries(cx.s.steps)) {
    if (st.status === 'dlq' && inBranch(id)) {
      st.status = 'skipped';
      if (cx.s.error?.step === id) delete cx.s.error;
    }
  }
}

/** Hands buffered signals to a step that has just started listening. */
function drainInbox(cx: Cx, id: string): void {
  const name = listensFor(stepDef(cx, id));
  for (let i = 0; i < cx.s.inbox.length; ) {
    const st = cx.s.steps[id];
    if (st?.status !== 'active') return;
    const sig = cx.s.inbox[i]!;
    if (sig.name !== name) {
      i++;
      continue;
    }
    cx.s.inbox.splice(i, 1);
    deliverSignal(cx, id, sig);
  }
}

/** Whether a human step's payload says approve (true), reject (false), or neither (undefined). */
export function humanDecision(payload: unknown): boolean | undefined {
  if (typeof payload !== 'object' || payload === null) return undefined;
  const p = payload as { decision?: unknown; approved?: unknown };
  if (p.decision === 'approve' || p.approved === true) return true;
  if (p.decision === 'reject' || p.approved === false) return false;
  return undefined;
}

/** Delivers one signal to the step waiting for it. */
export function deliverSignal(cx: Cx, id: string, sig: SignalRecord): void {
  const def = stepDef(cx, id);
  log(cx, 'signal.received', id); // the name is the one the step listens for
  if (def.kind === 'collect') {
    collectItem(cx, def, sig);
    return;
  }
  const decision = def.kind === 'human' ? humanDecision(sig.payload) : true;
  if (decision === undefined) {
    // Only a buffered signal gets here (a live one is rejected as invalid): it decides nothing.
    log(cx, 'signal.ignored', id, { detail: 'no approve/reject decision' });
    return;
  }
  clearTimers(cx, id);
  if (decision === false) {
    stepState(cx, id).output = sig.payload;
    failStep(cx, id, { message: `rejected at ${id}`, code: 'REJECTED', retryable: false });
    return;
  }
  finish(cx, id, 'completed', sig.payload ?? null);
  advance(cx, id);
}

function collectItem(cx: Cx, def: StepOf<'collect'> & { id: string }, sig: SignalRecord): void {
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
    closeBatch(cx, def.id);
    return;
  }
  if (def.idleMs !== undefined) {
    cx.s.timers = cx.s.timers.filter((t) => !(t.step === def.id && t.kind === 'idle'));
    addTimer(cx, { kind: 'idle', step: def.id, at: cx.at + def.idleMs });
  }
}

/** Completes a collect step with the items gathered so far. */
export function closeBatch(cx: Cx, id: string): void {
  clearTimers(cx, id);
  const st = stepState(cx, id);
  const items = st.batch?.items ?? [];
  delete st.batch;
  finish(cx, id, 'completed', items);
  advance(cx, id);
}

/** Ends this run and starts the next one on the same instance, keeping buffered signals. */
function continueAsNew(cx: Cx, def: StepOf<'continueAsNew'>): void {
  const carried = def.carry === undefined ? cx.s.input : mapData(dataView(cx.s), def.carry);
  const input = carried === undefined ? null : carried; // as a start without input
  const s = cx.s;
  s.run += 1;
  s.input = input;
  s.steps = {};
  s.active = [];
  s.completed = [];
  s.tasks = {};
  s.timers = [];
  log(cx, 'workflow.continued-as-new', undefined, { detail: `run ${s.run}` });
  enter(cx, cx.wf.definition.start);
}
