import { describe, expect, it } from 'vitest';
import { AslImportError, AslRuntimeError, fromAsl, toAslHistory } from '../src/index.js';
import { FN, runMachine } from './run-machine.js';

/** A Map over `$.xs` whose `check` Lambda fails for odd numbers; `extra` adds the Map's tolerance fields. */
function machine(extra: Record<string, unknown>, after: Record<string, unknown> = { End: true }) {
  return {
    StartAt: 'Each',
    States: {
      Each: {
        Type: 'Map',
        ItemsPath: '$.xs',
        ItemProcessor: {
          StartAt: 'Check',
          States: { Check: { Type: 'Task', Resource: `${FN}check`, End: true } },
        },
        ResultPath: '$.checked',
        ...extra,
        ...after,
      },
      // Only a catcher's target: stepfold refuses a state nothing reaches.
      ...('Catch' in after ? { Caught: { Type: 'Pass', End: true } } : {}),
    },
  };
}

const check = (x: unknown) => {
  if ((x as number) % 2 === 1) throw new AslRuntimeError('Odd', `${x} is odd`);
  return x;
};

const run = (m: unknown, input: unknown) => runMachine(m, input, { check });

describe('a Map with tolerated failures', () => {
  it('goes on past failed iterations within ToleratedFailureCount, each leaving its error output', async () => {
    const { h, imported } = await run(machine({ ToleratedFailureCount: 1 }), { xs: [2, 3, 4] });
    expect(h.status).toBe('completed');
    expect(h.snapshot.output).toEqual({
      xs: [2, 3, 4],
      checked: [2, { Error: 'Odd', Cause: '3 is odd' }, 4],
    });
    const types = toAslHistory(h.snapshot, imported).map((e) => e.type);
    expect(types).toContain('MapIterationFailed');
    expect(types).toContain('MapStateSucceeded');
    expect(types).not.toContain('MapStateFailed');
  });

  it('fails with States.ExceedToleratedFailureThreshold past the count, which a Catch takes', async () => {
    const failed = await run(machine({ ToleratedFailureCount: 1 }), { xs: [1, 2, 3] });
    expect(failed.h.status).toBe('failed');
    expect(failed.h.snapshot.error?.code).toBe('States.ExceedToleratedFailureThreshold');
    const caught = await run(
      machine(
        { ToleratedFailureCount: 1 },
        {
          Catch: [
            {
              ErrorEquals: ['States.ExceedToleratedFailureThreshold'],
              ResultPath: '$.error',
              Next: 'Caught',
            },
          ],
          End: true,
        },
      ),
      { xs: [1, 2, 3] },
    );
    expect(caught.h.status).toBe('completed');
    expect((caught.h.snapshot.output as { error: { Error: string } }).error.Error).toBe(
      'States.ExceedToleratedFailureThreshold',
    );
  });

  it('tolerates up to ToleratedFailurePercentage of the items, read from the input with its path', async () => {
    const m = machine({ ToleratedFailurePercentagePath: '$.allowed' });
    // Two of four is 50 %: not above 50.
    expect((await run(m, { xs: [1, 2, 3, 4], allowed: 50 })).h.status).toBe('completed');
    const over = await run(m, { xs: [1, 2, 3, 4], allowed: 49.5 });
    expect(over.h.snapshot.error?.code).toBe('States.ExceedToleratedFailureThreshold');
    // With both bounds, exceeding either fails the Map.
    const both = await run(machine({ ToleratedFailurePercentage: 100, ToleratedFailureCount: 1 }), {
      xs: [1, 3],
    });
    expect(both.h.snapshot.error?.code).toBe('States.ExceedToleratedFailureThreshold');
  });

  it('fails with the first failed iteration’s own error when no tolerance is given, as before', async () => {
    const { h } = await run(machine({}), { xs: [2, 3, 5] });
    expect(h.snapshot.error).toMatchObject({ code: 'Odd', message: '3 is odd' });
  });

  it('raises States.Runtime when a tolerance path does not hold a valid number', async () => {
    const { h } = await run(machine({ ToleratedFailureCountPath: '$.allowed' }), { xs: [2], allowed: -1 });
    expect(h.status).toBe('failed');
    expect(h.snapshot.error?.code).toBe('States.Runtime');
    expect(h.snapshot.error?.message).toContain('ToleratedFailureCountPath');
  });

  it('takes JSONata expressions for the bounds', async () => {
    const m = {
      QueryLanguage: 'JSONata',
      StartAt: 'Each',
      States: {
        Each: {
          Type: 'Map',
          Items: '{% $states.input.xs %}',
          ToleratedFailureCount: '{% $states.input.allowed %}',
          ItemProcessor: {
            StartAt: 'Check',
            States: { Check: { Type: 'Task', Resource: `${FN}check`, End: true } },
          },
          End: true,
        },
      },
    };
    const ok = await run(m, { xs: [1, 2], allowed: 1 });
    expect(ok.h.snapshot.output).toEqual([{ Error: 'Odd', Cause: '1 is odd' }, 2]);
    const over = await run(m, { xs: [1, 3], allowed: 1 });
    expect(over.h.snapshot.error?.code).toBe('States.ExceedToleratedFailureThreshold');
  });

  it('refuses a bound given twice or out of range at import, naming the field', () => {
    const refused = (extra: Record<string, unknown>) => {
      try {
        fromAsl(machine(extra));
      } catch (e) {
        expect(e).toBeInstanceOf(AslImportError);
        return [(e as AslImportError).state, (e as AslImportError).field];
      }
      throw new Error('imported');
    };
    expect(refused({ ToleratedFailureCount: 1, ToleratedFailureCountPath: '$.n' })).toEqual([
      'Each',
      'ToleratedFailureCount',
    ]);
    expect(refused({ ToleratedFailurePercentage: 150 })).toEqual(['Each', 'ToleratedFailurePercentage']);
    expect(refused({ ToleratedFailureCount: 1.5 })).toEqual(['Each', 'ToleratedFailureCount']);
  });
});
