import {
  createMemoryStore,
  createRunner,
  defineWorkflow,
  eventTriggers,
  isStepfoldError,
  triggeredRunId,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';

// Event triggers: `on` names the events that start a workflow; `runner.publish` starts each
// matching workflow once per event id, the event's data as input, the filter reading it as `input`.

const order = z.object({ orderId: z.string(), total: z.number() });
const handlers = { ship: async () => 'shipped', review: async () => 'reviewed', log: async () => 'logged' };

const fulfil = workflow('fulfil', 1)
  .input(order)
  .on('order.placed')
  .task('ship', { handler: 'ship' })
  .build();
const review = workflow('review', 1)
  .input(order)
  .on('order.placed', { filter: { '>=': [{ var: 'input.total' }, 100] } })
  .task('review', { handler: 'review' })
  .build();
// A JSON definition with one trigger (the object form) and no declared input.
const audit = defineWorkflow({
  name: 'audit',
  version: 1,
  start: 'log',
  on: { event: 'order.cancelled' },
  steps: { log: { kind: 'task', handler: 'log' } },
});

function setup(workflows: readonly unknown[] = [fulfil, review, audit]) {
  const store = createMemoryStore();
  const runner = createRunner({ store, workflows: workflows as never, handlers, kinds: [eventTriggers] });
  return { store, runner };
}

describe('runner.publish', () => {
  it('starts each matching workflow once per event id, the data as input, under <workflow>:<event id>', async () => {
    const { store, runner } = setup();
    const r = await runner.publish({
      name: 'order.placed',
      id: 'evt-1',
      data: { orderId: 'o-1', total: 150 },
    });
    expect(r.started.map((x) => x.id).sort()).toEqual(['fulfil:evt-1', 'review:evt-1']);
    expect(r.existed).toEqual([]);
    expect(r.refused).toEqual([]);
    await runner.idle();
    const run = await store.load(triggeredRunId('fulfil', 'evt-1'));
    expect(run).toMatchObject({ status: 'completed', input: { orderId: 'o-1', total: 150 } });
    // Published again (a redelivery): nothing new, each run reported as existing.
    const again = await runner.publish({
      name: 'order.placed',
      id: 'evt-1',
      data: { orderId: 'o-1', total: 150 },
    });
    expect(again.started).toEqual([]);
    expect(again.existed.map((x) => x.workflow).sort()).toEqual(['fulfil', 'review']);
    expect((await store.list({ limit: 100 })).items.map((s) => s.id).sort()).toEqual([
      'fulfil:evt-1',
      'review:evt-1',
    ]);
  });

  it('a filter that the data fails starts nothing of that workflow; another event name starts only its own', async () => {
    const { store, runner } = setup();
    const small = await runner.publish({
      name: 'order.placed',
      id: 'evt-2',
      data: { orderId: 'o-2', total: 20 },
    });
    expect(small.started.map((x) => x.workflow)).toEqual(['fulfil']);
    const cancelled = await runner.publish({
      name: 'order.cancelled',
      id: 'evt-3',
      data: { orderId: 'o-2' },
    });
    expect(cancelled.started).toEqual([{ workflow: 'audit', version: 1, id: 'audit:evt-3' }]);
    const none = await runner.publish({ name: 'order.shipped', id: 'evt-4', data: {} });
    expect(none).toEqual({ started: [], existed: [], refused: [] });
    await runner.idle();
    expect((await store.list({ limit: 100 })).items.map((s) => s.id).sort()).toEqual([
      'audit:evt-3',
      'fulfil:evt-2',
    ]);
  });

  it('a workflow refusing the data is reported with its error, nothing written for it; the others start', async () => {
    const strict = workflow('strict', 1)
      .input(z.object({ sku: z.string() }))
      .on('order.placed')
      .task('ship', { handler: 'ship' })
      .build();
    const { store, runner } = setup([fulfil, strict]);
    const r = await runner.publish({ name: 'order.placed', id: 'evt-5', data: { orderId: 'o-5', total: 5 } });
    expect(r.started.map((x) => x.workflow)).toEqual(['fulfil']);
    expect(r.refused).toHaveLength(1);
    expect(r.refused[0]).toMatchObject({ workflow: 'strict', id: 'strict:evt-5' });
    expect(isStepfoldError(r.refused[0]!.error, 'INVALID_INPUT')).toBe(true);
    expect(await store.load('strict:evt-5')).toBeNull();
  });

  it('an event without a valid name or id is INVALID_ID, and nothing starts', async () => {
    const { store, runner } = setup();
    for (const event of [
      { name: 'order.placed', id: 'has space', data: { orderId: 'o', total: 1 } },
      { name: '', id: 'evt-6', data: {} },
      { name: 'order.placed', id: 'x'.repeat(201), data: {} },
    ]) {
      const e = await runner.publish(event).catch((x: unknown) => x);
      expect(isStepfoldError(e, 'INVALID_ID')).toBe(true);
    }
    expect((await store.list({ limit: 100 })).items).toEqual([]);
  });

  it('only the newest version of a workflow is matched', async () => {
    const v2 = workflow('fulfil', 2).input(order).task('ship', { handler: 'ship' }).build();
    const { runner } = setup([fulfil, v2]);
    const r = await runner.publish({ name: 'order.placed', id: 'evt-7', data: { orderId: 'o-7', total: 1 } });
    expect(r.started).toEqual([]);
  });
});

describe('trigger definitions', () => {
  it('a filter reading anything but input, or malformed, is INVALID_DEFINITION at createRunner, naming where', () => {
    const bad = (on: unknown) => {
      const def = {
        name: 'w',
        version: 1,
        start: 'a',
        on: on as never,
        steps: { a: { kind: 'succeed' as const } },
      };
      try {
        createRunner({
          store: createMemoryStore(),
          workflows: [defineWorkflow(def)],
          handlers: {},
          kinds: [eventTriggers],
        });
      } catch (e) {
        return (e as { issues: Array<{ path: string }> }).issues.map((i) => i.path);
      }
      return [];
    };
    expect(bad({ event: 'e', filter: { '==': [{ var: 'outputs.a' }, 1] } })).toEqual([
      'workflows.w@1.on.filter.==.0',
    ]);
    expect(bad([{ event: 'e' }, { event: 'f', filter: { nope: 1 } }])).toEqual(['workflows.w@1.on.1.filter']);
    expect(bad({ event: 'e', filter: { '>': [{ var: 'input.total' }, 3] } })).toEqual([]);
  });

  it('`on` itself is checked by defineWorkflow: an event name that is not an id, an unknown field', () => {
    const paths = (on: unknown) => {
      try {
        defineWorkflow({
          name: 'w',
          version: 1,
          start: 'a',
          on: on as never,
          steps: { a: { kind: 'succeed' } },
        });
      } catch (e) {
        return (e as { issues: Array<{ path: string }> }).issues.map((i) => i.path);
      }
      return [];
    };
    expect(paths({ event: 'has space' })).toEqual(['on.event']);
    expect(paths({ event: 'e', extra: 1 })).not.toEqual([]);
  });

  it('a runner without eventTriggers refuses publish with INVALID_OPTIONS, starting nothing', async () => {
    const store = createMemoryStore();
    const runner = createRunner({ store, workflows: [fulfil], handlers });
    const e = await runner
      .publish({ name: 'order.placed', id: 'evt-9', data: { orderId: 'o', total: 1 } })
      .catch((x: unknown) => x);
    expect(isStepfoldError(e, 'INVALID_OPTIONS')).toBe(true);
    expect((e as { issues: Array<{ path: string }> }).issues[0]!.path).toBe('kinds');
    expect((await store.list({ limit: 10 })).items).toEqual([]);
  });
});
