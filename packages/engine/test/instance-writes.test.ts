import { createMemoryStore, createRunner, type Store, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// Parallel branches of one instance finishing together in one runner: their result writes go one
// after another, the second from the snapshot the first wrote, so neither loses a race.

const fan = workflow('fan-in', 1)
  .parallel('both', { branches: ['left', 'right'], next: 'join' })
  .task('left', { handler: 'left', end: true })
  .task('right', { handler: 'right', end: true })
  .task('join', { handler: 'join' })
  .build();

describe("a runner's writes to one instance", () => {
  it('two branches finishing at once write one after another: no lost race, no reload', async () => {
    const base = createMemoryStore();
    let loads = 0;
    let lost = 0;
    const store = Object.assign(Object.create(base) as Store, {
      load: (id: string) => {
        loads++;
        return base.load(id);
      },
      save: (...a: Parameters<Store['save']>) =>
        base.save(...a).catch((e) => {
          lost++;
          throw e;
        }),
    });
    let open: () => void = () => {};
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const runner = createRunner({
      store,
      workflows: [fan],
      handlers: { left: () => gate.then(() => 'L'), right: () => gate.then(() => 'R'), join: () => 'J' },
    });
    const done = runner.start('fan-in', 'f-1');
    await new Promise((r) => setTimeout(r, 10));
    open(); // both results come in the same tick
    const s = await done;
    expect(s.status).toBe('completed');
    expect([s.steps.left?.output, s.steps.right?.output, s.output]).toEqual(['L', 'R', 'J']);
    expect(runner.stats.conflicts).toBe(0);
    expect(lost).toBe(0);
    expect(loads).toBe(0);
  });

  it('a write another process made meanwhile is still found and re-applied', async () => {
    const store = createMemoryStore();
    let open: () => void = () => {};
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const runner = createRunner({
      store,
      workflows: [fan],
      handlers: { left: () => gate.then(() => 'L'), right: () => gate.then(() => 'R'), join: () => 'J' },
    });
    const other = createRunner({
      store,
      workflows: [fan],
      handlers: { left: () => 0, right: () => 0, join: () => 0 },
    });
    const done = runner.start('fan-in', 'f-2');
    await new Promise((r) => setTimeout(r, 10));
    await other.cancel('f-2', 'changed elsewhere');
    open();
    const s = await done;
    expect(s.status).toBe('cancelled');
    expect(runner.stats.conflicts).toBeGreaterThan(0);
  });
});
