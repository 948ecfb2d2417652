import {
  createHarness,
  createMemoryStore,
  createRunner,
  type DefinitionInput,
  defineWorkflow,
  isStepfoldError,
  type ValidationError,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

function issues(def: DefinitionInput): string[] {
  try {
    defineWorkflow(def);
  } catch (e) {
    if (!isStepfoldError(e, 'INVALID_DEFINITION')) throw e;
    return (e as ValidationError).issues.map((i) => `${i.path}: ${i.message}`);
  }
  return [];
}

describe('data paths name steps that can have completed before the reader', () => {
  it('a typo in a step id is refused with a suggestion', () => {
    // The typed builder refuses this at compile time; the JSON form is checked here.
    const found = issues({
      name: 't',
      version: 1,
      start: 'validate',
      steps: [
        { id: 'validate', kind: 'task', handler: 'v', next: 'charge' },
        { id: 'charge', kind: 'task', handler: 'c', input: { amount: 'outputs.validat.amount' } },
      ],
    });
    expect(found).toEqual([
      'steps.charge.input.amount: "outputs.validat.amount" reads step "validat", which does not exist (did you mean "validate"?)',
    ]);
  });

  it('a step that only comes later is refused; one earlier in a loop is fine', () => {
    const a = { id: 'a', kind: 'task', handler: 'h', input: 'outputs.b', next: 'b' } as const;
    expect(
      issues({ name: 't', version: 1, start: 'a', steps: [a, { id: 'b', kind: 'task', handler: 'h' }] }),
    ).toEqual(['steps.a.input: "outputs.b" reads step "b", which cannot have completed before "a" runs']);
    // In a loop, b completes in an earlier round before a reads it again.
    expect(
      issues({
        name: 'loop',
        version: 1,
        start: 'w',
        steps: [
          { id: 'w', kind: 'wait', signal: 'go', next: 'a' },
          a,
          { id: 'b', kind: 'task', handler: 'h', next: 'w' },
        ],
      }),
    ).toEqual([]);
  });

  it('every place a path is written is checked: conditions, sleep until, succeed output, carry', () => {
    const found = issues({
      name: 'all',
      version: 1,
      start: 'c',
      steps: {
        c: {
          kind: 'choice',
          branches: [{ when: { '>': [{ var: 'outputs.nope.x' }, 1] }, next: 's' }],
          otherwise: 's',
        },
        s: { kind: 'sleep', until: 'outputs.gone.at', next: 'x' },
        x: {
          kind: 'choice',
          branches: [{ when: { exists: 'outputs.ghost' }, next: 'done' }],
          otherwise: 'again',
        },
        done: { kind: 'succeed', output: { r: 'outputs.missing' } },
        again: { kind: 'continueAsNew', carry: 'outputs.void' },
      },
    });
    expect(found.map((i) => i.split(':')[0])).toEqual([
      'steps.c.branches.0.when.>.0',
      'steps.s.until',
      'steps.x.branches.0.when.exists',
      'steps.done.output.r',
      'steps.again.carry',
    ]);
  });

  it('a sibling parallel branch may be read (it can have finished first); the join output after it', () => {
    const def = workflow('par', 1)
      .parallel('p', { branches: ['a', 'b'] })
      .task('a', { handler: 'h', end: true })
      .task('b', { handler: 'h', input: 'outputs.a', end: true })
      .toJSON();
    const withNext = { ...def, steps: (def.steps as object[]).map((s) => s) };
    (withNext.steps[0] as { next?: string }).next = 'after';
    (withNext.steps as object[]).push({ id: 'after', kind: 'task', handler: 'h', input: 'outputs.b' });
    expect(issues(withNext as DefinitionInput)).toEqual([]);
  });
});

describe('signals no step listens for', () => {
  const approval = workflow('approval', 1).human('approve').task('ship', { handler: 'ship' }).build();

  it('are refused with UNKNOWN_SIGNAL, naming what the definition listens for; nothing is written', async () => {
    const h = createHarness(approval).start();
    const before = h.snapshot;
    expect(() => h.signal('aproval', { decision: 'approve' })).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_SIGNAL', message: expect.stringContaining('"approve"') }),
    );
    expect(h.snapshot).toBe(before);

    const store = createMemoryStore();
    const runner = createRunner({ store, workflows: [approval], handlers: { ship: () => null } });
    await runner.start('approval', 'a-1');
    await expect(runner.signal('a-1', 'aproval', { decision: 'approve' })).rejects.toMatchObject({
      code: 'UNKNOWN_SIGNAL',
    });
    expect((await store.load('a-1'))?.version).toBe(1);
    expect((await runner.signal('a-1', 'approve', { decision: 'approve' })).status).toBe('completed');
  });

  it('are refused alike once the instance has finished (signal and send), nothing written', async () => {
    const h = createHarness(approval).start();
    h.signal('approve', { decision: 'approve' });
    h.complete('ship', null);
    expect(h.status).toBe('completed');
    const done = h.snapshot;
    expect(() => h.signal('aproval', { decision: 'approve' })).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_SIGNAL', message: expect.stringContaining('"approve"') }),
    );
    expect(h.snapshot).toBe(done);
    // A known name stays a no-op on a finished instance.
    expect(h.signal('approve', { decision: 'approve' })).toBe(false);

    const store = createMemoryStore();
    const runner = createRunner({ store, workflows: [approval], handlers: { ship: () => null } });
    await runner.start('approval', 'f-1');
    await runner.signal('f-1', 'approve', { decision: 'approve' });
    const version = (await store.load('f-1'))?.version;
    await expect(runner.signal('f-1', 'aproval', {})).rejects.toMatchObject({ code: 'UNKNOWN_SIGNAL' });
    await expect(runner.send('f-1', 'aproval', {})).rejects.toMatchObject({ code: 'UNKNOWN_SIGNAL' });
    await expect(runner.send('f-1', 'approve', { decision: 'approve' })).resolves.toEqual({
      status: 'finished',
      finished: 'completed',
    });
    expect((await store.load('f-1'))?.version).toBe(version);
  });

  it('are buffered when the definition opts in with acceptUnknownSignals', () => {
    const open = workflow('open', 1, { acceptUnknownSignals: true }).human('approve').build();
    const h = createHarness(open).start();
    expect(h.signal('later', 1)).toBe(true);
    expect(h.snapshot.inbox.map((s) => s.name)).toEqual(['later']);
  });
});
