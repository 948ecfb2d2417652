import type { WorkflowDefinition } from '../definition/schema.js';
import { ValidationError } from '../errors.js';
import { DEFAULT_TASK_LEASE_MS } from '../reducer/task-lease.js';
import { childEffects, type RunnerKindSet } from './child-port.js';
import { taskRunner } from './execute-task.js';
import type {
  AnyDefinition,
  ChildWorkflowsCheck,
  Handler,
  HandlersFor,
  HandlerTableCheck,
  KindsCheck,
} from './handler-types.js';
import { InFlight } from './in-flight.js';
import type { RunnerPayloads } from './payload-port.js';
import { attachCore } from './port.js';
import { createRegistry } from './registry.js';
import type { Runner, RunnerCoreOptions } from './types.js';
import { WorkflowRunner } from './workflow-runner.js';
import { WriteEffects } from './write-effects.js';
import { WriteLoop } from './write-loop.js';

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
  // With a codec, everything the runner (and its worker) reads and writes goes through it. A bare
  // codec is refused by the types (`defineCodec` makes the option): a run-time check would cost
  // the edge bundle, which a runner without a codec should not pay.
  const store = options.codec?.wrap(options.store) ?? options.store;
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
  if (execute && !options.heartbeats) checkHeartbeats(registry.all());
  const inFlight = new InFlight();
  const leaseMs = checkedLease(options.taskLeaseMs);
  const { instrument } = options;
  // Bare hooks (or instrumentation) lack the code that calls them (wraps the runner's work in them).
  if (instrument && !instrument.traced) invalidOption('instrument', 'pass defineInstrumentation(yours)');
  if (options.hooks && !options.hooks.notify) invalidOption('hooks', 'pass defineHooks(yours)');
  // Flow limits, when a kind set brings them (the registry refuses limits otherwise): counted by
  // the store; a released slot ticks its waiters through this runner.
  const gate = options.kinds
    ?.find((k) => k.flowGate)
    ?.flowGate?.({
      store,
      clock,
      registry,
      tick: (id): Promise<unknown> => runner.tick(id),
    });
  // Offloading, bound to this store once; every value it touches checks this one variable.
  const payloads = boundPayloads(options.payloads)?.bind(store, options.codec);
  const writes = new WriteLoop({
    store,
    registry,
    clock,
    conflictRetries: options.conflictRetries ?? 20,
    handoff: !execute,
    instrument,
    payloads,
    gate,
    leaseMs,
  });
  const plain = taskRunner(clock, inFlight, store, options.callbacks);
  // Search attributes' wrapper sees the handler's own output, before offloading replaces it.
  const attempts = options.kinds?.find((k) => k.taskWrapper)?.taskWrapper?.(plain) ?? plain;
  const untraced = payloads ? payloads.task(attempts) : attempts;
  // Child workflows, when a kind set brings them (the registry refuses child steps otherwise). A
  // worker applies a child's end from the parent's inbox; a runner on its own writes it.
  const viaInbox = () => effects.driven;
  const children = childEffects(options.kinds, { store, registry, writes, clock, viaInbox, payloads });
  const effects = new WriteEffects({
    writes,
    registry,
    inFlight,
    handlers,
    // Traced here or nowhere: a runner without an instrument never asks again.
    runTask: instrument ? instrument.traced.task(untraced) : untraced,
    hooks: options.hooks,
    onWritten: options.onWritten,
    children,
    leaseMs,
    clock,
    heartbeats: options.heartbeats,
  });
  const runner = new WorkflowRunner<W>({
    store,
    registry,
    writes,
    effects,
    clock,
    execute,
    payloads,
    claimToken: crypto.randomUUID(),
    callbacks: options.callbacks,
    publish: options.kinds?.find((k) => k.publish)?.publish,
  });
  // What a worker drives, lent to the port (port.ts).
  return attachCore(runner, effects);
}

/**
 * The `payloads` option, checked: a payload store passed as it is (not wrapped in `offloading`)
 * has no `bind`, and would fail later with a bare TypeError.
 */
function boundPayloads(payloads: RunnerPayloads | undefined): RunnerPayloads | undefined {
  if (payloads === undefined || typeof (payloads as Partial<RunnerPayloads>).bind === 'function')
    return payloads;
  invalidOption(
    'payloads',
    'payloads takes offloading({ store }), not a payload store: wrap it in offloading(...)',
  );
}

/** Refuses an option of `createRunner` (`INVALID_OPTIONS`), saying what to pass. */
function invalidOption(path: string, message: string): never {
  throw new ValidationError('INVALID_OPTIONS', 'invalid createRunner options', [{ path, message }]);
}

/**
 * A step with `heartbeatMs` lives on its handler's heartbeats: a runner that runs handlers without
 * `heartbeats` would let each attempt lapse, so it is refused up front (`INVALID_OPTIONS`).
 */
function checkHeartbeats(definitions: readonly WorkflowDefinition[]): void {
  for (const def of definitions)
    for (const step of Object.values(def.steps))
      if ((step as { heartbeatMs?: number }).heartbeatMs !== undefined)
        invalidOption(
          'heartbeats',
          `step ${step.id} of workflow ${def.name} v${def.version} has heartbeatMs: pass createRunner({ heartbeats: handlerHeartbeats })`,
        );
}

/** Shortest `taskLeaseMs`: a lease has to outlast a renewal's store round trips with room to spare. */
export const MIN_TASK_LEASE_MS = 100;

/** The `taskLeaseMs` option, checked: an integer of at least {@link MIN_TASK_LEASE_MS} ms (default 10 000). */
function checkedLease(ms: number | undefined): number {
  if (ms === undefined) return DEFAULT_TASK_LEASE_MS;
  if (Number.isSafeInteger(ms) && ms >= MIN_TASK_LEASE_MS) return ms;
  invalidOption('taskLeaseMs', `must be an integer of at least ${MIN_TASK_LEASE_MS} (ms), got ${String(ms)}`);
}
