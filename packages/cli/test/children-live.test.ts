import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composition, createMemoryStore, createRunner, defineWorkflow, type Store } from '@stepfold/engine';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChildPage } from '../src/child-listing.js';
import { EXIT } from '../src/exit-codes.js';
import type { Family } from '../src/family.js';

// A parent and its children run for real (the composition entry, a runner on the memory store),
// walked and steered through the CLI in-process: `show` both ways, `signal` to a child (whose end
// the CLI's own hand-off runner reports to the parent), `children` over the map's items.

const held = vi.hoisted(() => ({ store: undefined as Store | undefined }));
vi.mock('../src/store-url.js', () => ({
  storeUrlOf: () => 'memory://test',
  withStore: async <T>(_url: string, body: (o: { store: Store }) => Promise<T>) =>
    body({ store: held.store! }),
}));
const { main } = await import('../src/cli.js');

/** Waits for a `go` signal, then ends. */
const gate = defineWorkflow({
  name: 'gate',
  version: 1,
  start: 'wait',
  steps: { wait: { kind: 'wait', signal: 'go' } },
});

/** A child gate, then a gate per item, two at a time. */
const tree = defineWorkflow({
  name: 'tree',
  version: 1,
  start: 'sub',
  steps: {
    sub: { kind: 'child', workflow: 'gate', next: 'each' },
    each: { kind: 'map', items: 'input.items', workflow: 'gate', maxConcurrency: 2 },
  },
});

const DEFS = mkdtempSync(join(tmpdir(), 'stepfold-tree-'));
writeFileSync(join(DEFS, 'gate.json'), JSON.stringify(gate));
writeFileSync(join(DEFS, 'tree.json'), JSON.stringify(tree));

async function run(...args: string[]) {
  let stdout = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    const code = await main(['node', 'stepfold', ...args]);
    return { code, stdout };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

const json = <T>(r: { stdout: string }) => JSON.parse(r.stdout) as T;

beforeEach(() => {
  held.store = createMemoryStore();
});

describe('a running tree through the CLI', () => {
  it('shows the child, signals it, and the parent goes on to its map, whose children it lists', async () => {
    const store = held.store!;
    const worker = createRunner({ kinds: [composition], store, workflows: [tree, gate], handlers: {} });
    await worker.start('tree', 't-1', { items: ['a', 'b', 'c'] });

    const parent = json<Family & { diagram: string }>(
      await run('show', 't-1', '--json', '--diagram', '--definitions', DEFS),
    );
    expect(parent.children).toEqual([
      expect.objectContaining({ kind: 'child', step: 'sub', id: 't-1/1/sub/1', childStatus: 'waiting' }),
    ]);
    expect(parent.diagram).toMatch(/^ {2}class s_sub waiting$/m);
    const child = json<Family>(await run('show', 't-1/1/sub/1', '--json'));
    expect(child.parent).toMatchObject({ id: 't-1', workflow: 'tree', step: 'sub', status: 'running' });

    // The CLI writes the child's signal; its end reaches the parent through the CLI's runner.
    const signalled = await run('signal', 't-1/1/sub/1', 'go', '--definitions', DEFS, '--json');
    expect(signalled.code).toBe(EXIT.ok);
    await worker.processDue(); // a worker starts the map's children the parent dispatched
    const after = json<Family>(await run('show', 't-1', '--json', '--definitions', DEFS));
    expect(after.children[0]).toMatchObject({ kind: 'child', status: 'completed', childStatus: 'completed' });
    expect(after.children[1]).toMatchObject({
      kind: 'map',
      step: 'each',
      prefix: 't-1/1/each/1/',
      progress: expect.objectContaining({ total: 3, running: 2, pending: 1 }),
    });

    const page = json<ChildPage>(await run('children', 't-1', '--json'));
    expect(page.items.map((r) => `${r.id} ${r.status}`)).toEqual([
      't-1/1/sub/1 completed',
      't-1/1/each/1/0 waiting',
      't-1/1/each/1/1 waiting',
    ]);
    const item = json<Family>(await run('show', 't-1/1/each/1/1', '--json'));
    expect(item.parent).toMatchObject({ id: 't-1', step: 'each', item: 1 });
  });
});
