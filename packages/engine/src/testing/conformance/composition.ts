import { afterEach, expect, it } from 'vitest';
import { composition } from '../../composition/index.js';
import { defineWorkflow } from '../../definition/compile.js';
import { TaskError } from '../../errors.js';
import type { Handler } from '../../runner/handler-types.js';
import { createRunner } from '../../runner/runner.js';
import type { Runner } from '../../runner/types.js';
import type { Snapshot } from '../../snapshot.js';
import type { Store } from '../../store/store.js';
import type { Worker } from '../../worker/types.js';
import { createWorker } from '../../worker/worker.js';
import { type SuiteContext, until } from './context.js';

// Child workflows and map steps driven by workers on this store: a child's start, its end reported
// to the parent (through the parent's inbox where the store has one), a map over child workflows
// rolled back item by item, and a parent's cancel reaching its running children.

const line = defineWorkflow({
  name: 'tree-line',
  version: 1,
  start: 'pick',
  steps: {
    pick: { kind: 'task', handler: 'pick', compensate: 'unpick', next: 'pack' },
    pack: { kind: 'task', handler: 'pack' },
  },
});
const order = defineWorkflow({
  name: 'tree-order',
  version: 1,
  start: 'reserve',
  steps: {
    reserve: { kind: 'task', handler: 'reserve', compensate: 'release', next: 'lines' },
    lines: { kind: 'map', items: 'input.lines', workflow: 'tree-line', maxConcurrency: 4, next: 'sub' },
    sub: { kind: 'child', workflow: 'tree-line', input: 'input.extra' },
  },
});
const workflows = [line, order];

/** Calls of the handlers, by name and sku, as the workers made them. */
type Calls = string[];

function handlers(
  calls: Calls,
  behave: (sku: string, signal: AbortSignal) => Promise<void> = async () => {},
) {
  const sku = (input: unknown) => (input as { sku: string }).sku;
  const table: Record<string, Handler> = {
    reserve: async () => ({ r: 1 }),
    release: async () => {
      calls.push('release');
    },
    pick: async ({ input, signal }) => {
      calls.push(`pick ${sku(input)}`);
      if (sku(input).startsWith('bad'))
        throw new TaskError(`no ${sku(input)}`, { code: 'OUT_OF_STOCK', retryable: false });
      await behave(sku(input), signal);
      return { picked: sku(input) };
    },
    unpick: async ({ input }) => {
      calls.push(`unpick ${sku(input)}`);
    },
    pack: async ({ outputs }) => ({ packed: (outputs['pick'] as { picked: string }).picked }),
  };
  return table;
}

const sorted = (xs: string[]) => [...xs].sort();
const named = (calls: Calls, prefix: string) =>
  calls.filter((c) => c.startsWith(`${prefix} `)).map((c) => c.slice(prefix.length + 1));

/** Child workflows and maps: the tree runs, rolls back and cancels the same on every store. */
export function describeComposition(ctx: SuiteContext): void {
  const workers: Worker[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 1000 })));
  });

  /** `n` workers over one store, each with its own runner; and a runner that only hands off. */
  async function setup(n: number, calls: Calls, behave?: Parameters<typeof handlers>[1]) {
    const store = await ctx.fresh();
    const runners: Runner[] = [];
    for (let i = 0; i < n; i++) {
      const runner = createRunner({
        store,
        workflows,
        handlers: handlers(calls, behave),
        kinds: [composition],
      });
      runners.push(runner);
      const worker = createWorker({ runner, poll: { maxMs: 200, maxWithWakesMs: 1000 } });
      workers.push(worker);
      await worker.start();
    }
    const sender = createRunner({ store, workflows, handlers: {}, execute: false, kinds: [composition] });
    return { store, sender, runners };
  }

  const ended = async (store: Store, id: string) => {
    let s: Snapshot | null = null;
    await until(
      `instance ${id} to end`,
      async () => {
        s = await store.load(id);
        return s !== null && ['completed', 'failed', 'cancelled', 'aborted'].includes(s.status);
      },
      30_000,
    ).catch(async (e) => {
      // Say where it stopped: the status, what is in flight, the last transitions.
      const p = await store.load(id);
      const tail = p?.log.slice(-6).map((l) => `${l.type} ${l.step ?? ''} ${l.detail ?? ''}`.trim());
      const tasks = Object.keys(p?.tasks ?? {});
      throw new Error(
        `${(e as Error).message}: ${p?.status}, tasks ${tasks.join(', ')}; ${tail?.join('; ')}`,
      );
    });
    return s as unknown as Snapshot;
  };

  it('runs a map of child workflows and a child step across two workers, each child once', async () => {
    const calls: Calls = [];
    const { store, sender } = await setup(2, calls);
    const lines = Array.from({ length: 10 }, (_, i) => ({ sku: `s${i}` }));
    await sender.start('tree-order', 'o-ok', { lines, extra: { sku: 'x' } });
    const s = await ended(store, 'o-ok');
    expect(s.status).toBe('completed');
    expect(s.output).toEqual({ packed: 'x' });
    expect(s.steps['lines']!.output).toMatchObject({ total: 10, completed: 10, failed: [] });
    expect(sorted(named(calls, 'pick'))).toEqual(sorted([...lines.map((l) => l.sku), 'x']));
    const child = await store.load(`o-ok/1/lines/1/7`);
    expect(child?.parent).toMatchObject({ id: 'o-ok', step: 'lines', item: 7 });
    expect(child?.output).toEqual({ packed: 's7' });
  });

  it('rolls back a failed map: every completed child is reverted once, then the earlier steps', async () => {
    const calls: Calls = [];
    const { store, sender } = await setup(2, calls);
    const lines = Array.from({ length: 12 }, (_, i) => ({ sku: i === 6 ? 'bad6' : `s${i}` }));
    await sender.start('tree-order', 'o-bad', { lines, extra: { sku: 'x' } });
    const s = await ended(store, 'o-bad');
    expect(s.status).toBe('failed');
    expect(s.error).toMatchObject({ step: 'lines' });
    const picked = named(calls, 'pick').filter((k) => k !== 'bad6');
    // Every child that picked was reverted (its pick undone) exactly once; the reservation too.
    expect(sorted(named(calls, 'unpick'))).toEqual(sorted(picked));
    expect(calls.filter((c) => c === 'release')).toHaveLength(1);
    for (const sku of picked) {
      const i = Number(sku.slice(1));
      expect((await store.load(`o-bad/1/lines/1/${i}`))?.status).toBe('cancelled');
    }
  });

  it('a parent cancelled while three children run aborts their handlers, undoes the completed one, then ends', async () => {
    const calls: Calls = [];
    const aborted: string[] = [];
    // s0 completes at once; s1..s3 hold their handler until its signal aborts.
    const behave = (sku: string, signal: AbortSignal) =>
      sku === 's0'
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            signal.addEventListener('abort', () => {
              aborted.push(sku);
              resolve();
            });
          });
    const { store, sender, runners } = await setup(1, calls, behave);
    const lines = Array.from({ length: 4 }, (_, i) => ({ sku: `s${i}` }));
    await sender.start('tree-order', 'o-cancel', { lines, extra: { sku: 'x' } });
    await until('three children running', () => named(calls, 'pick').length === 4);
    await until('the first child to complete', async () => {
      const s = await store.load('o-cancel');
      return s?.steps['lines']?.map?.ok === 1;
    });
    // The worker's own runner writes the cancel: the handlers it runs hear it at once.
    await runners[0]!.cancel('o-cancel', 'customer changed their mind');
    const s = await ended(store, 'o-cancel');
    expect(s.status).toBe('cancelled');
    expect(sorted(aborted)).toEqual(['s1', 's2', 's3']);
    // The completed child was reverted, once; the running ones were cancelled and undid their picks.
    expect(named(calls, 'unpick').filter((k) => k === 's0')).toHaveLength(1);
    expect(calls.filter((c) => c === 'release')).toHaveLength(1);
    for (let i = 0; i < 4; i++) {
      const child = (await store.load(`o-cancel/1/lines/1/${i}`)) as Snapshot;
      expect(child.status).toBe('cancelled');
      // The parent ended after its children.
      expect(s.updatedAt).toBeGreaterThanOrEqual(child.updatedAt);
    }
  });
}
