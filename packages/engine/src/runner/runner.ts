import { checkDeclared, declaredSchemas } from '../definition/declared-schemas.js';
import type { WorkflowDefinition } from '../definition/schema.js';
import { isStepfoldError, NotFoundError } from '../errors.js';
import { parseEvent, type WorkflowEvent } from '../events.js';
import { assertValidId } from '../ids.js';
import { dispatchedBy } from '../reducer/task-view.js';
import { CHILD_HANDLER, isTerminal, type LogEntry, type Snapshot, type TaskState } from '../snapshot.js';
import { childEffects, type RunnerKindSet } from './child-port.js';
import { expectedCheck, workflowClient } from './client.js';
import { taskRunner } from './execute-task.js';
import type {
  AnyDefinition,
  ChildWorkflowsCheck,
  Handler,
  HandlersFor,
  HandlerTableCheck,
  KindsCheck,
} from './handler-types.js';
import { notifyHooks } from './hooks.js';
import { InFlight } from './in-flight.js';
import { attachCore, type RunnerCore, type TaskHand } from './port.js';
import { createRegistry } from './registry.js';
import { acceptingDefinitions } from './send.js';
import { tracedTask } from './traced.js';
import type { Runner, RunnerCoreOptions, RunnerMessage } from './types.js';
import { Work } from './work.js';

const ignore = () => {};

import { loadInstance } from './load.js';
import { WriteLoop } from './write-loop.js';
import type { OnWrite } from './write-request.js';

/**
 * Creates a runner over a store. Validates the workflows and that every handler they name exists
 * (for typed definitions the compiler checks the handler map too: missing or mistyped; extra
 * handlers, of workflows this runner does not register, are allowed unless `strictHandlers`).
 * Each call writes its event, runs the handlers that write dispatched (and those their results
 * dispatch), and resolves with the snapshot once they have all reported back.
 *
 * @example
 * const runner = createRunner({
 *   store: createMemoryStore(),
 *   workflows: [order],
 *   handlers: { reserveStock: async ({ input }) => ({ reservation: `R-${input.sku}` }), ... },
 *   onWritten: (s) => console.log(s.id, s.version, s.status),
 * });
 * const done = await runner.start('order', 'order-42', { sku: 'BOOK-7' });
 * await runner.client(order).signal('order-42', 'shipped', { tracking: 'T-1' });
 */
export function createRunner<
  const W extends readonly AnyDefinition[],
  H extends Partial<HandlersFor<W>> = HandlersFor<W>,
  const E extends boolean = true,
  // biome-ignore lint/suspicious/noExplicitAny: any kind set; its own kinds are read from its rules
  const KS extends readonly RunnerKindSet<any>[] = readonly [],
  const S extends boolean = false,
>(
  // One object type for a literal (or absent) `execute`, not a union: a handler missing from an
  // executing runner is then reported on `handlers`, naming it, not as a mismatch with
  // `execute: false`. With `execute: boolean` (a `RunnerOptions` value) it is the union again.
  options: RunnerCoreOptions<W> & { kinds?: KS | undefined; strictHandlers?: S | undefined } & NoInfer<
      ChildWorkflowsCheck<W> & KindsCheck<W, KS>
    > &
    (E extends false
      ? { execute?: E | undefined; handlers?: H | undefined }
      : { execute?: E | undefined; handlers: H } & NoInfer<{
          handlers: HandlerTableCheck<H, HandlersFor<W>, S>;
        }>),
): Runner<W> {
  const { store, hooks, onWritten } = options;
  const handlers = (options.handlers ?? {}) as unknown as Record<string, Handler>;
  const clock = options.clock ?? (() => Date.now());
  const execute = options.execute ?? true;
  // A runner that hands every task off never calls a handler: it need not be given any.
  const registry = createRegistry({
    workflows: options.workflows,
    handlerNames: execute ? new Set(Object.keys(handlers)) : undefined,
    kinds: options.kinds,
    strict: options.strictHandlers === true,
  });
  const inFlight = new InFlight();
  const { instrument } = options;
  // Offloading, bound to this store once; every value it touches checks this one variable.
  const payloads = options.payloads?.bind(store);
  const writes = new WriteLoop({
    store,
    registry,
    clock,
    conflictRetries: options.conflictRetries ?? 20,
    handoff: !execute,
    instrument,
    payloads,
  });
  const attempts = taskRunner(clock, inFlight);
  const untraced = payloads ? payloads.task(attempts) : attempts;
  // Traced here or nowhere: a runner without an instrument never asks again.
  const runTask = instrument ? tracedTask(instrument, untraced) : untraced;
  let executor: TaskHand | undefined;
  let observer: ((s: Snapshot) => void) | undefined;
  // Whose claims `processDue` takes: it gives back only its own.
  const claimToken = crypto.randomUUID();
  // Child workflows, when a kind set brings them (the registry refuses child steps otherwise). A
  // worker applies a child's end from the parent's inbox; a runner on its own writes it.
  const children = childEffects(options.kinds, {
    store,
    registry,
    writes,
    clock,
    viaInbox: () => executor !== undefined,
    payloads,
  });

  /** After a successful write: observers, aborts of handlers the write took away, the tasks it dispatched. */
  function written(
    call: Work,
    s: Snapshot,
    transitions: readonly LogEntry[],
    before: number,
    dueAt: number | null,
  ): void {
    call.latest.set(s.id, s);
    if (!call.dueAt.has(s.id)) call.dueAt.set(s.id, dueAt);
    notifyHooks(hooks, s, transitions);
    onWritten?.(s, transitions);
    observer?.(s);
    inFlight.written(s);
    if (children?.concerns(s, transitions)) {
      const effects = children.written(s, transitions, reporter(call)).catch(ignore);
      inFlight.hold(effects);
      call.hold(effects);
    }
    for (const task of dispatchedBy(s, before)) {
      // Queued: written for a worker to take (this runner hands its tasks off).
      if (task.queued) continue;
      // Counted in the call and the runner until it ends: `runAndWrite`'s end, or the job's.
      call.enter();
      inFlight.enter();
      // A worker's pool runs it when it has room; else it runs now (a result that cannot be
      // written is left to the task's deadline, which dispatches it again).
      if (executor) executor(s, task, call);
      else runAndWrite(call, s, task).catch(ignore);
    }
  }

  /** Ends one task counted in `call` and the runner (run, dropped, or given back). */
  function finish(call: Work): void {
    call.leave();
    inFlight.leave();
  }

  /**
   * Runs the handler of `task`, which `s` dispatched, and writes its result; resolves with how the
   * handler ended. The task was counted when dispatched: this ends it, after the write's report.
   */
  async function runAndWrite(call: Work, s: Snapshot, task: TaskState): Promise<'completed' | 'failed'> {
    try {
      // A child workflow's task is the runner's own effect; a failure is left to the task's deadline.
      if (task.handler === CHILD_HANDLER) {
        await children?.run(s, task, reporter(call));
        return 'completed';
      }
      const definition = registry.forSnapshot(s);
      const r = await runTask({ handler: handlers[task.handler]!, definition, snapshot: s, task });
      // Written back onto `s`, the snapshot that dispatched it: this runner's reducer made it.
      await writes.apply({
        id: s.id,
        event: r.event,
        onWrite: reporter(call),
        base: { snapshot: s, origin: 'reducer' },
        merge: true,
      });
      return r.outcome;
    } finally {
      finish(call);
    }
  }

  /** What a call's writes report to: everything a write of that call sets off is counted in it. */
  const reporter = (call: Work): OnWrite => {
    call.report ??= (s, transitions, before, dueAt) => written(call, s, transitions, before, dueAt);
    return call.report;
  };

  /** Waits for the handlers a call started (and the ones their results started); then the instance. */
  async function settled(id: string, call: Work): Promise<Snapshot> {
    while (call.pending) await call.drained();
    // A finished instance we wrote ourselves cannot have moved on: skip the read back.
    const mine = call.latest.get(id);
    if (mine && isTerminal(mine.status)) return mine;
    const s = await loadInstance(store, id);
    if (!s) throw new NotFoundError(id);
    return s;
  }

  /**
   * The one implementation of every event a caller can send. Resolves with the stored snapshot
   * the event was applied to (or that refused it), where the write loop had it in hand.
   */
  async function dispatch(m: RunnerMessage, call: Work): Promise<Snapshot | undefined> {
    const onWrite = reporter(call);
    // Large values offloaded once, before any try (a re-applied write carries the same reference);
    // `m` keeps them as given, for the declared-schema checks.
    const stored = (payloads ? await payloads.message(m) : m) as {
      payload?: unknown;
      inputPatch?: Record<string, unknown> | undefined;
    };
    const plain = <T extends object>(o: T) =>
      Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
    switch (m.type) {
      case 'start':
        return writes.create({ instance: m, onWrite });
      case 'signal': {
        assertValidId(m.id);
        const event = (at: number): WorkflowEvent =>
          plain({ type: 'signal', at, name: m.name, payload: stored.payload, id: m.signalId });
        const start = m.startIfMissing;
        if (start) {
          const existing = await loadInstance(store, m.id);
          const restart = existing !== null && start.reuseFinished === true && isTerminal(existing.status);
          if (!existing || restart) {
            try {
              const instance = { ...start, id: m.id, reuseFinished: restart };
              return await writes.create({ instance, alsoApply: event(clock()), onWrite });
            } catch (e) {
              // Someone else created or restarted it first: deliver the signal to theirs.
              if (!isStepfoldError(e, 'ALREADY_EXISTS')) throw e;
            }
          }
        }
        const check = async (current: Snapshot, definition: WorkflowDefinition) => {
          const schema = declaredSchemas(definition)?.signals[m.name];
          if (schema && !isTerminal(current.status))
            await checkDeclared(schema, m.payload, `signals.${m.name}`);
        };
        return writes.apply({ id: m.id, event, onWrite, check: expectedCheck(m, check) });
      }
      case 'tick':
        return writes.apply({ id: m.id, event: (at) => ({ type: 'tick', at: m.now ?? at }), onWrite });
      case 'cancel':
      case 'abort':
        return writes.apply({
          id: m.id,
          event: (at) => plain({ type: m.type, at, reason: m.reason }),
          onWrite,
          check: expectedCheck(m),
        });
      case 'requeue':
        return writes.apply({
          id: m.id,
          event: (at) =>
            plain({
              type: 'requeue',
              at,
              step: m.step,
              inputPatch: stored.inputPatch as Record<string, unknown> | undefined,
            }),
          onWrite,
          check: expectedCheck(m, m.inputPatch && payloads?.checkPatch),
        });
    }
  }

  async function handle(m: RunnerMessage, call = new Work()): Promise<Snapshot> {
    const stored = await dispatch(m, call);
    // A runner that hands its tasks off has no handlers to wait for: it answers with its write.
    if (m.wait !== 'write' && execute) return settled(m.id, call);
    // The handlers go on; `inFlight` keeps them (and `idle()` waits for them).
    const mine = call.latest.get(m.id) ?? stored;
    if (mine) return mine;
    const s = await loadInstance(store, m.id); // the event did not apply: what is stored
    if (!s) throw new NotFoundError(m.id);
    return s;
  }

  // What a worker drives, lent to the port (port.ts).
  const core: RunnerCore = {
    writes,
    inFlight,
    report: reporter,
    runTask: runAndWrite,
    finish,
    attach(hand, observe) {
      if (executor) throw new Error('this runner already has an executor (one worker per runner)');
      executor = hand;
      observer = observe;
      return () => {
        if (executor !== hand) return;
        executor = undefined;
        observer = undefined;
      };
    },
  };

  const runner: Runner<W> = {
    start: (workflow, id, input, o = {}) => handle({ type: 'start', id, workflow, input, ...o }),
    signal: (id, name, payload, o = {}) => handle({ type: 'signal', id, name, payload, ...o }),
    async send(id, name, payload, o = {}) {
      assertValidId(id);
      if (store.inbox) {
        const accept = await acceptingDefinitions(registry, name, payload);
        const stored = payloads && accept.length ? await payloads.offload(id, payload) : payload;
        const event = parseEvent({ type: 'signal', at: clock(), name, payload: stored, id: o.signalId });
        if (accept.length && (await store.inbox.send(id, event, accept))) return;
      }
      // No inbox, or refused as sent: the signal's own path, which applies it or says why not.
      await handle({ type: 'signal', id, name, payload, ...o, wait: 'write' });
    },
    cancel: (id, reason) => handle({ type: 'cancel', id, reason }),
    abort: (id, reason) => handle({ type: 'abort', id, reason }),
    requeue: (id, o = {}) => handle({ type: 'requeue', id, ...o }),
    tick: (id, now) => handle({ type: 'tick', id, now }),
    async get(id, o = {}) {
      assertValidId(id);
      const s = await loadInstance(store, id);
      return s && payloads && o.resolve !== false ? payloads.resolve(s) : s;
    },
    async handle(m) {
      const call = new Work();
      const snapshot = await handle(m, call);
      return { snapshot, wakeAt: snapshot.wakeAt, written: call.latest.has(m.id) };
    },
    async processDue(now, limit = 100) {
      const at = now ?? clock();
      const ids = await store.listDue(at, limit, { token: claimToken });
      const call = new Work();
      const failures: unknown[] = [];
      await Promise.all(
        ids.map((id) =>
          writes
            .apply({ id, event: (): WorkflowEvent => ({ type: 'tick', at }), onWrite: reporter(call) })
            .catch((e) => {
              if (!isStepfoldError(e, 'NOT_FOUND')) failures.push(e);
              // Not ticked: give the claim back so a runner that can step it need not wait out the lease.
              return store.claims?.release([id], claimToken).catch(() => {});
            }),
        ),
      );
      while (call.pending) await call.drained();
      // One instance this runner cannot step (say, on a version it no longer registers) must not
      // keep the others from being ticked: they all were; then the first error is reported.
      if (failures.length) throw failures[0];
      return ids;
    },
    // The second overload of `client` exists only for the compiler's message: one implementation.
    client: ((definition: W[number]) =>
      workflowClient(definition, { runner, registry, handle: (m) => handle(m) })) as Runner<W>['client'],
    idle: () => inFlight.idle(),
    workflows: registry.names(),
    stats: writes.stats,
    store,
  };
  return attachCore(runner, core);
}
