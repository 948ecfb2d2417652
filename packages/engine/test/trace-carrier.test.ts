import { AsyncLocalStorage } from 'node:async_hooks';
import {
  composition,
  createMemoryStore,
  createRunner,
  defineInstrumentation,
  type EventInfo,
  type EventOutcome,
  eventSchema,
  isStepfoldError,
  parseEvent,
  type Snapshot,
  step,
  TaskError,
  type TaskInfo,
  type TaskOutcome,
  type WorkflowEvent,
  workflow,
} from '@stepfold/engine';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { referenceStep } from '../src/reducer/reducer.js';
import { orderWorkflow } from './fixtures.js';
import { blockArb, compile, intentArb, type Task, toEvent } from './saga-gen.js';

// The start event may carry a trace carrier (W3C traceparent/tracestate); the reducer keeps it as
// `snapshot.trace`, and a runner with an `instrument` fills it and wraps events and handler runs.

const TRACE = {
  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  tracestate: 'rojo=00f067aa0ba902b7',
};
const start = (trace?: unknown): WorkflowEvent =>
  ({
    type: 'start',
    at: 1,
    id: 'o-1',
    input: { amount: 5 },
    ...(trace === undefined ? {} : { trace }),
  }) as WorkflowEvent;

function invalid(f: () => unknown, code: string): Array<{ path: string }> {
  try {
    f();
  } catch (e) {
    expect(isStepfoldError(e, code as never)).toBe(true);
    return (e as { issues: Array<{ path: string }> }).issues;
  }
  throw new Error('expected an error');
}

describe('trace carrier in the start event', () => {
  it('is copied into the snapshot, frozen, and kept by later events and JSON round trips', () => {
    const given = { ...TRACE };
    let s = step(orderWorkflow, null, start(given));
    expect(s.trace).toEqual(TRACE);
    expect(s.trace).not.toBe(given); // the caller's object is not frozen with the snapshot
    expect(Object.isFrozen(s.trace)).toBe(true);
    expect(Object.isFrozen(given)).toBe(false);
    s = step(orderWorkflow, s, { type: 'task.completed', at: 2, step: 'reserve', attempt: 1, output: 1 });
    expect(s.trace).toEqual(TRACE);
    // As a store hands it back: checked, accepted, kept.
    const loaded = JSON.parse(JSON.stringify(s)) as Snapshot;
    const next = step(orderWorkflow, loaded, {
      type: 'task.failed',
      at: 3,
      step: 'charge',
      attempt: 1,
      error: { message: 'x' },
    });
    expect(next.trace).toEqual(TRACE);
    expect(Object.isFrozen(next.trace)).toBe(true);
  });

  it('is absent when the start event has none', () => {
    const s = step(orderWorkflow, null, start());
    expect('trace' in s).toBe(false);
    expect(JSON.stringify(s)).not.toContain('"trace"');
  });

  it('accepts up to 8 entries of up to 512 characters, empty values, a __proto__ key', () => {
    const eight = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`k${i}`, 'v'.repeat(512)]));
    expect(step(orderWorkflow, null, start(eight)).trace).toEqual(eight);
    expect(step(orderWorkflow, null, start({ ['x'.repeat(512)]: '' })).trace).toEqual({
      ['x'.repeat(512)]: '',
    });
    const proto = JSON.parse('{"__proto__":"p","traceparent":"t"}') as Record<string, string>;
    const s = step(orderWorkflow, null, start(proto));
    expect(Object.keys(s.trace!)).toEqual(['__proto__', 'traceparent']);
    expect(Object.getPrototypeOf(s.trace)).toBe(Object.prototype);
  });

  it.each([
    ['nine entries', Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, 'v']))],
    ['a long key', { ['k'.repeat(513)]: 'v' }],
    ['a long value', { traceparent: 'v'.repeat(513) }],
    ['an empty key', { '': 'v' }],
    ['a number value', { traceparent: 1 }],
    ['a nested value', { traceparent: { a: 'b' } }],
    ['an array', ['00-abc']],
    ['a string', '00-abc'],
    ['null', null],
  ])('refuses %s as INVALID_EVENT at trace', (_name, trace) => {
    const issues = invalid(() => step(orderWorkflow, null, start(trace)), 'INVALID_EVENT');
    expect(issues.map((i) => i.path)).toEqual(['trace']);
    expect(eventSchema.safeParse(start(trace)).success).toBe(false);
  });

  it('takes a stored snapshot’s trace as stored (the store holds what a start event passed)', () => {
    const s = JSON.parse(JSON.stringify(step(orderWorkflow, null, start(TRACE)))) as Snapshot;
    const next = step(orderWorkflow, s, { type: 'task.completed', at: 5, step: 'reserve', attempt: 1 });
    expect(next.trace).toEqual(TRACE);
  });

  it('is kept by continue-as-new and replaced by a reuse of a finished id', () => {
    const loop = workflow('loop', 1).task('a', { handler: 'a' }).continueAsNew('again').build();
    let s = step(loop, null, { type: 'start', at: 1, id: 'l-1', trace: TRACE });
    s = step(loop, s, { type: 'task.completed', at: 2, step: 'a', attempt: 1 });
    expect(s.run).toBe(2);
    expect(s.trace).toEqual(TRACE);
    const once = workflow('once', 1).task('a', { handler: 'a' }).build();
    let t = step(once, null, { type: 'start', at: 1, id: 'x', trace: TRACE });
    t = step(once, t, { type: 'task.completed', at: 2, step: 'a', attempt: 1 });
    const other = { traceparent: '00-11111111111111111111111111111111-2222222222222222-01' };
    expect(step(once, t, { type: 'start', at: 3, id: 'x', reuse: true, trace: other }).trace).toEqual(other);
    expect('trace' in step(once, t, { type: 'start', at: 3, id: 'x', reuse: true })).toBe(false);
  });

  it('parseEvent agrees with zod on random carriers (the hand-checked path included)', () => {
    const carrier = fc.oneof(
      fc.dictionary(fc.string({ maxLength: 520 }), fc.string({ maxLength: 520 }), { maxKeys: 10 }),
      fc.dictionary(fc.string({ maxLength: 4 }), fc.oneof(fc.string(), fc.integer(), fc.constant(null))),
      fc.anything(),
    );
    fc.assert(
      fc.property(carrier, fc.boolean(), (trace, handoff) => {
        const e = { ...start(trace), ...(handoff ? { handoff } : {}) };
        const zod = eventSchema.safeParse(e);
        let ours: string | undefined;
        try {
          ours = JSON.stringify(parseEvent(e));
        } catch (err) {
          expect(isStepfoldError(err, 'INVALID_EVENT')).toBe(true);
        }
        expect(ours !== undefined).toBe(zod.success);
        // Same values (a handed-off event's keys come in another order, as before carriers).
        if (zod.success) expect(JSON.parse(ours!)).toEqual(JSON.parse(JSON.stringify(zod.data)));
      }),
      { numRuns: 2000 },
    );
  });

  it('the plain path keeps it as the deep-copy reference does (random saga workflows)', () => {
    const caseArb = fc.record({
      body: blockArb(0, 3),
      onFailure: fc.constantFrom('compensate' as const, 'dlq' as const, 'fail' as const),
      flagSeed: fc.array(fc.nat(5), { minLength: 1, maxLength: 6 }),
      intents: fc.array(intentArb, { maxLength: 30 }),
    });
    fc.assert(
      fc.property(caseArb, ({ body, onFailure, flagSeed, intents }) => {
        const g = compile(body, onFailure, flagSeed);
        const seen: Task[] = [];
        let now = 1_000;
        const first: WorkflowEvent = {
          type: 'start',
          at: now,
          id: 'p',
          input: { flags: g.flags },
          trace: TRACE,
        };
        let s = step(g.definition, null, first);
        let r = referenceStep(g.definition, null, first);
        for (const i of intents) {
          if (i.kind === 'tick') now += i.advance;
          for (const t of Object.values(s.tasks)) {
            if (!seen.some((x) => x.step === t.step && x.phase === t.phase && x.attempt === t.attempt))
              seen.push({ step: t.step, phase: t.phase, attempt: t.attempt });
          }
          const e = toEvent(s, i, now, seen, g.signals);
          if (!e) continue;
          try {
            s = step(g.definition, s, e);
            r = referenceStep(g.definition, r, e);
          } catch {
            continue; // errors are compared by plain-path.property.test.ts
          }
          expect(JSON.stringify(s)).toBe(JSON.stringify(r));
          expect(s.trace).toEqual(TRACE);
        }
      }),
      { numRuns: 150 },
    );
  });
});

/** An instrumentation that records what it is told and marks the async context it wraps. */
function recorder(carrier: Record<string, string> | null = TRACE) {
  const context = new AsyncLocalStorage<string>();
  const events: Array<{ info: EventInfo; outcome: EventOutcome }> = [];
  const tasks: Array<{ info: TaskInfo; outcome: TaskOutcome }> = [];
  const carriers: Array<string | undefined> = [];
  const instrument = defineInstrumentation({
    carrier() {
      carriers.push(context.getStore());
      return carrier ?? undefined;
    },
    async event(info, write) {
      const outcome = await context.run(`event ${info.type}`, write);
      events.push({ info, outcome });
      return outcome;
    },
    async task(info, run) {
      const outcome = await context.run(`task ${info.step}#${info.attempt}`, run);
      tasks.push({ info, outcome });
      return outcome;
    },
  });
  return { instrument, context, events, tasks, carriers };
}

describe('runner instrumentation', () => {
  it('fills the carrier on start, wraps every event and every attempt, handlers inside their wrapper', async () => {
    const rec = recorder();
    const seenBy: string[] = [];
    let now = 1_000;
    const handler = (name: string) => (ctx: { attempt: number }) => {
      seenBy.push(`${name}: ${rec.context.getStore()}`);
      if (name === 'charge' && ctx.attempt === 1) throw new TaskError('gateway timeout', { code: 'GATEWAY' });
      return { ok: name };
    };
    const store = createMemoryStore();
    const runner = createRunner({
      kinds: [composition],
      store,
      workflows: [orderWorkflow],
      clock: () => now,
      instrument: rec.instrument,
      handlers: {
        reserveStock: handler('reserve'),
        releaseStock: handler('release'),
        chargeCard: handler('charge'),
        refund: handler('refund'),
        sendEmail: handler('email'),
      },
    });
    let s = await runner.start('order', 'o-1', { amount: 5 });
    expect(s.trace).toEqual(TRACE);
    expect(rec.carriers).toEqual(['event start']); // asked inside the start's wrapper
    now = s.wakeAt!;
    await runner.processDue(now);
    s = (await runner.get('o-1'))!;
    expect(s.status).toBe('completed');
    expect(seenBy).toEqual([
      'reserve: task reserve#1',
      'charge: task charge#1',
      'charge: task charge#2',
      'email: task email#1',
    ]);
    expect(rec.tasks.map((t) => [t.info.step, t.info.attempt, t.outcome.outcome])).toEqual([
      ['reserve', 1, 'completed'],
      ['charge', 1, 'failed'],
      ['charge', 2, 'completed'],
      ['email', 1, 'completed'],
    ]);
    const failed = rec.tasks[1]!;
    expect(failed.info).toMatchObject({
      instanceId: 'o-1',
      workflow: { name: 'order', version: 1 },
      phase: 'run',
      handler: 'chargeCard',
      idempotencyKey: 'o-1/1/charge/1',
      trace: TRACE,
    });
    expect(failed.outcome).toMatchObject({ outcome: 'failed', error: { code: 'GATEWAY' } });
    expect((failed.outcome as { cause: unknown }).cause).toBeInstanceOf(TaskError);
    expect(rec.events.map((e) => e.info.type)).toEqual([
      'start',
      'task.completed',
      'task.failed',
      'tick',
      'task.completed',
      'task.completed',
    ]);
    for (const [i, e] of rec.events.entries()) {
      expect(e.outcome.applied).toBe(true);
      expect(e.outcome.versionBefore).toBe(i === 0 ? 0 : e.info.version);
      expect(e.outcome.snapshot.version).toBeGreaterThan(e.outcome.versionBefore);
      expect(e.info.trace).toEqual(i === 0 ? undefined : TRACE);
    }
    expect(rec.events.at(-1)!.outcome.snapshot).toEqual(s);
  });

  it('says when an event did not apply, and signal with startIfMissing carries the trace', async () => {
    const rec = recorder();
    const waits = workflow('waits', 1).wait('go', { signal: 'go' }).wait('stop', { signal: 'stop' }).build();
    const runner = createRunner({
      kinds: [composition],
      store: createMemoryStore(),
      workflows: [waits],
      handlers: {},
      instrument: rec.instrument,
    });
    const s = await runner.signal('w-1', 'go', 1, {
      signalId: 's-1',
      startIfMissing: { workflow: 'waits' },
    });
    expect(s.trace).toEqual(TRACE);
    await runner.signal('w-1', 'go', 1, { signalId: 's-1' }); // a duplicate: nothing written
    const last = rec.events.at(-1)!;
    expect(last.info).toMatchObject({ type: 'signal', version: s.version, trace: TRACE });
    expect(last.outcome).toMatchObject({ applied: false, versionBefore: s.version });
    expect(last.outcome.snapshot.version).toBe(s.version);
  });

  it('stores no trace when the carrier is empty, and none without an instrument', async () => {
    const once = workflow('once', 1).task('a', { handler: 'a' }).build();
    const quiet = recorder(null);
    const a = createRunner({
      kinds: [composition],
      store: createMemoryStore(),
      workflows: [once],
      handlers: { a: () => 1 },
      instrument: quiet.instrument,
    });
    expect('trace' in (await a.start('once', 'x'))).toBe(false);
    expect(quiet.tasks[0]!.info.trace).toBeUndefined();
    const plain = createRunner({
      kinds: [composition],
      store: createMemoryStore(),
      workflows: [once],
      handlers: { a: () => 1 },
    });
    expect('trace' in (await plain.start('once', 'x'))).toBe(false);
  });

  it("a child's start is told its parent's carrier and step, and the child carries the one made in its own start's wrapper", async () => {
    const line = workflow('line', 1).task('a', { handler: 'a' }).build();
    const parent = workflow('parent', 1).child('sub', { workflow: line }).build();
    const run = async (carriers: Array<Record<string, string> | undefined>) => {
      const asked: Array<string | undefined> = [];
      const starts: EventInfo[] = [];
      const context = new AsyncLocalStorage<string>();
      const runner = createRunner({
        kinds: [composition],
        store: createMemoryStore(),
        workflows: [parent, line],
        handlers: { a: () => 1 },
        instrument: defineInstrumentation({
          carrier: () => {
            asked.push(context.getStore());
            return carriers.shift();
          },
          event: (info, write) => {
            if (info.type === 'start') starts.push(info);
            return context.run(`start ${info.instanceId}`, write);
          },
          task: (_info, go) => go(),
        }),
      });
      const s = await runner.start('parent', 'p-1');
      expect(s.status).toBe('completed');
      return { asked, starts, child: (await runner.get('p-1/1/sub/1'))! };
    };
    const own = await run([{ traceparent: 'parent-start' }, { traceparent: 'child-start' }]);
    expect(own.asked).toEqual(['start p-1', 'start p-1/1/sub/1']);
    expect(own.starts[1]).toMatchObject({
      instanceId: 'p-1/1/sub/1',
      trace: { traceparent: 'parent-start' },
      parent: { id: 'p-1', step: 'sub' },
    });
    expect(own.starts[0]).not.toHaveProperty('parent');
    expect(own.child.trace).toEqual({ traceparent: 'child-start' });
    // An instrumentation that makes no carrier for the child: it keeps its parent's.
    const kept = await run([{ traceparent: 'parent-start' }]);
    expect(kept.child.trace).toEqual({ traceparent: 'parent-start' });
  });
});

describe('defineInstrumentation', () => {
  it('refuses a bare instrumentation on createRunner, and an object without the hooks', () => {
    const hooks = {
      carrier: () => undefined,
      event: (_i: unknown, w: () => unknown) => w(),
      task: (_i: unknown, r: () => unknown) => r(),
    };
    const bare = () =>
      createRunner({
        store: createMemoryStore(),
        workflows: [orderWorkflow],
        handlers: {},
        execute: false,
        instrument: hooks as never,
      });
    expect(bare).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTIONS',
        issues: [expect.objectContaining({ path: 'instrument' })],
      }),
    );
    expect(() => defineInstrumentation({ carrier: () => undefined } as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
    expect(defineInstrumentation(hooks as never).traced).toBeDefined();
  });
});
