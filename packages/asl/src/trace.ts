import type { StepPlan } from './plan.js';
import type { StateOutput } from './state-output.js';

// An execution's history in Step Functions' shape, built from what the ASL handler did, in the
// order it did it: each generated step's run becomes the events AWS records for that part of the
// state (`TaskStateEntered`, `LambdaFunctionScheduled`, `MapIterationStarted`, ...), with the
// states' inputs and outputs. Events inside a Parallel or Map carry the block they ran in.

/** One run of a generated step, as the handler reports it. */
export interface AslTraceEntry {
  instanceId: string;
  step: string;
  plan: StepPlan;
  /** The state's raw input. */
  input: unknown;
  /** The output written, or undefined when the step failed the execution. */
  output?: StateOutput | undefined;
  /** Set when the handler threw (an error no Retry or Catch took, at the top). */
  thrown?: { error: string | null; cause: string } | undefined;
  /** The Lambda calls the run made, in order. */
  calls: Array<{ kind: 'lambda-arn' | 'lambda-invoke'; ok: boolean }>;
  /** A Map iteration's index and Map state, when the instance is one. */
  iteration?: { index: number; map: string } | undefined;
  /** Whether this run is a retry of the state (no new `…StateEntered`). */
  retry: boolean;
  /** A Map's second step: the indexes of the iterations that ended failed. */
  failedItems?: number[] | undefined;
}

/** One event of the history: its AWS type, and the state and Map index where AWS records them. */
export interface AslEvent {
  type: string;
  state?: string;
  index?: number;
  /** The outermost Parallel or Map block it ran in (`p1`, `m2`, ...). */
  block?: string;
}

/** One entry of the states' input and output. */
export interface AslStateIO {
  state: string;
  event: string;
  input?: unknown;
  output?: unknown;
  assignedVariables?: Record<string, unknown>;
  block?: string;
}

/** The history of a run: events, state I/O, and how it ended. */
export interface AslHistory {
  events: AslEvent[];
  stateIO: AslStateIO[];
}

/** Collects trace entries and turns them into a history. */
export class AslTrace {
  readonly entries: AslTraceEntry[] = [];

  /** Adds one step run (the handler's `trace` option). */
  readonly record = (entry: AslTraceEntry): void => {
    this.entries.push(entry);
  };

  /** The history so far; `end` adds the execution's last event. */
  history(end?: 'succeeded' | 'failed'): AslHistory {
    const events: AslEvent[] = [{ type: 'ExecutionStarted' }];
    const stateIO: AslStateIO[] = [];
    let blocks = 0;
    let open: string | undefined;
    // Iterations seen but not yet closed, by `map/index`.
    const iterations = new Set<string>();
    for (const e of this.entries) {
      const p = e.plan;
      if (p.role === 'again') continue;
      const top = p.scope.kind === 'top' && e.iteration === undefined;
      const block = top ? undefined : open;
      const type = p.state.Type;
      const push = (ev: AslEvent) => events.push(block ? { ...ev, block } : ev);
      const io = (x: AslStateIO) => stateIO.push(block ? { ...x, block } : x);
      if (e.iteration && !iterations.has(`${e.iteration.map}/${e.iteration.index}`)) {
        iterations.add(`${e.iteration.map}/${e.iteration.index}`);
        push({ type: 'MapIterationStarted', state: e.iteration.map, index: e.iteration.index });
      }
      const out = e.output;
      if (p.role === 'after') {
        if (type === 'Map') {
          for (const key of [...iterations].filter((k) => k.startsWith(`${p.name}/`))) {
            iterations.delete(key);
            const index = Number(key.slice(p.name.length + 1));
            const failed = e.failedItems?.includes(index) ?? false;
            const ev: AslEvent = {
              type: failed ? 'MapIterationFailed' : 'MapIterationSucceeded',
              state: p.name,
              index,
            };
            // Iterations end inside the block their Map opened.
            const inner = top ? open : block;
            events.push(inner ? { ...ev, block: inner } : ev);
          }
        }
        // The state's own end events are outside its block.
        if (top) open = undefined;
        const outer = top ? undefined : block;
        const pushOut = (ev: AslEvent) => events.push(outer ? { ...ev, block: outer } : ev);
        if (out?.route === 'retry') continue;
        const failed =
          e.thrown !== undefined || out?.route === 'error' || out?.route?.startsWith('catch:') === true;
        pushOut({ type: `${type}State${failed ? 'Failed' : 'Succeeded'}` });
        if (out && out.route !== 'error') {
          pushOut({ type: `${type}StateExited`, state: p.name });
          const x: AslStateIO = {
            state: p.name,
            event: `${type}StateExited`,
            output: out.value,
            ...assigned(out),
          };
          stateIO.push(outer ? { ...x, block: outer } : x);
        }
        continue;
      }
      if (!e.retry) {
        push({ type: `${type}StateEntered`, state: p.name });
        io({ state: p.name, event: `${type}StateEntered`, input: e.input });
      }
      for (const c of e.calls) {
        const prefix = c.kind === 'lambda-arn' ? 'LambdaFunction' : 'Task';
        push({ type: `${prefix}Scheduled` });
        push({ type: `${prefix}Started` });
        push({ type: `${prefix}${c.ok ? 'Succeeded' : 'Failed'}` });
      }
      if (type === 'Map' || type === 'Parallel') {
        if (!out) continue;
        push({ type: `${type}StateStarted` });
        if (top) open = `${type === 'Map' ? 'm' : 'p'}${++blocks}`;
        continue;
      }
      if (!out || type === 'Fail' || out.route === 'retry' || out.route === 'error') continue;
      push({ type: `${type}StateExited`, state: p.name });
      io({ state: p.name, event: `${type}StateExited`, output: out.value, ...assigned(out) });
    }
    if (end) events.push({ type: end === 'succeeded' ? 'ExecutionSucceeded' : 'ExecutionFailed' });
    return { events, stateIO };
  }
}

function assigned(out: StateOutput): Partial<AslStateIO> {
  // AWS lists the assigned variables only when there are some.
  return out.assigned !== undefined && Object.keys(out.assigned).length > 0
    ? { assignedVariables: out.assigned }
    : {};
}
