import {
  createHarness,
  createMemoryStore,
  createRunner,
  isStepfoldError,
  type Snapshot,
  step,
  type WorkflowEvent,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { orderWorkflow } from './fixtures.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return isStepfoldError(e) ? e.code : `untyped: ${String(e)}`;
  }
  return undefined;
}

function running(): Snapshot {
  return createHarness(orderWorkflow).start({ amount: 3 }).snapshot;
}

describe('bad input gets typed errors and never a changed snapshot', () => {
  const badEvents: Array<[string, unknown]> = [
    ['unknown type', { type: 'explode', at: 1 }],
    ['missing at', { type: 'tick' }],
    ['negative time', { type: 'tick', at: -5 }],
    ['fractional time', { type: 'tick', at: 1.5 }],
    ['string attempt', { type: 'task.completed', at: 1, step: 'reserve', attempt: '1' }],
    ['missing error', { type: 'task.failed', at: 1, step: 'reserve', attempt: 1 }],
    ['bad signal name', { type: 'signal', at: 1, name: 'a b' }],
    ['not an object', 'tick'],
  ];
  for (const [what, event] of badEvents) {
    it(`malformed event: ${what} → INVALID_EVENT`, () => {
      const s = running();
      const copy = JSON.stringify(s);
      expect(codeOf(() => step(orderWorkflow, s, event as WorkflowEvent))).toBe('INVALID_EVENT');
      expect(JSON.stringify(s)).toBe(copy);
    });
  }

  it('results for unknown steps or attempts never dispatched → INVALID_EVENT', () => {
    const s = running();
    expect(
      codeOf(() => step(orderWorkflow, s, { type: 'task.completed', at: 1, step: 'ghost', attempt: 1 })),
    ).toBe('INVALID_EVENT');
    expect(
      codeOf(() => step(orderWorkflow, s, { type: 'task.completed', at: 1, step: 'reserve', attempt: 2 })),
    ).toBe('INVALID_EVENT');
    expect(
      codeOf(() => step(orderWorkflow, s, { type: 'task.completed', at: 1, step: 'charge', attempt: 1 })),
    ).toBe('INVALID_EVENT');
    expect(
      codeOf(() =>
        step(orderWorkflow, s, {
          type: 'task.completed',
          at: 1,
          step: 'email',
          attempt: 1,
          phase: 'compensate',
        }),
      ),
    ).toBe('INVALID_EVENT');
  });

  it('a first event other than start → INVALID_EVENT', () => {
    expect(codeOf(() => step(orderWorkflow, null, { type: 'tick', at: 1 }))).toBe('INVALID_EVENT');
    expect(codeOf(() => step(orderWorkflow, null, { type: 'start', at: 1, id: "x'; drop" } as never))).toBe(
      'INVALID_EVENT',
    );
  });

  it('malformed snapshots → INVALID_SNAPSHOT', () => {
    const s = running();
    const broken: unknown[] = [
      { ...s, version: 'one' },
      { ...s, schemaVersion: 99 },
      { ...s, status: 'sleeping' },
      { ...s, steps: [] },
      { ...s, steps: { ...s.steps, ghost: { status: 'active', iteration: 1, attempt: 0, startedAt: 0 } } },
      { ...s, workflow: { ...s.workflow, name: 'other' } },
      { ...s, timers: null },
    ];
    for (const b of broken) {
      expect(codeOf(() => step(orderWorkflow, b as Snapshot, { type: 'tick', at: 10 ** 9 }))).toBe(
        'INVALID_SNAPSHOT',
      );
    }
  });

  it('a changed definition under the same version → DEFINITION_HASH_MISMATCH', () => {
    const s = running();
    const changed = workflow('order', 1).task('reserve', { handler: 'other' }).build();
    expect(codeOf(() => step(changed, s, { type: 'tick', at: 10 ** 9 }))).toBe('DEFINITION_HASH_MISMATCH');
  });

  it('human step payloads must carry a decision', () => {
    const wf = workflow('review', 1).human('review').build();
    const h = createHarness(wf).start();
    const before = h.snapshot;
    // `as never`: the compiler refuses it too; the run time is what is tested here.
    expect(codeOf(() => h.signal('review', { ok: 'yes' } as never))).toBe('INVALID_EVENT');
    expect(h.snapshot).toBe(before);
  });

  it('payload keys such as __proto__ cannot pollute objects', () => {
    const wf = workflow('p', 1)
      .task('a', { handler: 'a', input: { v: 'input.v' } })
      .build();
    const input = JSON.parse('{"v": {"__proto__": {"polluted": true}}, "__proto__": {"polluted": true}}');
    const h = createHarness(wf).start(input);
    h.send({ type: 'requeue', inputPatch: JSON.parse('{"__proto__": {"polluted": true}}') });
    h.complete('a', JSON.parse('{"__proto__": {"polluted": true}}'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('runner: unknown handler, workflow, version, bad ids and existing ids are typed', async () => {
    expect(
      // @ts-expect-error the compiler sees the missing handlers too; at runtime they are UNKNOWN_HANDLER
      codeOf(() => createRunner({ store: createMemoryStore(), workflows: [orderWorkflow], handlers: {} })),
    ).toBe('UNKNOWN_HANDLER');
    const noop = () => null;
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [orderWorkflow],
      handlers: { reserveStock: noop, releaseStock: noop, chargeCard: noop, refund: noop, sendEmail: noop },
    });
    // @ts-expect-error not a registered workflow's name (refused at run time too, for untyped callers)
    await expect(runner.start('nope', 'a')).rejects.toMatchObject({ code: 'UNKNOWN_WORKFLOW' });
    // @ts-expect-error not a registered version (refused at run time too, for untyped callers)
    await expect(runner.start('order', 'a', {}, { version: 7 })).rejects.toMatchObject({
      code: 'UNKNOWN_VERSION',
    });
    await expect(runner.start('order', 'bad id')).rejects.toMatchObject({ code: 'INVALID_ID' });
    await expect(runner.signal('missing', 'x')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await runner.start('order', 'o1', { amount: 1 });
    await expect(runner.start('order', 'o1', { amount: 1 })).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
    });
  });
});
