import {
  composition,
  defineWorkflow,
  flowControl,
  instanceHolder,
  type Snapshot,
  type StepOptions,
  step as stepWith,
  taskHolder,
  type WorkflowEvent,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { referenceStep as referenceWith } from '../src/reducer/reducer.js';

// The reducer's side of flow limits: what a limited attempt needs, resolved at dispatch; a refused
// attempt or admission waits, visibly, and any tick tries it again. Pure: no store counts here.

/** Every reduction here runs with `flowControl`, beside the kinds a test passes. */
const withFlow = (o: StepOptions = {}): StepOptions => ({ ...o, kinds: [...(o.kinds ?? []), flowControl] });
const step: typeof stepWith = (d, s, e, o) => stepWith(d, s, e, withFlow(o));
const referenceStep: typeof referenceWith = (d, s, e, o) => referenceWith(d, s, e, withFlow(o));

const orders = defineWorkflow({
  name: 'orders',
  version: 1,
  start: 'charge',
  steps: {
    charge: {
      kind: 'task',
      handler: 'charge',
      compensate: 'refund',
      retry: { maxAttempts: 3, initialMs: 10, jitter: 0 },
      concurrency: { key: 'input.customer', limit: 1 },
      rateLimit: [{ limit: 5, periodMs: 1000 }],
      next: 'ship',
    },
    ship: { kind: 'task', handler: 'ship', retry: { maxAttempts: 1 } },
  },
});

const need = { scope: 'orders/charge', key: 'c1', limit: 1 };
const start = (input: unknown, at = 1000): Snapshot =>
  step(orders, null, { type: 'start', at, id: 'o-1', input });

function throttle(s: Snapshot, at: number, until: number, over: Partial<WorkflowEvent> = {}): Snapshot {
  const t = s.tasks['charge']!;
  return step(orders, s, {
    type: 'task.throttled',
    at,
    step: 'charge',
    attempt: t.attempt,
    key: t.idempotencyKey,
    need,
    until,
    ...over,
  } as WorkflowEvent);
}

describe('flow limits in the reducer: needs at dispatch', () => {
  it('a limited attempt carries what it needs: concurrency first, then rate, default scope workflow/step', () => {
    const s = start({ customer: 'c1' });
    expect(s.tasks['charge']!.needs).toEqual([
      { scope: 'orders/charge', key: 'c1', limit: 1 },
      { scope: 'orders/charge', key: '', limit: 5, periodMs: 1000 },
    ]);
  });

  it('a number or boolean key counts as its text; a scope names a shared counter', () => {
    const def = defineWorkflow({
      name: 'w',
      version: 1,
      start: 't',
      steps: {
        t: {
          kind: 'task',
          handler: 'h',
          concurrency: [
            { key: 'input.n', limit: 2, scope: 'api' },
            { key: 'input.b', limit: 3 },
          ],
        },
      },
    });
    const s = step(def, null, { type: 'start', at: 0, id: 'w-1', input: { n: 42, b: false } });
    expect(s.tasks['t']!.needs).toEqual([
      { scope: 'api', key: '42', limit: 2 },
      { scope: 'w/t', key: 'false', limit: 3 },
    ]);
  });

  it('a key path holding no key value fails the attempt for good with INVALID_FLOW_KEY', () => {
    for (const customer of [undefined, null, { id: 1 }, Number.NaN]) {
      const s = start(customer === undefined ? {} : { customer });
      expect(s.status).toBe('failed');
      expect(s.steps['charge']!.status).toBe('failed');
      expect(s.error).toMatchObject({ code: 'INVALID_FLOW_KEY', step: 'charge' });
      expect(s.error!.message).toMatch(/input\.customer/);
      // Not retried, though its policy allows three attempts.
      expect(s.timers).toEqual([]);
    }
    expect(start({}).error!.message).toMatch(/found nothing \(missing\)/);
    expect(start({ customer: { id: 1 } }).error!.message).toMatch(/found an object/);
  });

  it('a task without limits needs nothing (and a compensation is never limited)', () => {
    let s = start({ customer: 'c1' });
    s = step(orders, s, { type: 'task.completed', at: 1100, step: 'charge', attempt: 1 });
    expect(s.tasks['ship']!.needs).toBeUndefined();
    s = step(orders, s, { type: 'task.failed', at: 1200, step: 'ship', attempt: 1, error: { message: 'x' } });
    expect(s.tasks['charge:compensate']).toMatchObject({ phase: 'compensate' });
    expect(s.tasks['charge:compensate']!.needs).toBeUndefined();
  });

  it('holder ids: one per attempt of a task and the version that dispatched it, the instance id for an admission', () => {
    const s = start({ customer: 'c1' });
    expect(taskHolder(s.tasks['charge']!)).toBe('o-1/1/charge/1#run#1@1');
    expect(instanceHolder(s)).toBe('o-1');
  });
});

describe('flow limits in the reducer: throttled attempts', () => {
  it('task.throttled takes the attempt back unconsumed, shows it on the step, and waits until `until` at the latest', () => {
    const s = throttle(start({ customer: 'c1' }), 1010, 5000);
    expect(s.tasks).toEqual({});
    expect(s.steps['charge']).toMatchObject({
      status: 'active',
      attempt: 1,
      throttled: { need, until: 5000, since: 1010, attempt: 1 },
    });
    expect(s.timers).toEqual([
      { kind: 'throttle', step: 'charge', at: 5000, phase: 'run', attempt: 1, dispatchVersion: 1, need },
    ]);
    expect(s.status).toBe('waiting');
    expect(s.wakeAt).toBe(5000);
    expect(s.log.at(-1)).toMatchObject({ type: 'task.throttled', step: 'charge', attempt: 1 });
  });

  it('a stale throttle (another attempt, another execution, a queued task) changes nothing', () => {
    const s = start({ customer: 'c1' });
    expect(throttle(s, 1010, 5000, { attempt: 2 } as Partial<WorkflowEvent>)).toBe(s);
    expect(throttle(s, 1010, 5000, { key: 'o-1/1/charge/9' } as Partial<WorkflowEvent>)).toBe(s);
    const queued = step(orders, null, {
      type: 'start',
      at: 0,
      id: 'o-1',
      input: { customer: 'c1' },
      handoff: true,
    });
    expect(throttle(queued, 10, 5000)).toBe(queued);
  });

  it('any tick dispatches the same attempt again, needs and all, whatever its until', () => {
    let s = throttle(start({ customer: 'c1' }), 1010, 90_000);
    s = step(orders, s, { type: 'tick', at: 1500 });
    expect(s.tasks['charge']).toMatchObject({
      attempt: 1,
      needs: [need, expect.anything()],
      waitingSince: 1010,
    });
    expect(s.steps['charge']!.throttled).toBeUndefined();
    expect(s.timers).toEqual([]);
    // Refused again, it keeps when it first waited.
    s = throttle(s, 1600, 90_000);
    expect(s.steps['charge']!.throttled).toMatchObject({ since: 1010, until: 90_000 });
    // A tick with nothing throttled nor due is a no-op, as before.
    const running = start({ customer: 'c1' });
    expect(step(orders, running, { type: 'tick', at: 1500 })).toBe(running);
  });

  it('its own timer at `until` retries it too', () => {
    const s = throttle(start({ customer: 'c1' }), 1010, 5000);
    const later = step(orders, s, { type: 'tick', at: 5000 });
    expect(later.tasks['charge']).toMatchObject({ attempt: 1 });
  });

  it('a cancel while throttled ends the wait: no timer, nothing shown throttled', () => {
    let s = throttle(start({ customer: 'c1' }), 1010, 5000);
    s = step(orders, s, { type: 'cancel', at: 1100 });
    expect(s.status).toBe('cancelled');
    expect(s.timers).toEqual([]);
    expect(s.steps['charge']!.throttled).toBeUndefined();
  });

  it('a result for a throttled attempt (it never ran) is stale', () => {
    const s = throttle(start({ customer: 'c1' }), 1010, 5000);
    const t = {
      type: 'task.completed',
      at: 1100,
      step: 'charge',
      attempt: 1,
      key: 'o-1/1/charge/1',
    } as const;
    expect(step(orders, s, t)).toBe(s);
  });
});

describe('flow limits in the reducer: map items', () => {
  const fan = defineWorkflow({
    name: 'fan',
    version: 1,
    start: 'each',
    steps: {
      each: {
        kind: 'map',
        items: 'input.jobs',
        handler: 'work',
        maxConcurrency: 3,
        concurrency: { key: 'item.tenant', limit: 1 },
      },
    },
  });
  const o = { kinds: [composition] };

  it('each item attempt needs its own item key; a throttled item stays in flight for the map and comes back on a tick', () => {
    let s = step(
      fan,
      null,
      { type: 'start', at: 0, id: 'f', input: { jobs: [{ tenant: 'a' }, { tenant: 'b' }, { tenant: 'a' }] } },
      o,
    );
    expect(s.tasks['each[0]']!.needs).toEqual([{ scope: 'fan/each', key: 'a', limit: 1 }]);
    expect(s.tasks['each[1]']!.needs![0]!.key).toBe('b');
    const t = s.tasks['each[2]']!;
    s = step(
      fan,
      s,
      {
        type: 'task.throttled',
        at: 5,
        step: 'each',
        item: 2,
        attempt: t.attempt,
        key: t.idempotencyKey,
        need: t.needs![0]!,
        until: 900,
      },
      o,
    );
    expect(s.tasks['each[2]']).toBeUndefined();
    expect(s.steps['each']!.map!.running).toContain(2);
    expect(s.steps['each']!.throttled).toMatchObject({ item: 2, attempt: 1, until: 900 });
    expect(s.timers).toEqual([
      {
        kind: 'throttle',
        step: 'each',
        at: 900,
        phase: 'run',
        attempt: 1,
        item: 2,
        dispatchVersion: 1,
        need: { scope: 'fan/each', key: 'a', limit: 1 },
      },
    ]);
    s = step(fan, s, { type: 'tick', at: 10 }, o);
    expect(s.tasks['each[2]']).toMatchObject({ attempt: 1, item: 2, waitingSince: 5 });
  });

  it('an item whose key holds nothing fails that item for good', () => {
    const s = step(fan, null, { type: 'start', at: 0, id: 'f', input: { jobs: [{}] } }, o);
    expect(s.status).toBe('failed');
    expect(s.error).toMatchObject({ code: 'INVALID_FLOW_KEY' });
    expect(s.error!.message).toMatch(/item 0 failed: flow limit key item\.tenant/);
  });
});

describe('flow limits in the reducer: instance admission', () => {
  const admitted = defineWorkflow({
    name: 'tenant-run',
    version: 1,
    start: 't',
    concurrency: { key: 'input.tenant', limit: 2 },
    steps: { t: { kind: 'task', handler: 'h' } },
  });
  const needs = [{ scope: 'tenant-run', key: 'acme', limit: 2 }];

  it('a start waits for admission: no step entered, nothing due until the runner asks the store', () => {
    const s = step(admitted, null, { type: 'start', at: 0, id: 'i', input: { tenant: 'acme' } });
    expect(s.admission).toEqual({ needs });
    expect(s.steps).toEqual({});
    expect(s.status).toBe('waiting');
    expect(s.wakeAt).toBeNull();
  });

  it('instance.admitted holds the limits and enters the first step', () => {
    let s = step(admitted, null, { type: 'start', at: 0, id: 'i', input: { tenant: 'acme' } });
    s = step(admitted, s, { type: 'instance.admitted', at: 1 });
    expect(s.admission).toBeUndefined();
    expect(s.holds).toEqual(needs);
    expect(s.tasks['t']).toMatchObject({ attempt: 1 });
    expect(step(admitted, s, { type: 'instance.admitted', at: 2 })).toBe(s);
    // The holds stay on the finished instance: the runner releases them when it sees it ended.
    s = step(admitted, s, { type: 'task.completed', at: 3, step: 't', attempt: 1 });
    expect(s.status).toBe('completed');
    expect(s.holds).toEqual(needs);
  });

  it('instance.throttled waits (until is the wake time); a tick asks again, keeping since', () => {
    let s = step(admitted, null, { type: 'start', at: 0, id: 'i', input: { tenant: 'acme' } });
    s = step(admitted, s, { type: 'instance.throttled', at: 1, need: needs[0]!, until: 700 });
    expect(s.admission).toEqual({ needs, throttled: { need: needs[0], until: 700, since: 1 } });
    expect(s.wakeAt).toBe(700);
    expect(step(admitted, s, { type: 'instance.throttled', at: 2, need: needs[0]!, until: 800 })).toBe(s);
    s = step(admitted, s, { type: 'tick', at: 50 });
    expect(s.admission).toEqual({ needs, waitingSince: 1 });
    s = step(admitted, s, { type: 'instance.throttled', at: 60, need: needs[0]!, until: 900 });
    expect(s.admission!.throttled).toMatchObject({ since: 1, until: 900 });
  });

  it('a signal sent before admission is buffered for the first step', () => {
    const def = defineWorkflow({
      name: 'sig',
      version: 1,
      start: 'w',
      concurrency: { limit: 1 },
      steps: { w: { kind: 'wait', signal: 'go' } },
    });
    let s = step(def, null, { type: 'start', at: 0, id: 'i' });
    s = step(def, s, { type: 'signal', at: 1, name: 'go', payload: 7 });
    expect(s.inbox).toHaveLength(1);
    s = step(def, s, { type: 'instance.admitted', at: 2 });
    expect(s.status).toBe('completed');
    expect(s.output).toBe(7);
  });

  it('an instance key that holds nothing fails the instance with INVALID_FLOW_KEY', () => {
    const s = step(admitted, null, { type: 'start', at: 0, id: 'i', input: {} });
    expect(s.status).toBe('failed');
    expect(s.error).toMatchObject({ code: 'INVALID_FLOW_KEY' });
  });

  it('a cancel before admission ends it without entering anything', () => {
    let s = step(admitted, null, { type: 'start', at: 0, id: 'i', input: { tenant: 'acme' } });
    s = step(admitted, s, { type: 'cancel', at: 1 });
    expect(s.status).toBe('cancelled');
    expect(s.admission).toBeUndefined();
  });
});

describe('flow limits in the reducer: plain path = reference', () => {
  it('a completion whose next step is limited gives the same snapshot on both paths', () => {
    const chain = defineWorkflow({
      name: 'chain',
      version: 1,
      start: 'a',
      steps: {
        a: { kind: 'task', handler: 'a', next: 'b' },
        b: { kind: 'task', handler: 'b', concurrency: { key: 'input.k', limit: 1 } },
      },
    });
    const s0 = step(chain, null, { type: 'start', at: 0, id: 'c', input: { k: 'x' } });
    const ev = { type: 'task.completed', at: 5, step: 'a', attempt: 1 } as const;
    expect(JSON.stringify(step(chain, s0, ev))).toBe(JSON.stringify(referenceStep(chain, s0, ev)));
    expect(step(chain, s0, ev).tasks['b']!.needs).toEqual([{ scope: 'chain/b', key: 'x', limit: 1 }]);
  });
});
