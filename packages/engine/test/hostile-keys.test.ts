import {
  createHarness,
  createMemoryStore,
  createRunner,
  defineWorkflow,
  isStepfoldError,
  type Snapshot,
  step,
  type ValidationError,
  type WorkflowEvent,
  workflow,
} from '@stepfold/engine';
import { afterEach, describe, expect, it } from 'vitest';

// Keys that reach an object from a definition, an event or a snapshot: none may be dropped, and
// none may become a prototype. Each case says where the key enters.

const RESERVED = ['__proto__', 'constructor', 'prototype'] as const;

function failure(fn: () => unknown): { code: string; paths: string[] } {
  try {
    fn();
  } catch (e) {
    if (!isStepfoldError(e)) throw e;
    return { code: e.code, paths: (e as ValidationError).issues.map((i) => i.path) };
  }
  throw new Error('expected a typed error');
}

const linear = workflow('hostile', 1, { acceptUnknownSignals: true })
  .task('a', { handler: 'h' })
  .wait('w', { signal: 'go' })
  .build();

afterEach(() => {
  expect(Object.prototype).not.toHaveProperty('polluted');
  expect(Object.prototype).not.toHaveProperty('kind');
});

describe('hostile keys in definitions', () => {
  for (const key of RESERVED) {
    it(`a step id "${key}" in the record form (from JSON) is refused, not dropped`, () => {
      const json = `{"name":"x","version":1,"start":"a","steps":{"a":{"kind":"task","handler":"h","next":"${key}"},"${key}":{"kind":"succeed"}}}`;
      const r = failure(() => defineWorkflow(JSON.parse(json)));
      expect(r.code).toBe('INVALID_DEFINITION');
      expect(r.paths).toContain(`steps.${key}`);
    });

    it(`a step id "${key}" in the list form is refused`, () => {
      const r = failure(() =>
        defineWorkflow({
          name: 'x',
          version: 1,
          start: 'a',
          steps: [
            { id: 'a', kind: 'task', handler: 'h', next: key },
            { id: key, kind: 'succeed' },
          ],
        }),
      );
      expect(r.code).toBe('INVALID_DEFINITION');
      expect(r.paths).toContain('steps.1.id');
    });

    it(`an input mapping key "${key}" is refused`, () => {
      const json = `{"name":"x","version":1,"start":"a","steps":{"a":{"kind":"task","handler":"h","input":{"${key}":"input.x"}}}}`;
      expect(failure(() => defineWorkflow(JSON.parse(json))).code).toBe('INVALID_DEFINITION');
    });

    it(`a succeed output key "${key}" is refused`, () => {
      const json = `{"name":"x","version":1,"start":"a","steps":{"a":{"kind":"succeed","output":{"${key}":"input.x"}}}}`;
      expect(failure(() => defineWorkflow(JSON.parse(json))).code).toBe('INVALID_DEFINITION');
    });
  }

  it('a __proto__ key written in an object literal (which sets the prototype) is refused', () => {
    const steps = { a: { kind: 'task', handler: 'h' }, __proto__: { kind: 'succeed' } };
    const r = failure(() => defineWorkflow({ name: 'x', version: 1, start: 'a', steps } as never));
    expect(r.code).toBe('INVALID_DEFINITION');
    expect(r.paths).toContain('steps.__proto__');
  });

  it('a computed ["__proto__"] key (an own property) is refused too', () => {
    const steps = { a: { kind: 'task', handler: 'h' }, ['__proto__']: { kind: 'succeed' } };
    expect(failure(() => defineWorkflow({ name: 'x', version: 1, start: 'a', steps } as never)).code).toBe(
      'INVALID_DEFINITION',
    );
  });

  it('a handler named after an Object.prototype member must still be registered', () => {
    const wf = workflow('proto-handler', 1).task('a', { handler: 'toString' }).build();
    // @ts-expect-error missing handler "toString" (the compiler sees it too)
    const r = failure(() => createRunner({ store: createMemoryStore(), workflows: [wf], handlers: {} }));
    expect(r.code).toBe('UNKNOWN_HANDLER');
  });
});

describe('hostile keys in events', () => {
  const started = () => createHarness(linear).start({ x: 1 });

  for (const key of RESERVED) {
    it(`a result for step "${key}" is INVALID_EVENT, and nothing changes`, () => {
      const h = started();
      const before = h.snapshot;
      for (const type of ['task.completed', 'task.failed'] as const) {
        const ev = { type, at: 1, step: key, attempt: 1, error: { message: 'x' } } as WorkflowEvent;
        const r = failure(() => step(linear, before, ev));
        expect(r.code).toBe('INVALID_EVENT');
      }
      expect(h.snapshot).toBe(before);
    });

    it(`a requeue of step "${key}" is INVALID_EVENT`, () => {
      const h = started();
      expect(failure(() => step(linear, h.snapshot, { type: 'requeue', at: 1, step: key })).code).toBe(
        'INVALID_EVENT',
      );
    });

    it(`a signal named "${key}" is buffered as an ordinary record`, () => {
      const h = started();
      h.signal(key, JSON.parse('{"__proto__": {"polluted": true}}'));
      const [record] = h.snapshot.inbox;
      expect(record?.name).toBe(key);
      expect(Object.getPrototypeOf(record?.payload)).toBe(Object.prototype);
    });
  }

  it('an output and an input patch with a __proto__ key keep it as an own key', () => {
    const h = started();
    h.complete('a', JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}'));
    const output = h.output('a') as object;
    expect(Object.getPrototypeOf(output)).toBe(Object.prototype);
    expect(Object.hasOwn(output, '__proto__')).toBe(true);
  });

  it('a requeue input patch with a __proto__ key keeps it as an own key of the input', () => {
    const dlq = workflow('dlq', 1)
      .task('a', { handler: 'h', onFailure: 'dlq', retry: { maxAttempts: 1 } })
      .build();
    const h = createHarness(dlq).start({ x: 1 });
    h.fail('a', 'boom');
    expect(h.status).toBe('dlq');
    h.requeue({ inputPatch: JSON.parse('{"__proto__": {"polluted": true}, "x": 2}') });
    const input = h.snapshot.input as Record<string, unknown>;
    expect(Object.getPrototypeOf(input)).toBe(Object.prototype);
    expect(Object.hasOwn(input, '__proto__')).toBe(true);
    expect(input.x).toBe(2);
  });
});

describe('hostile keys in snapshots', () => {
  for (const key of RESERVED) {
    it(`a snapshot with a step state "${key}" is INVALID_SNAPSHOT`, () => {
      const s = createHarness(linear).start({}).snapshot;
      const json = JSON.stringify(s).replace(
        '"steps":{',
        `"steps":{"${key}":{"status":"active","iteration":1,"attempt":0,"startedAt":0},`,
      );
      const hostile = JSON.parse(json) as Snapshot;
      expect(failure(() => step(linear, hostile, { type: 'tick', at: 5 })).code).toBe('INVALID_SNAPSHOT');
    });
  }

  // Found by `pnpm fuzz` (stored-memory): a stored `"active": ["__proto__"]` had a cancel detach
  // `tasks["__proto__"]`, which is Object.prototype, so `detached: true` landed on every object.
  const places: Array<[string, (s: Snapshot, key: string) => void]> = [
    ['active', (s, key) => s.active.push(key)],
    ['completed', (s, key) => s.completed.push(key)],
    ['timers', (s, key) => s.timers.push({ kind: 'sleep', step: key, at: 1 })],
    [
      'tasks',
      (s, key) =>
        Object.defineProperty(s.tasks, 'x', { value: { ...s.tasks['a'], step: key }, enumerable: true }),
    ],
  ];
  for (const [place, plant] of places) {
    for (const key of RESERVED) {
      it(`a step "${key}" named in ${place} is INVALID_SNAPSHOT for every event, and pollutes nothing`, () => {
        for (const ev of [
          { type: 'cancel', at: 5 },
          { type: 'abort', at: 5 },
          { type: 'tick', at: 1e6 },
          { type: 'task.completed', at: 5, step: 'a', attempt: 1, output: null },
        ] as WorkflowEvent[]) {
          const s = JSON.parse(JSON.stringify(createHarness(linear).start({}).snapshot)) as Snapshot;
          plant(s, key);
          const got = failure(() => step(linear, s, ev));
          expect(got.code).toBe('INVALID_SNAPSHOT');
          expect(got.paths[0]).toMatch(new RegExp(`^${place}`));
          expect(Object.prototype).not.toHaveProperty('detached');
          expect(Object.prototype).not.toHaveProperty('status');
        }
      });
    }
  }
});
