/**
 * The Durable Object that holds one workflow instance: its snapshot in the object's storage, its
 * `wakeAt` as the object's alarm, its handlers run by the engine's runner inside the object's
 * request or alarm. Extend {@link WorkflowObject}, or let {@link createWorkflowObject} make the class.
 */
import {
  type AnyDefinition,
  createRunner,
  type FlowStore,
  InstanceFinishedError,
  isTerminal,
  NotFoundError,
  type Runner,
  type RunnerOptions,
  type Snapshot,
} from '@stepfold/engine';
import { alarmFor, createDurableObjectStore, type DurableObjectStore } from './do-store.js';
import { errorResponse, jsonResponse, parseRoute, readJson, readReason } from './http-api.js';
import type { DurableState } from './platform.js';

/** `Omit` over each member of a union (the runner's options are one). */
type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** What an alarm that failed reports to `onAlarmError`. */
export interface AlarmFailure {
  /** Failures in a row in this object since it was loaded (1 for the first). */
  failures: number;
  /** When the alarm rings again (epoch ms). */
  retryAt: number;
}

/**
 * Options of a workflow Durable Object: the runner's options without `store` (the object brings
 * its own), and what the store and the alarm take.
 */
export type WorkflowObjectOptions<W extends readonly AnyDefinition[] = readonly AnyDefinition[]> = OmitEach<
  RunnerOptions<W>,
  'store'
> & {
  /** The largest snapshot a write accepts, in bytes (default 127 KiB: see `DO_MAX_SNAPSHOT_BYTES`). */
  maxSnapshotBytes?: number | undefined;
  /**
   * The deployment's flow counts, for workflows with concurrency or rate limits: usually
   * `createDurableFlowStore(env.FLOW)` over the `FlowObject` binding.
   */
  flow?: FlowStore | undefined;
  /** Called when an alarm's tick throws; the alarm is set again with a backoff either way (default: `console.error`). */
  onAlarmError?: ((error: unknown, failure: AlarmFailure) => void) | undefined;
};

/** The longest wait between two tries of an alarm whose tick keeps failing. */
export const MAX_ALARM_BACKOFF_MS = 5 * 60_000;

/** One workflow instance per Durable Object: its HTTP API (`fetch`) and its timers (`alarm`). */
export class WorkflowObject<Env = unknown> {
  /** The store over this object's storage. */
  readonly store: DurableObjectStore;
  /** The runner over {@link store}; a subclass may call it from its own routes or RPC methods. */
  readonly runner: Runner;
  private readonly clock: () => number;
  private readonly onAlarmError: (error: unknown, failure: AlarmFailure) => void;
  private alarmFailures = 0;

  constructor(
    protected readonly ctx: DurableState,
    protected readonly env: Env,
    options: WorkflowObjectOptions,
  ) {
    const { maxSnapshotBytes, flow, onAlarmError, ...runnerOptions } = options;
    this.store = createDurableObjectStore(ctx.storage, { maxSnapshotBytes, flow });
    this.clock = runnerOptions.clock ?? (() => Date.now());
    this.onAlarmError =
      onAlarmError ??
      ((error, f) =>
        console.error(`stepfold: alarm failed (${f.failures} in a row), next try at ${f.retryAt}`, error));
    // The options were checked against the definitions where the user wrote them.
    this.runner = (createRunner as (o: RunnerOptions) => Runner)({
      ...runnerOptions,
      store: this.store,
    } as RunnerOptions);
  }

  /** Serves the HTTP API for this object's instance (the Worker has routed the request here). */
  async fetch(request: Request): Promise<Response> {
    try {
      const url = new URL(request.url);
      const r = parseRoute(request.method, url.pathname, url.searchParams, (w) =>
        this.runner.workflows.includes(w),
      );
      let s: Snapshot | null;
      switch (r.kind) {
        case 'start':
          return jsonResponse(
            201,
            await this.runner.start(
              r.workflow,
              r.id,
              await readJson(request),
              r.priority === undefined ? {} : { priority: r.priority },
            ),
          );
        case 'signal': {
          const sent = await this.runner.handle({
            type: 'signal',
            id: r.id,
            name: r.name,
            payload: await readJson(request),
            ...(r.signalId === undefined ? {} : { signalId: r.signalId }),
          });
          // A finished instance ignores the signal: say so (409), not "200, unchanged".
          if (!sent.written && isTerminal(sent.snapshot.status)) {
            throw new InstanceFinishedError(r.id, sent.snapshot.status);
          }
          s = sent.snapshot;
          break;
        }
        case 'callback':
          s = await this.runner.callback(r.token, await readJson(request));
          break;
        case 'cancel':
          s = await this.runner.cancel(r.id, await readReason(request));
          break;
        case 'abort':
          s = await this.runner.abort(r.id, await readReason(request));
          break;
        case 'get':
          s = await this.runner.get(r.id);
          if (!s) throw new NotFoundError(r.id);
          break;
      }
      return jsonResponse(200, s);
    } catch (e) {
      return errorResponse(e);
    }
  }

  /**
   * `wakeAt` came: ticks the instance (a retry's backoff, a timer, a deadline) and runs what that
   * dispatches. A write inside moves the alarm in its own transaction. A tick that throws (the
   * storage failed, the deployment lost the instance's definition) sets the alarm again with a
   * backoff, 1 s doubling to {@link MAX_ALARM_BACKOFF_MS}, rather than leave the platform's own
   * retries to give up and the instance asleep until its next request.
   */
  async alarm(): Promise<void> {
    const now = this.clock();
    let before: Snapshot | null;
    try {
      before = await this.store.current();
      if (!before) return;
      await this.runner.processDue(now, 1);
      this.alarmFailures = 0;
    } catch (error) {
      this.alarmFailures++;
      const retryAt = now + Math.min(1_000 * 2 ** (this.alarmFailures - 1), MAX_ALARM_BACKOFF_MS);
      await this.ctx.storage.setAlarm(retryAt);
      this.onAlarmError(error, { failures: this.alarmFailures, retryAt });
      return;
    }
    const after = await this.store.current();
    // Nothing was written (the alarm rang early, or the tick had nothing to do): the platform
    // drops an alarm once its handler returns, so set it again while the instance still waits.
    if (after && after.version === before.version) {
      const at = alarmFor(after);
      if (at !== null) await this.ctx.storage.setAlarm(at > now ? at : now + 1_000);
    }
  }
}

/** A class of workflow Durable Objects, as {@link createWorkflowObject} makes it. */
export type WorkflowObjectClass<Env = unknown> = new (ctx: DurableState, env: Env) => WorkflowObject<Env>;

/**
 * Makes the Durable Object class for these workflows and handlers. Export it under the class name
 * your wrangler.toml binds. Pass a function to build the options from `env` (secrets, bindings the
 * handlers call); it runs once per object, when the object is loaded.
 *
 * @example
 * export const WorkflowInstance = createWorkflowObject({ workflows: [order], handlers });
 */
export function createWorkflowObject<
  Env = unknown,
  const W extends readonly AnyDefinition[] = readonly AnyDefinition[],
>(
  options: WorkflowObjectOptions<W> | ((env: Env, ctx: DurableState) => WorkflowObjectOptions<W>),
): WorkflowObjectClass<Env> {
  return class extends WorkflowObject<Env> {
    constructor(ctx: DurableState, env: Env) {
      super(ctx, env, (typeof options === 'function' ? options(env, ctx) : options) as WorkflowObjectOptions);
    }
  };
}
