import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childRefs, createMemoryStore, definitionHash, type Snapshot, type Store } from '@stepfold/engine';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  childOf,
  parentAtChild,
  parentMidway,
  parentOrder,
  shipLine,
  snapshotOf,
} from '../../engine/test/child-fixtures.js';
import { lineItem, rollbackOrder, rolledBackOrder } from '../../engine/test/map-rollback-fixture.js';
import { type ChildPage, listChildren } from '../src/child-listing.js';
import { EXIT } from '../src/exit-codes.js';
import { type Family, loadFamily, renderFamily } from '../src/family.js';
import { runInProcess } from './in-process.js';

// `show` (parent and children) and `children` in-process over the memory store: the store module is
// replaced so `--store` opens the test's store, and stdout/stderr are captured around `main`. The
// snapshots are hand-built in the shapes the child and map kinds write (engine/test/child-fixtures).

const held = vi.hoisted(() => ({ store: undefined as Store | undefined }));
vi.mock('../src/store-url.js', () => ({
  storeUrlOf: () => 'memory://test',
  withStore: async <T>(_url: string, body: (o: { store: Store }) => Promise<T>) =>
    body({ store: held.store! }),
}));
const { main } = await import('../src/cli.js');

/** Runs the CLI in this process and returns what it printed. */
const run = (...args: string[]) => runInProcess(main, args);

const json = <T>(r: { stdout: string }) => JSON.parse(r.stdout) as T;

/** The definitions as JSON files, as `--definitions` reads them. */
function definitionsDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'stepfold-children-'));
  writeFileSync(join(dir, 'order.json'), JSON.stringify(parentOrder));
  writeFileSync(join(dir, 'ship-line.json'), JSON.stringify(shipLine));
  return dir;
}
const DEFS = definitionsDir();

/** o-1 midway through its map (items 0..59 dispatched; 12 never stored), its children; o-2 at its child. */
async function seed(store: Store): Promise<void> {
  const parent = parentMidway('o-1');
  await store.create(parent);
  await store.create(childOf(parent, 'sub', 'completed'));
  for (let i = 0; i < 60; i++) {
    if (i === 12) continue;
    const status = [4, 17, 33].includes(i) ? 'failed' : i >= 40 ? 'waiting' : 'completed';
    const child = childOf(parent, 'lines', status, i);
    if (status === 'failed') child.error = { message: `no L${i}`, code: 'OUT_OF_STOCK' };
    await store.create(child);
  }
  const other = parentAtChild('o-2');
  await store.create(other);
  await store.create(childOf(other, 'sub', 'waiting'));
}

beforeEach(async () => {
  held.store = createMemoryStore();
  await seed(held.store);
});

describe('stepfold show: parent and children', () => {
  it("a parent: its child step's child with the child's status, its map's progress and children prefix", async () => {
    const r = await run('show', 'o-1', '--json', '--definitions', DEFS);
    expect(r.code).toBe(EXIT.ok);
    const shown = json<Family>(r);
    expect(shown.children).toEqual([
      {
        kind: 'child',
        step: 'sub',
        status: 'completed',
        workflow: 'ship-line',
        id: 'o-1/1/sub/1',
        childStatus: 'completed',
      },
      expect.objectContaining({
        kind: 'map',
        step: 'lines',
        workflow: 'ship-line',
        prefix: 'o-1/1/lines/1/',
        progress: expect.objectContaining({ done: 37, failed: 3, running: 20, failedItems: [4, 17, 33] }),
      }),
    ]);
    expect(shown.parent).toBeUndefined();

    const human = await run('show', 'o-1', '--definitions', DEFS);
    expect(human.stdout).toMatch(/^ {2}sub {2}child ship-line {2}→ o-1\/1\/sub\/1 {2}completed$/m);
    expect(human.stdout).toMatch(
      /^ {2}lines {2}map of ship-line {2}active {2}37\/500 done · 3 failed · 20 running$/m,
    );
    expect(human.stdout).toContain('    not started: 440');
    expect(human.stdout).toContain('    failed items: 4, 17, 33');
    expect(human.stdout).toContain(
      `    running items: ${Array.from({ length: 20 }, (_, i) => 40 + i).join(', ')}\n`,
    );
    expect(human.stdout).toContain(
      'children: o-1/1/lines/1/<item>  (list them: stepfold children o-1 --step lines)',
    );
  });

  it('a map that failed and rolled back says so: the completed items it undid are counted', async () => {
    for (const snapshot of await rolledBackOrder('r-1')) await held.store!.create(snapshot);
    const dir = mkdtempSync(join(tmpdir(), 'stepfold-rollback-'));
    writeFileSync(join(dir, 'order.json'), JSON.stringify(rollbackOrder));
    writeFileSync(join(dir, 'line-item.json'), JSON.stringify(lineItem));
    const human = await run('show', 'r-1', '--definitions', dir);
    expect(human.code).toBe(EXIT.ok);
    expect(human.stdout).toMatch(
      /^ {2}lines {2}map of line-item {2}compensated {2}2\/3 done · 1 failed · 2 undone$/m,
    );
    const shown = json<Family>(await run('show', 'r-1', '--json', '--definitions', dir));
    expect(shown.children[0]).toMatchObject({ kind: 'map', progress: { done: 2, failed: 1, undone: 2 } });
  });

  it('without definitions: the map is found to run workflows by its first child naming its parent', async () => {
    const s = (await held.store!.load('o-1'))!;
    s.tasks = {}; // nothing in the snapshot says where the children are
    await held.store!.save({ ...s, version: s.version + 1 }, s.version);
    const shown = json<Family>(await run('show', 'o-1', '--json'));
    expect(shown.children[1]).toMatchObject({ kind: 'map', prefix: 'o-1/1/lines/1/' });
    expect(shown.children[0]).toMatchObject({ kind: 'child', childStatus: 'completed' });
    expect(shown.children[0]).not.toHaveProperty('workflow');
  });

  it('a child: its parent, the step and item that started it, and the parent status', async () => {
    const r = await run('show', 'o-1/1/lines/1/4', '--json');
    expect(json<Family>(r).parent).toEqual({
      id: 'o-1',
      workflow: 'order',
      step: 'lines',
      key: 'o-1/1/lines/1/4',
      item: 4,
      status: 'running',
    });
    const human = await run('show', 'o-1/1/lines/1/4');
    expect(human.stdout).toMatch(/^parent: o-1 {2}order {2}step lines, item 4 {2}\(running\)$/m);
    expect(human.stdout).not.toContain('children:');
  });

  it('the diagram names the child and takes its status: the child waits, so the step is drawn waiting', async () => {
    const r = await run('show', 'o-2', '--diagram', '--definitions', DEFS, '--json');
    const { diagram } = json<{ diagram: string }>(r);
    expect(diagram).toContain('s_sub[["sub<br/>child ship-line<br/>→ o-2/1/sub/1 · waiting"]]');
    expect(diagram).toMatch(/^ {2}class s_sub waiting$/m);
    const mapped = json<{ diagram: string }>(
      await run('show', 'o-1', '--diagram', '--definitions', DEFS, '--json'),
    );
    expect(mapped.diagram).toContain('<br/>37/500 done · 3 failed · 20 running"]]');
  });
});

describe('stepfold children', () => {
  it('pages through every child in order: the child step, then the map items by index', async () => {
    const ids: string[] = [];
    const statuses = new Map<string, string>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const args = ['children', 'o-1', '--limit', '25', '--json', ...(cursor ? ['--cursor', cursor] : [])];
      const page: ChildPage = json(await run(...args));
      expect(page.total).toBe(61);
      expect(page.items.length).toBeLessThanOrEqual(25);
      for (const row of page.items) {
        ids.push(row.id);
        statuses.set(row.id, row.status);
      }
      cursor = page.cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(ids).toEqual(['o-1/1/sub/1', ...Array.from({ length: 60 }, (_, i) => `o-1/1/lines/1/${i}`)]);
    expect(statuses.get('o-1/1/lines/1/12')).toBe('missing');
    expect(statuses.get('o-1/1/lines/1/17')).toBe('failed');
    expect(statuses.get('o-1/1/lines/1/50')).toBe('waiting');
  });

  it('filters by step and status, prints a table, a next-page flag and progress on stderr', async () => {
    const failed = json<ChildPage>(await run('children', 'o-1', '--status', 'failed', '--json'));
    expect(failed.items.map((r) => [r.item, r.error])).toEqual([
      [4, 'OUT_OF_STOCK: no L4'],
      [17, 'OUT_OF_STOCK: no L17'],
      [33, 'OUT_OF_STOCK: no L33'],
    ]);
    expect(failed.cursor).toBeNull();

    const r = await run('children', 'o-1', '--step', 'lines', '--limit', '5', '--batch', '2');
    expect(r.code).toBe(EXIT.ok);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^CHILD\s+STEP\s+ITEM\s+WORKFLOW\s+STATUS\s+VERSION\s+UPDATED\s+ERROR$/);
    expect(lines.slice(1, 6).map((l) => l.split(/\s+/)[0])).toEqual(
      [0, 1, 2, 3, 4].map((i) => `o-1/1/lines/1/${i}`),
    );
    expect(lines).toContain('5 read of 60 children of o-1');
    expect(lines).toContain('next page: --cursor 5');
    expect(r.stderr).toContain('read 2 children, 58 left…');

    expect((await run('children', 'o-1', '--step', 'nope')).code).toBe(EXIT.usage);
    expect((await run('children', 'o-1', '--cursor', '99')).code).toBe(EXIT.usage);
    expect((await run('children', 'nobody')).code).toBe(EXIT['not-found']);
  });
});

describe('the CLI loads the composition kinds itself', () => {
  it('a command that writes takes definitions with child and map steps (no KIND_NOT_LOADED)', async () => {
    // This file passes no kinds anywhere: the CLI passes its own.
    const gate = snapshotOf(shipLine, 'g-1', {
      workflow: { name: 'ship-line', version: 1, hash: definitionHash(shipLine) },
      steps: { pick: { status: 'active', iteration: 1, attempt: 0, startedAt: 0 } },
      active: ['pick'],
    });
    await held.store!.create(gate);
    const r = await run('cancel', 'g-1', '--definitions', DEFS, '--json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(EXIT.ok);
    expect((await held.store!.load('g-1'))!.status).toBe('cancelled');
  });
});

describe('listChildren', () => {
  it('reads a map of 10 000 children a batch at a time, never more loads in flight, one page only', async () => {
    const store = createMemoryStore();
    const parent = parentMidway('big');
    parent.steps['lines']!.map = { total: 10_000, next: 10_000, running: [], failed: [], ok: 10_000 };
    parent.steps['lines']!.status = 'completed';
    parent.steps['lines']!.output = {
      total: 10_000,
      completed: 10_000,
      failed: [],
      children: 'big/1/lines/1/',
    };
    parent.tasks = {};
    let inFlight = 0;
    let most = 0;
    let loads = 0;
    const counting: Store = {
      ...store,
      load: async (id) => {
        loads++;
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 1));
        inFlight--;
        return store.load(id);
      },
    };
    const heard: Array<[number, number]> = [];
    const refs = childRefs(parentOrder, parent).filter((r) => r.step === 'lines');
    const page = await listChildren(
      counting,
      parent,
      refs,
      { limit: 120, batch: 50, cursor: '9900' },
      (scanned, left) => heard.push([scanned, left]),
    );
    expect(page.items.map((r) => r.item)).toEqual(Array.from({ length: 100 }, (_, i) => 9900 + i));
    expect(page.cursor).toBeNull();
    expect(loads).toBe(100);
    expect(most).toBe(50);
    expect(heard).toEqual([
      [50, 50],
      [100, 0],
    ]);
  });
});

describe('renderFamily', () => {
  it('lists at most 20 item indexes and says how many there are', async () => {
    const s: Snapshot = parentMidway('o-1');
    const failed = Array.from({ length: 45 }, (_, i) => i * 2);
    s.steps['lines']!.map = { total: 500, next: 100, running: [], failed, ok: 55 };
    const family = await loadFamily(createMemoryStore(), s, parentOrder);
    const lines = renderFamily(s, family);
    expect(lines).toContain(`    failed items: ${failed.slice(0, 20).join(', ')}, … (45 in all)`);
    expect(lines).toContain('  sub  child ship-line  → o-1/1/sub/1  missing');
    expect(lines.some((l) => l.startsWith('    running items'))).toBe(false);
  });
});
