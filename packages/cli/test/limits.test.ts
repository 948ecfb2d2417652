import { createMemoryStore, type MemoryStore, type Store } from '@stepfold/engine';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { LimitRow } from '../src/commands/limits.js';
import { EXIT } from '../src/exit-codes.js';
import { runInProcess } from './in-process.js';

// `stepfold limits` in-process over the memory store: the store module is replaced so `--store`
// opens the test's store, and stdout/stderr are captured around `main`.

const held = vi.hoisted(() => ({ store: undefined as Store | undefined }));
vi.mock('../src/store-url.js', () => ({
  storeUrlOf: () => 'memory://test',
  withStore: async <T>(_url: string, body: (o: { store: Store }) => Promise<T>) =>
    body({ store: held.store! }),
}));
const { main } = await import('../src/cli.js');

const run = (...args: string[]) => runInProcess(main, args);

const HOUR = 3_600_000;

/** Two holders of customer c-1's order slot with one waiting, one of c-2's, and two API starts. */
async function seed(store: MemoryStore): Promise<void> {
  const now = Date.now();
  const orders = (key: string) => [{ scope: 'orders/pay', key, limit: 2 }];
  const flow = store.flow!;
  await flow.acquire('o-1/1/pay/1#run#1', 'o-1', orders('c-1'), now, now + HOUR);
  await flow.acquire('o-2/1/pay/1#run#1', 'o-2', orders('c-1'), now, now + HOUR);
  await flow.acquire('o-3/1/pay/1#run#1', 'o-3', orders('c-1'), now - 5000, now + HOUR);
  await flow.acquire('o-4/1/pay/1#run#1', 'o-4', orders('c-2'), now, now + HOUR);
  const api = [{ scope: 'api', key: '', limit: 10, periodMs: 60_000 }];
  await flow.acquire('o-1/1/call/1#run#1', 'o-1', api, now, now + HOUR);
  await flow.acquire('o-2/1/call/1#run#1', 'o-2', api, now, now + HOUR);
}

beforeEach(async () => {
  const store = createMemoryStore();
  await seed(store);
  held.store = store;
});

describe('stepfold limits', () => {
  it('lists every key with its holders and waiters, as JSON and as a table', async () => {
    const r = await run('limits', '--json');
    expect(r.code).toBe(EXIT.ok);
    const page = JSON.parse(r.stdout) as { items: LimitRow[]; cursor: string | null };
    expect(page.cursor).toBeNull();
    expect(
      page.items.map((i) => [i.scope, i.key, i.kind, i.limit, i.holders.length, i.waiting.length]),
    ).toEqual([
      ['api', '', 'rate', 10, 2, 0],
      ['orders/pay', 'c-1', 'concurrency', 2, 2, 1],
      ['orders/pay', 'c-2', 'concurrency', 2, 1, 0],
    ]);
    expect(page.items[0]?.periodMs).toBe(60_000);
    expect(page.items[1]?.waiting).toEqual([
      { holder: 'o-3/1/pay/1#run#1', instance: 'o-3', since: expect.any(Number) },
    ]);

    const human = await run('limits');
    expect(human.code).toBe(EXIT.ok);
    const lines = human.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^SCOPE\s+KEY\s+LIMIT\s+HELD\s+WAITING\s+OLDEST WAITING SINCE$/);
    expect(lines[1]).toMatch(/^api\s+-\s+10 per 60000 ms\s+2\s+0\s+-$/);
    expect(lines[2]).toMatch(/^orders\/pay\s+c-1\s+2 at once\s+2\s+1\s+\d{4}-\d\d-\d\dT/);
    expect(lines).toHaveLength(4);
  });

  it('keeps to one scope with --scope, and pages with --limit and --cursor', async () => {
    const one = JSON.parse((await run('limits', '--scope', 'orders/pay', '--json')).stdout) as {
      items: LimitRow[];
    };
    expect(one.items.map((i) => i.key)).toEqual(['c-1', 'c-2']);
    const first = await run('limits', '--limit', '2');
    expect(first.stdout).toContain('next page: --cursor \'["orders/pay","c-1",0]\'');
    const page1 = JSON.parse((await run('limits', '--limit', '2', '--json')).stdout) as {
      items: LimitRow[];
      cursor: string;
    };
    const page2 = JSON.parse(
      (await run('limits', '--limit', '2', '--cursor', page1.cursor, '--json')).stdout,
    ) as {
      items: LimitRow[];
      cursor: string | null;
    };
    expect([...page1.items, ...page2.items].map((i) => i.key)).toEqual(['', 'c-1', 'c-2']);
    expect(page2.cursor).toBeNull();
    expect((await run('limits', '--scope', 'nothing-here')).stdout).toBe('no keys held or waited on\n');
    const bad = await run('limits', '--cursor', 'nope', '--json');
    expect(bad.code).toBe(EXIT.invalid);
    expect(JSON.parse(bad.stdout).error.code).toBe('INVALID_INPUT');
  });

  it('says so when the store has no flow counters', async () => {
    held.store = { ...createMemoryStore(), flow: undefined };
    const r = await run('limits', '--json');
    expect(r.code).toBe(EXIT.usage);
    expect(r.stderr).toMatch(/^error USAGE: this store has no flow counters \(store\.flow\)/);
  });
});
