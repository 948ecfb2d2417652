import { expect, it } from 'vitest';
import { isStepfoldError } from '../../errors.js';
import type { Snapshot } from '../../snapshot.js';
import type { Store } from '../../store/store.js';
import { makeTestSnapshot } from '../test-snapshot.js';
import type { SuiteContext } from './context.js';

interface Counter {
  count: number;
  by: number;
}

/** One conditional increment: load, bump, save against the loaded version. True if it won. */
async function attempt(store: Store, id: string, writer: number, loaded?: Snapshot): Promise<boolean> {
  const s = loaded ?? ((await store.load(id)) as Snapshot);
  const next = { ...s, version: s.version + 1, input: { count: (s.input as Counter).count + 1, by: writer } };
  try {
    await store.save(next, s.version);
    return true;
  } catch (e) {
    if (isStepfoldError(e, 'VERSION_CONFLICT')) return false;
    throw e;
  }
}

/** Many writers on one instance: one winner per version, no lost update. */
export function describeRace({ options, fresh }: SuiteContext): void {
  const writers = options.writers ?? 16;
  const rounds = options.rounds ?? 200;

  it(`${writers} writers racing for ${rounds} rounds: exactly one winner per version, none lost`, async () => {
    const store = await fresh();
    const id = 'race-lockstep';
    await store.create(makeTestSnapshot(id, { input: { count: 0, by: -1 } }));
    const writerIds = Array.from({ length: writers }, (_, w) => w);
    let wins = 0;
    for (let round = 0; round < rounds; round++) {
      // Everyone loads the same version, then everyone tries to write the next one.
      const loaded = await Promise.all(writerIds.map(() => store.load(id)));
      expect(new Set(loaded.map((s) => s?.version)).size).toBe(1);
      const won = await Promise.all(writerIds.map((w) => attempt(store, id, w, loaded[w] as Snapshot)));
      expect(won.filter(Boolean)).toHaveLength(1);
      wins += 1;
    }
    const final = (await store.load(id)) as Snapshot;
    expect(final.version).toBe(1 + wins);
    expect((final.input as Counter).count).toBe(wins);
  });

  it(`${writers} free-running writers retrying on conflict: every increment lands once`, async () => {
    const store = await fresh();
    const id = 'race-free';
    await store.create(makeTestSnapshot(id, { input: { count: 0, by: -1 } }));
    const each = Math.max(2, Math.round(rounds / 20));
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        for (let done = 0; done < each; ) {
          if (await attempt(store, id, w)) done++;
        }
      }),
    );
    const final = (await store.load(id)) as Snapshot;
    expect((final.input as Counter).count).toBe(writers * each);
    expect(final.version).toBe(1 + writers * each);
  });
}
