import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createMemoryStore,
  createRunner,
  defineWorkflow,
  FORMAT_UPGRADES,
  type FormatUpgrade,
  type Handler,
  isStepfoldError,
  SNAPSHOT_SCHEMA_VERSION,
  type Snapshot,
  step,
  upgradeSnapshot,
  type WorkflowEvent,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// Every snapshot format the engine ever wrote keeps a folder of fixtures, as that format stored
// them: `fixtures/snapshot-formats/<format>/<case>.json`. Each is loaded through a real store (so
// the store kit's upgrade runs), then driven to its end by today's runner. Bumping the format
// without a link in FORMAT_UPGRADES, or without freezing the old format's fixtures, fails here.
// `STEPFOLD_WRITE_FORMAT_FIXTURES=1` writes the current format's folder (once per format: the
// files are then frozen; never regenerate a past format's).

const DIR = join(dirname(fileURLToPath(import.meta.url)), 'fixtures/snapshot-formats');

/** What a fixture holds: the definition it ran on, the stored snapshot, and how to finish it. */
interface Fixture {
  definition: unknown;
  snapshot: Snapshot;
  /** Applied in order by the runner: ticks at a time, signals, a requeue. */
  finish: Array<{ tick: number } | { signal: string; payload: unknown } | { requeue: true }>;
  expect: { status: string; output?: unknown };
}

const T0 = 1_767_225_600_000; // 2026-01-01, fixed: fixtures must not depend on when they were written

/** The workflow every fixture runs: a saga with a human step, a sleep, retries and a dlq'd step. */
const order = workflow('order', 1, {
  defaults: { retry: { maxAttempts: 3, initialMs: 1000, factor: 2, maxMs: 10_000, jitter: 0 } },
})
  .task('reserve', { handler: 'reserve', compensate: 'release', timeoutMs: 30_000 })
  .human('approve', { timeoutMs: 86_400_000 })
  .sleep('cool', { ms: 60_000 })
  .task('charge', { handler: 'charge', timeoutMs: 30_000 })
  .task('ship', { handler: 'ship', timeoutMs: 30_000, onFailure: 'dlq', retry: { maxAttempts: 1 } })
  .build();

/** The fixtures of the current format, made with the reducer alone (no clock, no randomness). */
function currentFixtures(): Record<string, Fixture> {
  let at = T0;
  const go = (s: Snapshot | null, e: Omit<WorkflowEvent, 'at'> & { at?: number }) => {
    at = Math.max(at + 10, e.at ?? 0);
    return step(order, s, { ...e, at } as WorkflowEvent);
  };
  const done = (s: Snapshot, stepId: string, output: unknown = { ok: stepId }) =>
    go(s, { type: 'task.completed', step: stepId, attempt: s.tasks[stepId]!.attempt, output } as never);
  const started = go(null, { type: 'start', id: 'o-1', input: { sku: 'BOOK-7', qty: 2 } } as never);
  const waiting = done(started, 'reserve');
  const approved = go(waiting, {
    type: 'signal',
    name: 'approve',
    payload: { decision: 'approve', by: 'ana' },
  } as never);
  const charging = go(approved, { type: 'tick', at: approved.wakeAt! } as never);
  const retrying = go(charging, {
    type: 'task.failed',
    step: 'charge',
    attempt: 1,
    error: { message: 'card service down', retryable: true },
  } as never);
  const shipping = done(charging, 'charge', { receipt: 'R-1' });
  const dlq = go(shipping, {
    type: 'task.failed',
    step: 'ship',
    attempt: 1,
    error: { message: 'no carrier', retryable: false },
  } as never);
  const completed = done(shipping, 'ship', { tracking: 'T-1' });
  const rejected = go(waiting, { type: 'signal', name: 'approve', payload: { decision: 'reject' } } as never);
  const buffered = go(started, {
    type: 'signal',
    name: 'approve',
    payload: { decision: 'approve' },
  } as never);
  const forward = { status: 'completed', output: { tracking: 'T-1' } };
  const end = [{ tick: T0 + 3_600_000 }, { tick: T0 + 7_200_000 }];
  return {
    'waiting-human': {
      definition: order,
      snapshot: waiting,
      finish: [{ signal: 'approve', payload: { decision: 'approve' } }, ...end],
      expect: forward,
    },
    sleeping: { definition: order, snapshot: approved, finish: end, expect: forward },
    'task-in-flight': { definition: order, snapshot: charging, finish: end, expect: forward },
    'retry-waiting': { definition: order, snapshot: retrying, finish: end, expect: forward },
    'signal-buffered': { definition: order, snapshot: buffered, finish: end, expect: forward },
    compensating: { definition: order, snapshot: rejected, finish: end, expect: { status: 'failed' } },
    dlq: { definition: order, snapshot: dlq, finish: [{ requeue: true }], expect: forward },
    completed: { definition: order, snapshot: completed, finish: [], expect: forward },
  };
}

const formats = (): number[] =>
  readdirSync(DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => Number(d.name))
    .sort((a, b) => a - b);

const fixturesOf = (format: number): Array<[string, Fixture]> =>
  readdirSync(join(DIR, String(format)))
    .filter((f) => f.endsWith('.json'))
    .map((f) => [f.replace(/\.json$/, ''), JSON.parse(readFileSync(join(DIR, String(format), f), 'utf8'))]);

if (process.env['STEPFOLD_WRITE_FORMAT_FIXTURES'] === '1') {
  const out = join(DIR, String(SNAPSHOT_SCHEMA_VERSION));
  mkdirSync(out, { recursive: true });
  for (const [name, f] of Object.entries(currentFixtures()))
    writeFileSync(join(out, `${name}.json`), `${JSON.stringify(f, null, 2)}\n`);
}

/** Every handler succeeds: a fixture's end depends on the state it was frozen in, not on luck. */
const handlers: Record<string, Handler> = {
  reserve: async () => ({ ok: 'reserve' }),
  release: async () => ({ released: true }),
  charge: async () => ({ receipt: 'R-1' }),
  ship: async () => ({ tracking: 'T-1' }),
};

describe('snapshot formats', () => {
  it('keep a fixture folder for every format up to the current one, and a link for every past one', () => {
    expect(formats()).toEqual(Array.from({ length: SNAPSHOT_SCHEMA_VERSION }, (_, i) => i + 1));
    for (let n = 1; n < SNAPSHOT_SCHEMA_VERSION; n++) expect(Object.hasOwn(FORMAT_UPGRADES, n)).toBe(true);
    for (const n of formats()) expect(fixturesOf(n).length).toBeGreaterThanOrEqual(8);
  });

  it('the current format’s fixtures are what today’s reducer writes (so the format did not drift unnoticed)', () => {
    const now = currentFixtures();
    for (const [name, f] of fixturesOf(SNAPSHOT_SCHEMA_VERSION))
      expect(JSON.parse(JSON.stringify(now[name]?.snapshot)), name).toEqual(f.snapshot);
  });

  for (const format of formats()) {
    for (const [name, fixture] of fixturesOf(format)) {
      it(`format ${format}: ${name} loads through a store and runs to its end on today’s engine`, async () => {
        const def = defineWorkflow(fixture.definition as never);
        const store = createMemoryStore();
        // As stored then: the store's create writes the JSON, its load runs the upgrade chain.
        await store.create(fixture.snapshot);
        const loaded = await store.load(fixture.snapshot.id);
        expect(loaded?.schemaVersion).toBe(SNAPSHOT_SCHEMA_VERSION);
        let now = fixture.snapshot.updatedAt + 1;
        const runner = createRunner({ store, workflows: [def], handlers, clock: () => now });
        for (const action of fixture.finish) {
          if ('tick' in action) {
            now = action.tick;
            // Every due timer and lost task, as a worker's polls would find them.
            for (let i = 0; i < 10; i++) await runner.processDue(now);
          } else if ('signal' in action)
            await runner.signal(fixture.snapshot.id, action.signal, action.payload);
          else await runner.requeue(fixture.snapshot.id);
        }
        const end = await runner.get(fixture.snapshot.id);
        expect(end?.status).toBe(fixture.expect.status);
        if (fixture.expect.output !== undefined) expect(end?.output).toEqual(fixture.expect.output);
      });
    }
  }
});

describe('upgradeSnapshot', () => {
  const base = currentFixtures()['waiting-human']!.snapshot;

  it('returns a current snapshot as is (loads pay one comparison)', () => {
    expect(upgradeSnapshot(base)).toBe(base);
  });

  it('runs a chain of links in order, each from its format to the next', () => {
    // A made-up history: format 1 had `state` for status, format 2 added `tags`, format 3 is today.
    const seen: number[] = [];
    const upgrades: Record<number, FormatUpgrade> = {
      1: ({ state, ...s }) => {
        seen.push(1);
        return { ...s, status: state, schemaVersion: 2 };
      },
      2: (s) => {
        seen.push(2);
        return { ...s, tags: [], schemaVersion: 3 };
      },
    };
    const { status, ...rest } = base;
    const old = { ...rest, state: status, schemaVersion: 1 };
    const frozen = JSON.stringify(old);
    const up = upgradeSnapshot(old, { upgrades, current: 3 }) as unknown as Record<string, unknown>;
    expect(seen).toEqual([1, 2]);
    expect(up['status']).toBe(status);
    expect(up['tags']).toEqual([]);
    expect(up['schemaVersion']).toBe(3);
    expect(JSON.stringify(old)).toBe(frozen); // pure: its argument is untouched
  });

  it('refuses a newer format, a missing link, a link that misses its format, and non-snapshots', () => {
    const refused = (v: unknown, o?: Parameters<typeof upgradeSnapshot>[1]) => {
      try {
        upgradeSnapshot(v, o);
      } catch (e) {
        return isStepfoldError(e, 'INVALID_SNAPSHOT');
      }
      return false;
    };
    expect(refused({ ...base, schemaVersion: SNAPSHOT_SCHEMA_VERSION + 1 })).toBe(true);
    expect(
      refused(
        { ...base, schemaVersion: 1 },
        { current: 3, upgrades: { 1: (s) => ({ ...s, schemaVersion: 2 }) } },
      ),
    ).toBe(true);
    expect(refused({ ...base, schemaVersion: 1 }, { current: 2, upgrades: { 1: (s) => ({ ...s }) } })).toBe(
      true,
    );
    for (const v of [null, 'x', [], {}, { schemaVersion: '1' }, { schemaVersion: 0 }, { schemaVersion: 1.5 }])
      expect(refused(v), JSON.stringify(v)).toBe(true);
  });

  it('a store refuses to load a snapshot of a format newer than this engine', async () => {
    const store = createMemoryStore();
    await store.create({ ...base, schemaVersion: SNAPSHOT_SCHEMA_VERSION + 1 });
    await expect(store.load(base.id)).rejects.toMatchObject({ code: 'INVALID_SNAPSHOT' });
  });
});
