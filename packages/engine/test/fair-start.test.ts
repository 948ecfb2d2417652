import {
  createMemoryStore,
  createRunner,
  defineWorkflow,
  flowControl,
  step,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// A workflow's `fairness: { key }`: each run's key is read from its input at start and kept as
// `snapshot.fairKey`, the key the stores' due order takes turns by.

const tenants = defineWorkflow({
  name: 'tenants',
  version: 1,
  start: 'work',
  fairness: { key: 'input.tenant' },
  steps: { work: { kind: 'task', handler: 'work' } },
});

const start = (input: unknown) =>
  step(tenants, null, { type: 'start', at: 1000, id: 'job-1', input }, { kinds: [flowControl] });

describe('fairness at start', () => {
  it('keeps the input value at the fairness path as the run fairKey (a number or boolean as its text)', () => {
    expect(start({ tenant: 'acme' }).fairKey).toBe('acme');
    expect(start({ tenant: 42 }).fairKey).toBe('42');
    expect(start({ tenant: 'acme' }).tasks['work']).toBeDefined();
    // An empty key is no key: the run is in the group of runs without one.
    expect(start({ tenant: '' }).fairKey).toBeUndefined();
  });

  it('fails the run with INVALID_FLOW_KEY when the path holds no key, or one too long to index', () => {
    for (const input of [{}, { tenant: { id: 1 } }, { tenant: 'x'.repeat(257) }]) {
      const s = start(input);
      expect(s.status).toBe('failed');
      expect(s.error?.code).toBe('INVALID_FLOW_KEY');
      expect(s.error?.message).toContain('input.tenant');
    }
  });

  it("on a store: one tenant's backlog does not hold back another tenant's first run", async () => {
    const fair = workflow('fair', 1, { fairness: { key: 'input.tenant' } })
      .input<{ tenant: string }>()
      .task('work', { handler: 'work' })
      .build();
    const store = createMemoryStore();
    // Written for workers: the runs wait in the store's due order, none run here.
    const enqueue = createRunner({ store, workflows: [fair], execute: false, kinds: [flowControl] });
    for (let n = 0; n < 30; n++) await enqueue.start('fair', `a-${n}`, { tenant: 'a' });
    await enqueue.start('fair', 'b-0', { tenant: 'b' });
    expect((await store.load('b-0'))?.fairKey).toBe('b');
    const due = await store.listDue(Date.now() + 60_000, 2);
    expect(due).toContain('b-0');
  });
});
