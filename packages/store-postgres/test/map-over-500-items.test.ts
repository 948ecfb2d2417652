import {
  composition,
  createRunner,
  createWorker,
  defineWorkflow,
  type Snapshot,
  TaskError,
  type Worker,
} from '@stepfold/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { useTestTables } from './test-tables.js';

// An order fans out over 500 line items (a map, maxConcurrency 20) on PostgreSQL,
// driven by two workers. Item 317 fails for good: every item that completed is compensated exactly
// once, the reservation made before the map too, and the parent's snapshot stays small throughout.

const { store: freshStore } = useTestTables('s19');

const order = defineWorkflow({
  name: 'order-500',
  version: 1,
  start: 'reserve',
  steps: {
    reserve: { kind: 'task', handler: 'reserve', compensate: 'release', next: 'lines' },
    lines: {
      kind: 'map',
      items: 'input.lines',
      handler: 'ship',
      compensate: 'unship',
      input: { sku: 'item.sku', line: 'index' },
      maxConcurrency: 20,
      retry: { maxAttempts: 2, initialMs: 10 },
      next: 'invoice',
    },
    invoice: { kind: 'task', handler: 'invoice' },
  },
});

const until = async (what: string, ok: () => boolean | Promise<boolean>, ms = 60_000) => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50)))
    if (await ok()) return;
  throw new Error(`timed out waiting for ${what}`);
};

describe('postgres: a map over 500 line items, one fails for good', () => {
  const workers: Worker[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop({ graceMs: 1000 })));
  });

  it('compensates every completed item once and keeps the parent snapshot small', async () => {
    const store = await freshStore();
    const shipped: number[] = [];
    const unshipped: number[] = [];
    let released = 0;
    let largest = 0;
    let mostInFlight = 0;
    const handlers = {
      reserve: async () => ({ reservation: 'R-1' }),
      release: async () => {
        released += 1;
      },
      ship: async ({ input }: { input: unknown }) => {
        const { line } = input as { line: number };
        if (line === 317) throw new TaskError('carrier refused line 317', { code: 'REFUSED' });
        shipped.push(line);
        return { tracking: `T-${line}` };
      },
      unship: async ({ input }: { input: unknown }) => {
        unshipped.push((input as { line: number }).line);
      },
      invoice: async () => ({ ok: true }),
    };
    const observe = (s: Snapshot) => {
      if (s.id !== 'order-1') return;
      largest = Math.max(largest, JSON.stringify(s).length);
      const map = s.steps['lines']?.map;
      if (map) mostInFlight = Math.max(mostInFlight, map.running.length);
    };
    for (let i = 0; i < 2; i++) {
      const runner = createRunner({
        kinds: [composition],
        store,
        workflows: [order],
        handlers,
        onWritten: observe,
      });
      const worker = createWorker({ runner, poll: { maxMs: 200 } });
      workers.push(worker);
      await worker.start();
    }
    const sender = createRunner({
      kinds: [composition],
      store,
      workflows: [order],
      handlers: {},
      execute: false,
    });
    const lines = Array.from({ length: 500 }, (_, i) => ({ sku: `SKU-${i}`, qty: 1 }));
    await sender.start('order-500', 'order-1', { lines });
    await until('the order to end', async () => {
      const s = await store.load('order-1');
      return s !== null && ['failed', 'completed'].includes(s.status);
    }).catch(async (e) => {
      const p = await store.load('order-1');
      const tail = p?.log.slice(-8).map((l) => `${l.type} ${l.step ?? ''} ${l.detail ?? ''}`.trim());
      throw new Error(
        `${(e as Error).message}: ${p?.status} ${JSON.stringify(p?.steps['lines']?.map)} tasks ${Object.keys(p?.tasks ?? {}).join(',')} timers ${JSON.stringify(p?.timers)}; ${tail?.join('; ')}`,
      );
    });
    const s = (await store.load('order-1'))!;
    expect(s.status).toBe('failed');
    expect(s.error).toMatchObject({ step: 'lines', code: 'REFUSED' });
    // Every item that shipped was unshipped, once; 317 never shipped and was not undone.
    expect(new Set(shipped).size).toBe(shipped.length);
    expect([...unshipped].sort((a, b) => a - b)).toEqual([...shipped].sort((a, b) => a - b));
    expect(unshipped).not.toContain(317);
    expect(released).toBe(1);
    // What the map recorded as completed is exactly what shipped.
    expect(s.steps['lines']!.map!.ok).toBe(shipped.length);
    // The parent stayed O(maxConcurrency), not O(items) beyond the collected results.
    expect(mostInFlight).toBeLessThanOrEqual(20);
    expect(largest).toBeLessThan(64 * 1024);
    console.log(
      `map over 500 items: ${shipped.length} items shipped and unshipped once, largest parent snapshot ${largest} B`,
    );
  });
});
