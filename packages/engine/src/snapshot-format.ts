// The snapshot *format* (its `schemaVersion`), not the workflow's version: when the engine changes
// the shape it stores, a stored snapshot of an older format is upgraded on load by a chain of
// pure functions, one link per format, so no deploy needs a data backfill first. The store kit
// runs the chain on every load, and so does the runner on whatever a `Store` hands it (a
// hand-written store included); the next write stores the current format.

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

/**
 * A snapshot a store handed back, admitted into the engine: upgraded to the current format, its
 * envelope (id, workflow name, version and hash, version) checked, and, given `id`, its id the
 * one asked for. Anything else is `INVALID_SNAPSHOT` naming the problem; nothing is written.
 *
 * @example
 * const s = admitSnapshot(await store.load(id), id); // what the runner does with every load
 */
export function admitSnapshot(value: unknown, id?: string): Snapshot {
  let s: Snapshot;
  try {
    s = upgradeSnapshot(value);
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    throw new ValidationError('INVALID_SNAPSHOT', `stored snapshot cannot be upgraded: ${e.message}`, [
      { path: 'schemaVersion', message: e.message },
    ]);
  }
  const problem = envelopeProblem(s) ?? (id !== undefined && s.id !== id ? idProblem(s.id, id) : undefined);
  if (problem)
    throw new ValidationError('INVALID_SNAPSHOT', `stored snapshot: ${problem.message}`, [problem]);
  return s;
}

function idProblem(got: string, want: string): { path: string; message: string } {
  return {
    path: 'id',
    message: `is ${JSON.stringify(got)}, but instance ${JSON.stringify(want)} was loaded`,
  };
}

/** The first problem with a snapshot's envelope (id, workflow name, version and hash, version), or undefined. */
function envelopeProblem(s: Snapshot): { path: string; message: string } | undefined {
  if (typeof s !== 'object' || s === null || Array.isArray(s)) return { path: '', message: 'not an object' };
  if (typeof s.id !== 'string') return { path: 'id', message: 'must be a string' };
  const wf = s.workflow as Partial<Snapshot['workflow']> | null | undefined;
  if (
    typeof wf !== 'object' ||
    wf === null ||
    typeof wf.name !== 'string' ||
    !Number.isSafeInteger(wf.version) ||
    typeof wf.hash !== 'string'
  )
    return { path: 'workflow', message: 'must name a workflow, its version and its hash' };
  if (!Number.isSafeInteger(s.version)) return { path: 'version', message: 'must be a safe integer' };
  return undefined;
}
