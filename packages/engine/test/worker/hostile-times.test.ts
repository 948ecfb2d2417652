import {
  createMemoryStore,
  SENT_CLAIM_AFTER_MS,
  step,
  type WakeNotice,
  type WorkflowEvent,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { Alarm } from '../../src/worker/alarm.js';

// Found by `pnpm fuzz` (inbox): a sent signal whose `at` was no time (NaN, "x", 1e308) gave the
// store a NaN or unreachable due time and a NaN wake notice; the NaN stuck first in a worker's
// known wake times and stalled its polling, and the 1e308 row was never claimed by the inbox lane,
// so its refusal was never dropped.

const wf = workflow('hostile-times', 1).wait('w', { signal: 'go' }).build();

describe('hostile event times in the inbox', () => {
  for (const at of [Number.NaN, 1e308, -5, 'x', null]) {
    it(`a signal sent with at=${String(at)} is announced at 0 and due for the inbox lane at once`, async () => {
      const store = createMemoryStore();
      const heard: WakeNotice[] = [];
      await store.wakes!.subscribe({ wake: (n) => heard.push(n) });
      const s = step(wf, null, { type: 'start', at: 1, id: 'h-1', input: {} });
      await store.create(s);
      const accept = [`${s.workflow.name}@${s.workflow.version}@${s.workflow.hash}`];
      const event = { type: 'signal', at, name: 'go' } as unknown as WorkflowEvent;
      expect(await store.inbox!.send('h-1', event, accept)).toBe(true);
      await new Promise((r) => setTimeout(r, 0));
      expect(heard.map((n) => n.at)).toEqual([0]);
      const due = await store.inbox!.claim(SENT_CLAIM_AFTER_MS, 10);
      expect(due.map((d) => d.sent.length)).toEqual([1]);
    });
  }
});

describe('Alarm and a wake time that is not a time', () => {
  it('NaN rings at once and is not kept among the known times', () => {
    const now = 1_000;
    const alarm = new Alarm(() => now);
    alarm.beginRound(now, Number.POSITIVE_INFINITY);
    alarm.hear(Number.NaN, false);
    expect(alarm.urgent).toBe(true);
    expect(alarm.known.earliest).toBeUndefined();
    alarm.hear(5_000, true);
    expect(alarm.known.earliest).toBe(5_000);
    expect(alarm.known.pass(5_000)).toBe(false);
    expect(alarm.known.earliest).toBeUndefined();
  });
});
