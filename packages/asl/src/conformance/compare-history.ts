import { canonicalJson } from '@stepfold/engine';
import type { AslEvent, AslStateIO } from '../trace.js';
import { type Mask, normaliseValue } from './normalise.js';

// L2 and L3: the engine's history against the recorded one. Outside Parallel and Map blocks the
// entries compare in order; each maximal run of entries in one outermost block compares as a
// multiset (branches and iterations interleave in any order).

type Unit = { key: string } | { block: string[] };

/** Splits entries into in-order units: single entries outside blocks, sorted keys per block run. */
function units<T extends { block?: string | undefined }>(list: readonly T[], key: (x: T) => string): Unit[] {
  const out: Unit[] = [];
  let run: { id: string; keys: string[] } | undefined;
  const close = () => {
    if (run) out.push({ block: run.keys.sort() });
    run = undefined;
  };
  for (const x of list) {
    const outer = x.block?.split('/')[0];
    if (outer === undefined) {
      close();
      out.push({ key: key(x) });
    } else {
      if (run && run.id !== outer) close();
      run ??= { id: outer, keys: [] };
      run.keys.push(key(x));
    }
  }
  close();
  return out;
}

function show(u: Unit | undefined): string {
  if (!u) return 'nothing';
  return 'key' in u ? u.key : `block [${u.block.join(', ')}]`;
}

function compareUnits(got: Unit[], want: Unit[], prefix: boolean): string | undefined {
  const n = prefix ? want.length : Math.max(got.length, want.length);
  for (let i = 0; i < n; i++) {
    const a = got[i];
    const b = want[i];
    if (JSON.stringify(a) !== JSON.stringify(b))
      return `at ${i}: ${show(a).slice(0, 300)}, recorded ${show(b).slice(0, 300)}`;
  }
  return undefined;
}

/** L2: the `(type, state, index)` sequence. Returns why it differs, or undefined. */
export function compareEvents(
  got: readonly AslEvent[],
  want: ReadonlyArray<{ type: string; state?: string; index?: number; block?: string }>,
  options: { dropParallelSucceeded: boolean; prefix: boolean },
): string | undefined {
  const key = (e: { type: string; state?: string | undefined; index?: number | undefined }) =>
    `${e.type}${e.state === undefined ? '' : ` ${e.state}`}${e.index === undefined ? '' : ` #${e.index}`}`;
  const mine = options.dropParallelSucceeded ? got.filter((e) => e.type !== 'ParallelStateSucceeded') : got;
  return compareUnits(units(mine, key), units(want, key), options.prefix);
}

/**
 * L3: each state's input, output and assigned variables. Returns why they differ, or undefined.
 * `partial` (a recording whose Parallel normaliser dropped entries): inside a block the recorded
 * entries must all be the engine's, which may have more `ParallelStateExited` entries besides.
 */
export function compareStateIO(
  got: readonly AslStateIO[],
  want: readonly unknown[],
  masks: readonly Mask[],
  partial = false,
): string | undefined {
  const key = (x: AslStateIO) => {
    const { block: _block, iteration: _iteration, ...rest } = x as AslStateIO & { iteration?: number };
    return canonicalJson(rest);
  };
  const mine = got.map((x) => normaliseValue(x, masks) as AslStateIO);
  const theirs = units(want as AslStateIO[], key);
  let ours = units(mine, key);
  if (partial) ours = ours.map((u, i) => ('block' in u ? { block: dropUnrecorded(u.block, theirs[i]) } : u));
  return compareUnits(ours, theirs, false);
}

/** A block's entries less the `ParallelStateExited` ones the recorded block lacks. */
function dropUnrecorded(mine: string[], recorded: Unit | undefined): string[] {
  if (!recorded || !('block' in recorded)) return mine;
  const left = new Map<string, number>();
  for (const k of recorded.block) left.set(k, (left.get(k) ?? 0) + 1);
  return mine.filter((k) => {
    const n = left.get(k) ?? 0;
    if (n > 0) {
      left.set(k, n - 1);
      return true;
    }
    return !k.includes('"event":"ParallelStateExited"');
  });
}
