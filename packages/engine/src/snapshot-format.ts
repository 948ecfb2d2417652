// The snapshot *format* (its `schemaVersion`), not the workflow's version: when the engine changes
// the shape it stores, a stored snapshot of an older format is upgraded on load by a chain of
// pure functions, one link per format, so no deploy needs a data backfill first. The store kit
// runs the chain on every load; the next write stores the current format.

import { ValidationError } from './errors.js';
import { SNAPSHOT_SCHEMA_VERSION, type Snapshot } from './snapshot.js';

/** One link of the chain: a snapshot of format `n` in, the same instance in format `n + 1` out. Pure; must not mutate its argument. */
export type FormatUpgrade = (snapshot: Readonly<Record<string, unknown>>) => Record<string, unknown>;

/**
 * The links of the chain, by the format each one upgrades from. Format 1 is the first the engine
 * wrote and still the current one, so the chain is empty; a change to the stored shape bumps
 * {@link SNAPSHOT_SCHEMA_VERSION}, adds its link here and a fixture folder of the old format to
 * the engine's tests (a test fails until both exist).
 */
export const FORMAT_UPGRADES: Readonly<Record<number, FormatUpgrade>> = {};

/** Options of {@link upgradeSnapshot}; the defaults are the engine's own chain (tests pass others). */
export interface UpgradeOptions {
  upgrades?: Readonly<Record<number, FormatUpgrade>> | undefined;
  /** The format to reach (default {@link SNAPSHOT_SCHEMA_VERSION}). */
  current?: number | undefined;
}

/**
 * A parsed stored snapshot in the current format: returned as is when it already is (one
 * comparison: loads pay nothing), else run through every link from its format up. A format newer
 * than this engine's, or one with no link, is `INVALID_SNAPSHOT` (nothing is guessed).
 *
 * @example
 * const s = upgradeSnapshot(JSON.parse(row.snapshot)); // what every store's load does
 */
export function upgradeSnapshot(value: unknown, options: UpgradeOptions = {}): Snapshot {
  const current = options.current ?? SNAPSHOT_SCHEMA_VERSION;
  let s = value as Record<string, unknown>;
  if (s?.['schemaVersion'] === current) return value as Snapshot;
  const upgrades = options.upgrades ?? FORMAT_UPGRADES;
  const from = s?.['schemaVersion'];
  // Past formats have a link each; anything else (newer than this engine, not a number) does not.
  for (let n = from as number; n !== current; n++) {
    if (!(Number.isSafeInteger(n) && n >= 1 && n < current && Object.hasOwn(upgrades, n)))
      throw new ValidationError('INVALID_SNAPSHOT', 'unsupported snapshot format', [
        {
          path: 'schemaVersion',
          message: `no upgrade from format ${n} to ${current}`,
        },
      ]);
    s = upgrades[n]!(s);
    if (s?.['schemaVersion'] !== n + 1) n = Number.NaN; // a link that did not reach its format: refused above
  }
  return s as unknown as Snapshot;
}
