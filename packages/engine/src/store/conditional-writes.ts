import { FlowRefusedError, NoticeMismatchError, ValidationError, VersionConflictError } from '../errors.js';
import type { Snapshot } from '../snapshot.js';
import { saveFlowOf } from './flow-calls.js';
import type { DeleteOptions, SaveOptions, SentSignal } from './store.js';
import type { DriverOutcome, UpdateCondition } from './store-driver.js';
import type { EncodedSnapshot } from './store-kit.js';
import { type StoreParts, seqsOf } from './store-parts.js';

// The writes of a store made by `defineStore` that hold only on a condition: when the driver says
// the condition failed, these look up why and throw the error that says so.

/**
 * `Store.save`: a write on the expected version (and, when asked, the snapshot and signals it must
 * find). Not async: the common save (nothing to match) is the driver's promise and one `then`.
 */
export function save(
  parts: StoreParts,
  snapshot: Snapshot,
  expectedVersion: number,
  options: SaveOptions | undefined,
): Promise<void> {
  let row: EncodedSnapshot;
  let condition: UpdateCondition;
  try {
    row = parts.kit.encode(snapshot);
    if (options?.flow !== undefined) condition = flowConditionOf(parts, expectedVersion, options);
    else if (options?.matches !== undefined) return matchedSave(parts, row, expectedVersion, options);
    else condition = conditionOf(parts, expectedVersion, options?.consumed);
  } catch (e) {
    return Promise.reject(e);
  }
  // The driver's failure mapped (as `kit.guard` does) in the same `then` that reads its answer.
  let answer: Promise<DriverOutcome>;
  try {
    answer = Promise.resolve(parts.driver.update(row, condition));
  } catch (e) {
    return Promise.reject(parts.unavailable('save', e));
  }
  return answer.then(
    (outcome) => {
      if (outcome === 'written') return undefined;
      if (wrote(outcome)) return void options?.flow?.woken?.(outcome.woken);
      return saveFailed(parts, row, expectedVersion, condition, outcome);
    },
    (e: unknown) => {
      throw parts.unavailable('save', e);
    },
  );
}

/** A save that must also find the snapshot and signals `options.matches` and `options.consumed` name. */
async function matchedSave(
  parts: StoreParts,
  row: EncodedSnapshot,
  expectedVersion: number,
  options: SaveOptions,
): Promise<void> {
  const condition = await matchedConditionOf(parts, expectedVersion, options.consumed, options.matches!);
  const outcome = await parts.kit.guard('save', () => parts.driver.update(row, condition));
  if (outcome !== 'written' && !wrote(outcome))
    await saveFailed(parts, row, expectedVersion, condition, outcome);
}

/** Whether a save with flow work was written: the driver answered the instances its release woke. */
const wrote = (outcome: DriverOutcome): outcome is { woken: string[] } =>
  typeof outcome === 'object' && 'woken' in outcome;

/** A save the driver did not write: throws why (a lost race, a missing instance, a forged notice, a refused take). */
async function saveFailed(
  parts: StoreParts,
  row: EncodedSnapshot,
  expectedVersion: number,
  condition: UpdateCondition,
  outcome: Exclude<DriverOutcome, 'written' | { woken: string[] }>,
): Promise<void> {
  const { kit, driver } = parts;
  if (outcome === 'refused') throw new FlowRefusedError(row.id, condition.flow?.take?.holder ?? '');
  if (outcome === 'failed') {
    // The condition failed: tell a lost race from a missing instance and from a forged notice.
    const stored = await kit.guard('save', () => driver.version(row.id));
    if (stored === expectedVersion && condition.match) throw new NoticeMismatchError(row.id, stored);
    outcome = stored === null ? 'missing' : { stored };
  }
  kit.updated(outcome, row.id, expectedVersion);
}

/** `Store.delete`: unconditional, or only on `options.version`. */
export async function remove(
  parts: StoreParts,
  id: string,
  options: DeleteOptions | undefined,
): Promise<boolean> {
  const { kit, driver } = parts;
  const key = kit.id(id);
  const version = options?.version;
  if (version === undefined) return kit.guard('delete', () => driver.remove(key));
  if (!Number.isSafeInteger(version)) throw new RangeError('delete: version must be an integer');
  if (await kit.guard('delete', () => driver.remove(key, version))) return true;
  // The condition failed: a missing id is false, as for an unconditional delete; any stored
  // version is a lost race, even the one asked for (the instance was re-created meanwhile).
  const stored = await kit.guard('delete', () => driver.version(key));
  if (stored === null) return false;
  throw new VersionConflictError(key, version, stored);
}

/** The condition of a save: the version and the seqs it consumes. */
function conditionOf(
  parts: StoreParts,
  expected: number,
  consumed: readonly SentSignal[] | undefined,
): UpdateCondition {
  if (!Number.isSafeInteger(expected)) throw new RangeError('save: expectedVersion must be an integer');
  if (!consumed?.length) return { expected };
  if (!parts.driver.inbox) throw new TypeError('save: consumed seqs on a store without an inbox');
  return { expected, consumed: seqsOf(consumed.map((p) => p.seq)) };
}

/** The condition of a save that also takes and releases flow holders: a plain conditional write, on a store whose driver does them. */
function flowConditionOf(parts: StoreParts, expected: number, options: SaveOptions): UpdateCondition {
  if (!parts.driver.flow?.inUpdate) throw new TypeError('save: no flow in save');
  if (options.consumed?.length || options.matches !== undefined) throw new TypeError('save: flow with inbox');
  const flow = saveFlowOf(options.flow!);
  return flow ? { expected, flow } : conditionOf(parts, expected, undefined);
}

/** {@link conditionOf} plus the snapshot (and the consumed signals, in the order given: oldest first) it must find. */
async function matchedConditionOf(
  parts: StoreParts,
  expected: number,
  consumed: readonly SentSignal[] | undefined,
  matches: Snapshot,
): Promise<UpdateCondition> {
  const condition = conditionOf(parts, expected, consumed);
  if (matches.version !== expected)
    throw new ValidationError('INVALID_SNAPSHOT', 'save: matches must be the expected version', []);
  const json = JSON.stringify(matches);
  const sent = (consumed ?? []).map((p) => JSON.stringify(p.event));
  const text = json + sent.map((e) => `\n${e}`).join('');
  return { ...condition, match: { json, sent, digest: (await parts.definition.digest?.(text)) ?? '' } };
}
