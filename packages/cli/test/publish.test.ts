import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryStore, type Store } from '@stepfold/engine';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { runInProcess } from './in-process.js';

// `stepfold publish` in-process over the memory store: the store module is replaced so `--store`
// opens the test's store, and stdout/stderr are captured around `main`.

const held = vi.hoisted(() => ({ store: undefined as Store | undefined }));
vi.mock('../src/store-url.js', () => ({
  storeUrlOf: () => 'memory://test',
  withStore: async <T>(_url: string, body: (o: { store: Store }) => Promise<T>) =>
    body({ store: held.store! }),
}));
const { main } = await import('../src/cli.js');

const run = (...args: string[]) => runInProcess(main, args);

const dir = mkdtempSync(join(tmpdir(), 'stepfold-publish-'));
const definition = join(dir, 'fulfil.json');
writeFileSync(
  definition,
  JSON.stringify({
    name: 'fulfil',
    version: 1,
    start: 'ship',
    on: { event: 'order.placed', filter: { '>=': [{ var: 'input.total' }, 10] } },
    steps: { ship: { kind: 'task', handler: 'ship' } },
  }),
);

beforeEach(() => {
  held.store = createMemoryStore();
});

describe('stepfold publish', () => {
  it('starts the matching workflow once per event id, its task queued for workers', async () => {
    const args = [
      'publish',
      'order.placed',
      '--id',
      'evt-1',
      '--data',
      '{"total":12}',
      '--definitions',
      definition,
    ];
    const first = await run(...args, '--json');
    expect(first.code).toBe(EXIT.ok);
    expect(JSON.parse(first.stdout)).toMatchObject({
      event: 'order.placed',
      id: 'evt-1',
      started: [{ workflow: 'fulfil', version: 1, id: 'fulfil:evt-1' }],
      existed: [],
    });
    const run1 = await held.store!.load('fulfil:evt-1');
    expect(run1).toMatchObject({ status: 'running', input: { total: 12 } });
    expect(run1!.tasks['ship']).toMatchObject({ queued: true });

    const again = await run(...args);
    expect(again.code).toBe(EXIT.unchanged);
    expect(again.stdout).toContain('existed fulfil:evt-1 (fulfil v1)');
  });

  it('an event no workflow starts on changes nothing and exits unchanged', async () => {
    const small = await run(
      'publish',
      'order.placed',
      '--id',
      'evt-2',
      '--data',
      '{"total":3}',
      '--definitions',
      definition,
    );
    expect(small.code).toBe(EXIT.unchanged);
    expect(small.stdout).toContain('no workflow starts on it');
    expect((await held.store!.list({ limit: 10 })).items).toEqual([]);
  });

  it('a bad event id is INVALID_ID (exit invalid), nothing written', async () => {
    const bad = await run(
      'publish',
      'order.placed',
      '--id',
      'has space',
      '--data',
      '{"total":30}',
      '--definitions',
      definition,
    );
    expect(bad.code).toBe(EXIT.invalid);
    expect(bad.stderr).toContain('INVALID_ID');
    expect((await held.store!.list({ limit: 10 })).items).toEqual([]);
  });
});
