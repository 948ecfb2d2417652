import { checkDeclared, declaredSchemas } from '../definition/declared-schemas.js';
import { checkInputPatch } from '../definition/input-patch.js';
import type { WorkflowDefinition } from '../definition/schema.js';
import { InstanceFinishedError, isStepfoldError, NotFoundError, StepNotWaitingError } from '../errors.js';
import { parseEvent, type WorkflowEvent } from '../events.js';
import { assertValidId } from '../ids.js';
import { type FinishedStatus, isTerminal, type Snapshot } from '../snapshot.js';
import type { Store } from '../store/store.js';
import { type CallbackPort, noCallbacks } from './callback-port.js';
import { expectedCheck, workflowClient } from './client.js';
import type { AnyDefinition } from './handler-types.js';
import { loadInstance } from './load.js';
import type { PayloadPort } from './payload-port.js';
import { noTriggers, type PublishPort } from './publish-port.js';
import type { WorkflowRegistry } from './registry.js';
import { acceptingDefinitions } from './send.js';
import type {
  CallOptions,
  GetOptions,
  HandleResult,
  PublishedEvent,
  PublishResult,
  Runner,
  RunnerMessage,
  RunnerStats,
  SendOptions,
  SendResult,
  SignalOptions,
  StartOptions,
  WorkflowNameOf,
} from './types.js';
import { Work } from './work.js';
import type { WriteEffects } from './write-effects.js';
import type { WriteLoop } from './write-loop.js';

/** What a {@link WorkflowRunner} is made of (`createRunner` assembles them). */
export interface RunnerParts {
  store: Store;
  registry: WorkflowRegistry;
  writes: WriteLoop;
  /** What follows each write: observers, child effects, the tasks dispatched (the core a worker drives). */
  effects: WriteEffects;
  clock: () => number;
  /** Whether this runner runs the handlers of the tasks it dispatches (else it hands them off). */
  execute: boolean;
  payloads?: PayloadPort | undefined;
  /** Whose claims `processDue` takes: it gives back only its own. */
  claimToken: string;
  /** Callback tokens, when the runner was given them. */
  callbacks?: CallbackPort | undefined;
  /** `runner.publish`, from the `eventTriggers` kind set; none: it refuses with INVALID_OPTIONS. */
  publish?: PublishPort | undefined;
}

/** Drops the keys whose value is undefined, so an event carries only what was given. */
const plain = <T extends object>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

/** `send`'s answer for a finished instance: resolved, or thrown when the caller asked. */
function finishedResult(id: string, finished: FinishedStatus, reject: boolean | undefined): SendResult {
  if (reject) throw new InstanceFinishedError(id, finished);
  return { status: 'finished', finished };
}

/**
 * What a requeue with an input patch checks, on the snapshot it would apply to: an offloaded input
 * cannot be patched, and the patched input must fit the declared input (as given, before any
 * offloading), else `INVALID_INPUT` and nothing is written.
 */
function patchCheck(patch: Record<string, unknown>, payloads: PayloadPort | undefined) {
  return async (current: Snapshot, definition: WorkflowDefinition): Promise<void> => {
    await payloads?.checkPatch(current);
    const schema = declaredSchemas(definition)?.input;
    if (schema) await checkInputPatch(schema, current.input, patch);
  };
}

/**
 * A runner over a store: each call writes its event through the write loop and, for an executing
 * runner, waits for the handlers that write set off. `createRunner` makes one; see {@link Runner}.
 */
export class WorkflowRunner<W extends readonly AnyDefinition[]> implements Runner<W> {
  readonly workflows: WorkflowNameOf<W>[];
  readonly stats: RunnerStats;
  readonly store: Store;
  /** One workflow version's typed view (the second overload exists only for the compiler's message). */
  readonly client: Runner<W>['client'];

  constructor(private readonly parts: RunnerParts) {
    this.store = parts.store;
    this.stats = parts.writes.stats;
    this.workflows = parts.registry.names() as WorkflowNameOf<W>[];
    this.client = ((definition: W[number]) =>
      workflowClient(definition, {
        runner: this as unknown as Runner,
        registry: parts.registry,
        handle: (m) => this.answer(m),
      })) as Runner<W>['client'];
  }

  start(workflow: WorkflowNameOf<W>, id: string, input?: unknown, o: StartOptions = {}): Promise<Snapshot> {
    return this.answer({ type: 'start', id, workflow, input, ...o });
  }

  signal(id: string, name: string, payload?: unknown, o: SignalOptions = {}): Promise<Snapshot> {
    return this.answer({ type: 'signal', id, name, payload, ...o } as RunnerMessage);
  }

  async send(id: string, name: string, payload?: unknown, o: SendOptions = {}): Promise<SendResult> {
    assertValidId(id);
    const { store, registry, payloads, clock } = this.parts;
    const { rejectFinished, ...signal } = o;
    if (store.inbox) {
      const accept = await acceptingDefinitions(registry, name, payload);
      const stored = payloads && accept.length ? await payloads.offload(id, payload) : payload;
      const event = parseEvent({ type: 'signal', at: clock(), name, payload: stored, id: o.signalId });
      const sent = accept.length ? await store.inbox.send(id, event, accept) : false;
      if (sent === true) return { status: 'queued' };
      // The write saw the instance finished, on a definition listening for the name: what the
      // signal's path would conclude after reading it, so it is not read.
      if (sent !== false) return finishedResult(id, sent, rejectFinished);
    }
    // No inbox, or refused as sent: the signal's own path, which applies it or says why not.
    const call = new Work();
    const snapshot = await this.answer({ type: 'signal', id, name, payload, ...signal, wait: 'write' }, call);
    if (call.latest.has(id)) return { status: 'applied', snapshot };
    if (isTerminal(snapshot.status)) return finishedResult(id, snapshot.status, rejectFinished);
    return { status: 'unchanged', snapshot };
  }

  async callback(token: string, data?: unknown, o: CallOptions = {}): Promise<Snapshot> {
    const { callbacks, clock } = this.parts;
    if (!callbacks) throw noCallbacks('runner.callback');
    const c = await callbacks.verify(token, clock());
    // The nonce makes the signal's id: should the step wait again at the same iteration (it
    // cannot, but a hand-written store might replay), the reducer drops a second delivery.
    return this.answer({
      ...o,
      type: 'signal',
      id: c.instance,
      name: c.signal,
      payload: data,
      signalId: `callback:${c.nonce}`,
      ifWaiting: { step: c.step, iteration: c.iteration, run: c.run },
    } as RunnerMessage);
  }

  publish(event: PublishedEvent, o: CallOptions = {}): Promise<PublishResult> {
    const { publish, registry } = this.parts;
    if (!publish) return Promise.reject(noTriggers());
    return publish(
      registry,
      (w, id, input, version) => this.start(w as never, id, input, { ...o, version }),
      event,
    );
  }

  cancel(id: string, reason?: string): Promise<Snapshot> {
    return this.answer({ type: 'cancel', id, reason });
  }

  abort(id: string, reason?: string): Promise<Snapshot> {
    return this.answer({ type: 'abort', id, reason });
  }

  requeue(
    id: string,
    o: Omit<Extract<RunnerMessage, { type: 'requeue' }>, 'type' | 'id'> = {},
  ): Promise<Snapshot> {
    return this.answer({ type: 'requeue', id, ...o });
  }

  tick(id: string, now?: number): Promise<Snapshot> {
    return this.answer({ type: 'tick', id, now });
  }

  async get(id: string, o: GetOptions = {}): Promise<Snapshot | null> {
    assertValidId(id);
    const s = await loadInstance(this.parts.store, id);
    const { payloads } = this.parts;
    return s && payloads && o.resolve !== false ? payloads.resolve(s) : s;
  }

  async handle(m: RunnerMessage): Promise<HandleResult> {
    const call = new Work();
    const snapshot = await this.answer(m, call);
    return { snapshot, wakeAt: snapshot.wakeAt, written: call.latest.has(m.id) };
  }

  async processDue(now?: number, limit = 100): Promise<string[]> {
    const { store, writes, effects, clock, claimToken } = this.parts;
    const at = now ?? clock();
    const ids = await store.listDue(at, limit, { token: claimToken });
    const call = new Work();
    const failures: unknown[] = [];
    await Promise.all(
      ids.map((id) =>
        writes
          .apply({ id, event: (): WorkflowEvent => ({ type: 'tick', at }), onWrite: effects.report(call) })
          .catch((e) => {
            if (!isStepfoldError(e, 'NOT_FOUND')) failures.push(e);
            // A row that cannot be read or stepped keeps its claim until the lease lapses, so it
            // does not come back in every call.
            if (isStepfoldError(e, 'INVALID_SNAPSHOT')) return;
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
  }

  idle(): Promise<void> {
    return this.parts.effects.inFlight.idle();
  }

  /** Writes `m` and answers with the snapshot: once its handlers reported back, or (handing off, `wait: 'write'`) once written. */
  private async answer(m: RunnerMessage, call = new Work()): Promise<Snapshot> {
    const stored = await this.dispatch(m, call);
    // A runner that hands its tasks off has no handlers to wait for: it answers with its write.
    if (m.wait !== 'write' && this.parts.execute) return this.settled(m.id, call);
    // The handlers go on; `inFlight` keeps them (and `idle()` waits for them). The answer is the
    // event's own write, even if a handler's result (not waited for) was written meanwhile.
    const mine = stored ?? call.latest.get(m.id);
    if (mine) return mine;
    return this.stored(m.id); // the event did not apply: what is stored
  }

  /** Waits for the handlers a call started (and the ones their results started); then the instance. */
  private async settled(id: string, call: Work): Promise<Snapshot> {
    while (call.pending) await call.drained();
    // A finished instance we wrote ourselves cannot have moved on: skip the read back.
    const mine = call.latest.get(id);
    if (mine && isTerminal(mine.status)) return mine;
    return this.stored(id);
  }

  /** The stored instance; NOT_FOUND if there is none. */
  private async stored(id: string): Promise<Snapshot> {
    const s = await loadInstance(this.parts.store, id);
    if (!s) throw new NotFoundError(id);
    return s;
  }

  /**
   * The one implementation of every event a caller can send. Resolves with the stored snapshot
   * the event was applied to (or that refused it), where the write loop had it in hand.
   */
  private async dispatch(m: RunnerMessage, call: Work): Promise<Snapshot | undefined> {
    const { writes, payloads } = this.parts;
    const onWrite = this.parts.effects.report(call);
    // Large values offloaded once, before any try (a re-applied write carries the same reference);
    // `m` keeps them as given, for the declared-schema checks.
    const stored = (payloads ? await payloads.message(m) : m) as {
      payload?: unknown;
      inputPatch?: Record<string, unknown> | undefined;
    };
    switch (m.type) {
      case 'start':
        return writes.create({ instance: m, onWrite });
      case 'signal':
        return this.signalMessage(m, stored.payload, call);
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
          check: expectedCheck(m, m.inputPatch && patchCheck(m.inputPatch, payloads)),
        });
    }
  }

  /** A signal: created with its instance when `startIfMissing` says so, else applied to the stored one. */
  private async signalMessage(
    m: Extract<RunnerMessage, { type: 'signal' }>,
    payload: unknown,
    call: Work,
  ): Promise<Snapshot | undefined> {
    assertValidId(m.id);
    const { writes, store, clock } = this.parts;
    const onWrite = this.parts.effects.report(call);
    const event = (at: number): WorkflowEvent =>
      plain({ type: 'signal', at, name: m.name, payload, id: m.signalId });
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
      if (m.ifWaiting) assertWaiting(current, m.ifWaiting);
      const schema = declaredSchemas(definition)?.signals[m.name];
      if (schema && !isTerminal(current.status)) await checkDeclared(schema, m.payload, `signals.${m.name}`);
    };
    return writes.apply({ id: m.id, event, onWrite, check: expectedCheck(m, check) });
  }
}

/** Refuses (`STEP_NOT_WAITING`) unless `step` holds a cursor of `s` at the iteration and run given. */
function assertWaiting(s: Snapshot, w: NonNullable<SignalOptions['ifWaiting']>): void {
  const state = s.steps[w.step];
  let why: string | undefined;
  if (isTerminal(s.status)) why = `the instance is ${s.status}`;
  else if (w.run !== undefined && s.run !== w.run) why = `the instance is in run ${s.run}, not ${w.run}`;
  else if (!s.active.includes(w.step) || state === undefined) why = 'the step is not active';
  else if (w.iteration !== undefined && state.iteration !== w.iteration)
    why = `the step is at iteration ${state.iteration}, not ${w.iteration}`;
  if (why) throw new StepNotWaitingError(s.id, w.step, why);
}
