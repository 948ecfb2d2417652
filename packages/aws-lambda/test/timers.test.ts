/** Schedule names and expressions, and which wakes may travel as an SQS delay. */
import { describe, expect, it } from 'vitest';
import {
  atExpression,
  delaySecondsUntil,
  isBlockingWake,
  parseAtExpression,
  scheduleName,
} from '../src/index.js';

describe('timers', () => {
  it('a schedule name is the id when Scheduler allows it, else a hash that no id maps to', () => {
    expect(scheduleName('order-1')).toBe('sf-order-1');
    const odd = scheduleName('tenant:42/order#1');
    expect(odd).toMatch(/^sfh-[0-9a-f]{56}$/);
    expect(odd).toHaveLength(60);
    expect(scheduleName('x'.repeat(62))).toMatch(/^sfh-/);
    expect(scheduleName('tenant:42/order#1')).toBe(odd);
    expect(scheduleName('tenant:42/order#2')).not.toBe(odd);
  });

  it('at() is rounded up to the second, in UTC, and reads back', () => {
    const at = Date.UTC(2026, 10, 29, 6, 30, 15, 1);
    expect(atExpression(at)).toBe('at(2026-11-29T06:30:16)');
    expect(parseAtExpression(atExpression(at))).toBe(Date.UTC(2026, 10, 29, 6, 30, 16));
    expect(parseAtExpression('rate(1 minute)')).toBeNull();
    expect(delaySecondsUntil(1_500, 0)).toBe(2);
    expect(delaySecondsUntil(5_000_000, 0)).toBe(900);
  });

  it('only a retry backoff or a sleep with no task running may be a delay; a deadline may be outlived', () => {
    const snapshot = (timers: unknown[], tasks: Record<string, unknown> = {}) =>
      JSON.stringify({ timers, tasks });
    expect(isBlockingWake(snapshot([{ kind: 'retry', step: 'charge', at: 10 }]), 10)).toBe(true);
    expect(isBlockingWake(snapshot([{ kind: 'sleep', step: 'wait', at: 10 }]), 10)).toBe(true);
    expect(isBlockingWake(snapshot([{ kind: 'timeout', step: 'approve', at: 10 }]), 10)).toBe(false);
    // A sleep beside a deadline due at the same time, or beside a running task: a schedule.
    expect(
      isBlockingWake(
        snapshot([
          { kind: 'sleep', step: 'a', at: 10 },
          { kind: 'timeout', step: 'b', at: 10 },
        ]),
        10,
      ),
    ).toBe(false);
    expect(isBlockingWake(snapshot([{ kind: 'sleep', step: 'a', at: 10 }], { b: { step: 'b' } }), 10)).toBe(
      false,
    );
    expect(isBlockingWake(snapshot([{ kind: 'sleep', step: 'a', at: 10 }]), 11)).toBe(false);
    expect(isBlockingWake('{not json', 10)).toBe(false);
    expect(isBlockingWake(undefined, 10)).toBe(false);
  });
});
