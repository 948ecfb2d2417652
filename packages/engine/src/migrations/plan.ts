import { Immer } from 'immer';
import { declaredSchemas } from '../definition/declared-schemas.js';
import { isStepfoldError } from '../errors.js';
import type { KindSet } from '../reducer/kind-table.js';
import { step } from '../reducer/reducer.js';
import { updateSearch } from '../reducer/search-values.js';
import { checkSnapshot } from '../reducer/snapshot-check.js';
import { ring } from '../reducer/snapshot-copy.js';
import { DEFAULT_LOG_LIMIT, taskKey } from '../reducer/transition-context.js';
import { type SearchValue, searchValueProblem } from '../search.js';
import { isTerminal, type Snapshot, type StepState, type TaskState } from '../snapshot.js';
import { type Migration, type MigrationData, versionName } from './define.js';
import { activeReasons, completedReasons, rollbackReasons, taskReasons, timerReasons } from './rules.js';

/** Options of {@link planMigration}. */
export interface PlanOptions {
  /** The migration's time (epoch ms): the new `updatedAt`, the log entry's, the validating tick's. */
  at: number;
  /** Step kinds beyond the core the new version uses (`[composition]`), for the validating tick. */
  kinds?: readonly KindSet[] | undefined;
}

/** What {@link planMigration} answers: the snapshot on the new version, or why the instance cannot move. */
export type MigrationPlan = { ok: true; snapshot: Snapshot } | { ok: false; reasons: string[] };

// A recipe drafts a copy and the result is plain: the reducer freezes what it returns, not us.
const immer = new Immer({ autoFreeze: false });

const SAVEPOINT = 'savepoint:';
const PARKED = new Set(['active', 'dlq']);
const PAST = new Set(['completed', 'skipped', 'failed']);

/** Why the instance, as stored, cannot move: what it holds that has no place in the new version. */
function holdingReasons(m: Migration, s: Snapshot): string[] {
  const out: string[] = [];
  const active = new Set(s.active);
  for (const [id, st] of Object.entries(s.steps)) {
    if (!Object.hasOwn(m.steps, id)) {
      out.push(`step "${id}" is not in ${versionName(m.from)}`);
      continue;
    }
    if (active.has(id) || PARKED.has(st.status)) out.push(...activeReasons(m, id));
    else if (PAST.has(st.status)) out.push(...completedReasons(m, id));
    else if (st.status === 'compensating' || st.status === 'compensation-dlq')
      out.push(...rollbackReasons(m, id));
  }
  for (const entry of s.completed) {
    if (entry.startsWith(SAVEPOINT)) out.push(...completedReasons(m, entry.slice(SAVEPOINT.length)));
  }
  for (const t of Object.values(s.tasks)) out.push(...taskReasons(m, t.step, t.phase, t.handler));
  for (const t of s.timers) out.push(...timerReasons(m, t.step, t));
  for (const id of s.saga?.queue ?? []) out.push(...rollbackReasons(m, id));
  return out;
}

/** `s` (a plain copy) with every step id renamed to the new version's, removed steps dropped. */
function renameSteps(m: Migration, s: Snapshot): void {
  const to = (id: string) => m.steps[id] ?? null;
  const steps: Record<string, StepState> = {};
  for (const [id, st] of Object.entries(s.steps)) {
    const n = to(id);
    if (n !== null) steps[n] = st;
  }
  s.steps = steps;
  s.active = s.active.flatMap((id) => to(id) ?? []);
  s.completed = s.completed.flatMap((entry) => {
    if (!entry.startsWith(SAVEPOINT)) return to(entry) ?? [];
    const n = to(entry.slice(SAVEPOINT.length));
    return n === null ? [] : [`${SAVEPOINT}${n}`];
  });
  const tasks: Record<string, TaskState> = {};
  for (const t of Object.values(s.tasks)) {
    const n = to(t.step) ?? t.step;
    tasks[taskKey(n, t.phase, t.item)] = { ...t, step: n };
  }
  s.tasks = tasks;
  s.timers = s.timers.map((t) => ({ ...t, step: to(t.step) ?? t.step }));
  if (s.saga) s.saga = { ...s.saga, queue: s.saga.queue.flatMap((id) => to(id) ?? []) };
  if (s.error?.step !== undefined) s.error = { ...s.error, step: to(s.error.step) ?? s.error.step };
}

/** Runs the data recipe over a draft of the copy's data and writes the result back; reasons if it cannot. */
function applyRecipe(m: Migration, s: Snapshot, from: Snapshot, at: number): string[] {
  if (!m.data) return [];
  const outputs: Record<string, unknown> = {};
  for (const [id, st] of Object.entries(s.steps)) if (st.output !== undefined) outputs[id] = st.output;
  const base: MigrationData = { input: s.input, outputs, signals: s.inbox };
  let next: MigrationData;
  try {
    const recipe = m.data;
    const drafted = immer.produce(base, (draft) => {
      recipe(draft, { id: s.id, from, at });
    });
    // Stored as JSON: what the recipe left is what a reload would see (a BigInt or a cycle throws).
    next = JSON.parse(JSON.stringify(drafted)) as MigrationData;
  } catch (e) {
    return [`data recipe threw: ${e instanceof Error ? e.message : String(e)}`];
  }
  if (typeof next.outputs !== 'object' || next.outputs === null || Array.isArray(next.outputs))
    return ['data recipe left outputs that are not an object'];
  if (!Array.isArray(next.signals)) return ['data recipe left signals that are not a list'];
  if (next.signals.some((r) => typeof r?.name !== 'string' || typeof r.at !== 'number'))
    return ['data recipe left a signal without a name or time'];
  const out: string[] = [];
  s.input = next.input ?? null;
  for (const [id, st] of Object.entries(s.steps)) {
    if (next.outputs[id] === undefined) delete st.output;
    else st.output = next.outputs[id];
  }
  for (const id of Object.keys(next.outputs)) {
    if (!Object.hasOwn(s.steps, id))
      out.push(`data recipe set an output for "${id}", a step the instance has not run`);
  }
  s.inbox = next.signals;
  return out;
}

/**
 * Brings the copy's search attributes under the new version's declarations, as its first event
 * would: a value a handler set is kept while the new version still declares it (without a path)
 * and it fits the new type; one read from a path is read again from the migrated data, by the new
 * path. A value that does not fit is a reason (the move would fail the instance's next write).
 */
function migrateSearch(m: Migration, s: Snapshot): string[] {
  const declared = m.to.definition.search;
  const kept: Record<string, SearchValue> = {};
  const out: string[] = [];
  for (const [name, v] of Object.entries(s.search ?? {})) {
    const a = declared && Object.hasOwn(declared, name) ? declared[name] : undefined;
    // Not declared any more: dropped (and so unindexed). Read from a path: read again below.
    if (!a || a.from !== undefined) continue;
    const problem = searchValueProblem(a.type, v);
    if (problem)
      out.push(`search attribute "${name}", set by a handler, ${problem} (its type in ${versionName(m.to)})`);
    else kept[name] = v;
  }
  if (out.length) return out;
  if (Object.keys(kept).length) s.search = kept;
  else delete s.search;
  try {
    updateSearch(m.to, s);
  } catch (e) {
    if (!isStepfoldError(e, 'INVALID_SEARCH_ATTRIBUTE')) throw e;
    for (const i of e.issues)
      out.push(`search attribute "${i.path.slice('search.'.length)}": ${i.message} in ${versionName(m.to)}`);
  }
  return out;
}

/** Why the migrated snapshot is not one the new version can run: schema, structure, one reducer step. */
function validate(m: Migration, s: Snapshot, { at, kinds }: PlanOptions): string[] {
  const v = versionName(m.to);
  const out: string[] = [];
  const accepts = m.to.definition.acceptUnknownSignals === true;
  for (const r of s.inbox)
    if (!accepts && !m.to.signals.has(r.name)) out.push(`pending signal "${r.name}" is not accepted by ${v}`);
  const schema = declaredSchemas(m.to.definition)?.input;
  if (schema) {
    const result = schema['~standard'].validate(s.input);
    // An asynchronous schema cannot be awaited by a pure, synchronous plan: it is left to `start`'s path.
    if (!(result instanceof Promise) && result.issues?.length)
      out.push(`the input does not match ${v}'s input schema`);
  }
  if (out.length) return out;
  try {
    checkSnapshot(m.to, s);
    step(m.to.definition, s, { type: 'tick', at }, { kinds });
  } catch (e) {
    const code = isStepfoldError(e) ? ` (${e.code})` : '';
    out.push(`${v} cannot step the migrated instance${code}: ${e instanceof Error ? e.message : String(e)}`);
  }
  return out;
}

/**
 * Plans the move of one instance to the migration's new version, in memory: checks it runs the
 * old version (name, version and hash), applies the step rules to what it holds (active steps,
 * tasks, timers, rollback queue, completed steps), renames step ids throughout, runs the data
 * recipe, brings its search attributes under the new declarations, then validates the result against the new version (its structure, its declared input
 * schema, one reducer tick). Pure; a recipe that throws is a reason, not a crash.
 *
 * @example
 * const plan = planMigration(toV2, snapshot, { at: Date.now() });
 * if (!plan.ok) console.log(plan.reasons);
 */
export function planMigration(m: Migration, snapshot: Snapshot, options: PlanOptions): MigrationPlan {
  const { at } = options;
  const { name, version } = m.from.definition;
  const w = snapshot.workflow;
  if (w.name !== name || w.version !== version)
    return { ok: false, reasons: [`instance runs ${w.name} v${w.version}, not ${name} v${version}`] };
  if (w.hash !== m.from.hash)
    return { ok: false, reasons: [`instance started on a different ${name} v${version} (hash differs)`] };
  if (isTerminal(snapshot.status))
    return { ok: false, reasons: [`instance has finished (${snapshot.status})`] };
  const held = [...new Set(holdingReasons(m, snapshot))];
  if (held.length) return { ok: false, reasons: held };

  const s = structuredClone(snapshot) as Snapshot;
  renameSteps(m, s);
  const recipe = applyRecipe(m, s, snapshot, at);
  if (recipe.length) return { ok: false, reasons: recipe };
  const search = migrateSearch(m, s);
  if (search.length) return { ok: false, reasons: search };
  s.workflow = { name: m.to.definition.name, version: m.to.definition.version, hash: m.to.hash };
  s.version = snapshot.version + 1;
  s.updatedAt = at;
  const entry = {
    v: s.version,
    at,
    type: 'migrated',
    detail: `${versionName(m.from)} → ${versionName(m.to)}`,
  };
  s.log = ring(s.log, [entry], m.to.definition.limits?.log ?? DEFAULT_LOG_LIMIT);
  const invalid = validate(m, s, options);
  return invalid.length ? { ok: false, reasons: invalid } : { ok: true, snapshot: s };
}
