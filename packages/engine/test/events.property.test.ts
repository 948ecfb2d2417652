import { eventSchema, isStepfoldError, parseEvent } from '@stepfold/engine';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

// parseEvent checks the common events by hand and leaves the rest to zod: whatever it accepts,
// zod must accept with the same values, and whatever zod refuses it must refuse as INVALID_EVENT.

const anyOf = (...xs: unknown[]) => fc.constantFrom(...xs);
const field = {
  type: anyOf('start', 'task.completed', 'task.failed', 'tick', 'signal', 'cancel', 'explode', 7),
  at: anyOf(0, 1, 1.5, -1, 8.64e15, 8.64e15 + 1, 2 ** 53, Number.NaN, '5', undefined),
  id: anyOf('o-1', '', 'a b', 'x'.repeat(200), 'x'.repeat(201), 3, undefined, 'ünïcode'),
  attempt: anyOf(1, 0, 2.5, 1_000_000, 1_000_001, '1', undefined),
  phase: anyOf('run', 'compensate', 'other', null, undefined),
  key: anyOf('k/1/a/1', '', 'x'.repeat(1000), 'x'.repeat(1001), 5, undefined),
  signalId: anyOf('s-1', '', 'x'.repeat(200), 'x'.repeat(201), 'any text is fine', 9, undefined),
  reuse: anyOf(true, false, 'yes', undefined),
  value: anyOf(undefined, null, 0, 'x', { a: [1, { b: 2 }] }, [1, 2]),
};

const eventArb = fc
  .record(
    {
      type: field.type,
      at: field.at,
      id: fc.oneof(field.id, field.signalId),
      step: field.id,
      name: field.id,
      attempt: field.attempt,
      phase: field.phase,
      key: field.key,
      reuse: field.reuse,
      input: field.value,
      output: field.value,
      payload: field.value,
      extra: field.value,
    },
    { requiredKeys: [] },
  )
  .map((e) => e as Record<string, unknown>);

function outcome(f: () => unknown): { ok: true; json: string } | { ok: false } {
  try {
    return { ok: true, json: JSON.stringify(f()) };
  } catch (e) {
    expect(isStepfoldError(e) && e.code === 'INVALID_EVENT').toBe(true);
    return { ok: false };
  }
}

describe('parseEvent agrees with eventSchema', () => {
  it('accepts exactly what zod accepts, with the same values', () => {
    fc.assert(
      fc.property(fc.oneof(eventArb, fc.anything()), (e) => {
        const ours = outcome(() => parseEvent(e));
        const zod = eventSchema.safeParse(e);
        expect(ours.ok).toBe(zod.success);
        if (ours.ok && zod.success) expect(ours.json).toBe(JSON.stringify(zod.data));
      }),
      { numRuns: 3000 },
    );
  });
});
