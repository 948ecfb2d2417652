import type { CompiledWorkflow } from '../definition/compile.js';
import { RegistryError, ValidationError } from '../errors.js';
import type { EventOf } from '../events.js';
import {
  isFairKey,
  isPriority,
  MAX_FAIR_KEY_LENGTH,
  MAX_PRIORITY,
  SNAPSHOT_SCHEMA_VERSION,
  type Snapshot,
} from '../snapshot.js';
import { SAVEPOINT } from './compensation.js';

/** The empty snapshot a start event builds on (a reuse continues the old version count). */
export function initialSnapshot(
  wf: CompiledWorkflow,
  ev: EventOf<'start'>,
  previous: Snapshot | null,
): Snapshot {
  const { name, version } = wf.definition;
  const s: Snapshot = {
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    id: ev.id,
    workflow: { name, version, hash: wf.hash },
    version: previous ? previous.version + 1 : 1,
    run: 1,
    status: 'running',
    input: ev.input ?? null,
    steps: {},
    active: [],
    completed: [],
    tasks: {},
    timers: [],
    inbox: [],
    seenSignals: [],
    wakeAt: null,
    createdAt: ev.at,
    updatedAt: ev.at,
    log: [],
  };
  // A copy: the event's object stays the caller's (the snapshot is frozen).
  if (ev.trace !== undefined) s.trace = { ...ev.trace };
  if (ev.parent !== undefined) s.parent = { ...ev.parent };
  if (ev.schedule !== undefined) s.schedule = { ...ev.schedule };
  if (ev.priority !== undefined) s.priority = ev.priority;
  return s;
}

const STATUSES = new Set([
  'running',
  'waiting',
  'compensating',
  'completed',
  'failed',
  'cancelled',
  'aborted',
  'dlq',
]);

/** Cheap structural check of a snapshot against the definition it is about to be stepped with. */
export function checkSnapshot(wf: CompiledWorkflow, s: Snapshot): void {
  const problems: Array<{ path: string; message: string }> = [];
  const bad = (path: string, message: string) => problems.push({ path, message });
  if (typeof s !== 'object' || s === null) bad('', 'snapshot must be an object');
  else {
    if (s.schemaVersion !== SNAPSHOT_SCHEMA_VERSION)
      bad('schemaVersion', `unsupported snapshot format ${String(s.schemaVersion)}`);
    if (typeof s.id !== 'string') bad('id', 'must be a string');
    if (!Number.isInteger(s.version) || s.version < 1) bad('version', 'must be a positive integer');
    if (!Number.isInteger(s.run) || s.run < 1) bad('run', 'must be a positive integer');
    if (!STATUSES.has(s.status)) bad('status', `unknown status ${String(s.status)}`);
    if (typeof s.updatedAt !== 'number' || s.updatedAt < 0) bad('updatedAt', 'must be a non-negative number');
    if (s.fairKey !== undefined && !isFairKey(s.fairKey))
      bad('fairKey', `must be a string of at most ${MAX_FAIR_KEY_LENGTH} characters`);
    if (s.priority !== undefined && !isPriority(s.priority))
      bad('priority', `must be an integer from 0 to ${MAX_PRIORITY}`);
    for (const k of ['steps', 'tasks'] as const) {
      if (typeof s[k] !== 'object' || s[k] === null || Array.isArray(s[k])) bad(k, 'must be an object');
    }
    for (const k of ['active', 'completed', 'timers', 'inbox', 'seenSignals', 'log'] as const) {
      if (!Array.isArray(s[k])) bad(k, 'must be an array');
    }
    if (typeof s.workflow !== 'object' || s.workflow === null) bad('workflow', 'must be an object');
    else if (s.workflow.name !== wf.definition.name || s.workflow.version !== wf.definition.version) {
      bad(
        'workflow',
        `snapshot runs ${s.workflow.name} v${s.workflow.version}, not ${wf.definition.name} v${wf.definition.version}`,
      );
    }
    if (problems.length === 0) {
      for (const id of Object.keys(s.steps)) {
        if (!Object.hasOwn(wf.definition.steps, id)) bad(`steps.${id}`, 'step is not in the definition');
      }
      stepReferences(wf, s, bad);
    }
  }
  if (problems.length) throw new ValidationError('INVALID_SNAPSHOT', 'invalid snapshot', problems);
  if (s.workflow.hash !== wf.hash) throw hashMismatch(s, wf.definition, wf.hash);
}

/** `DEFINITION_HASH_MISMATCH`: `s` pinned other content than `definition` (of hash `hash`) under its version. */
export function hashMismatch(
  s: Snapshot,
  definition: { name: string; version: number },
  hash: string,
): RegistryError {
  return new RegistryError(
    'DEFINITION_HASH_MISMATCH',
    `definition ${definition.name} v${definition.version} changed since instance ${s.id} started (hash ${s.workflow.hash.slice(0, 12)} vs ${hash.slice(0, 12)}); register the change as a new version`,
  );
}

/**
 * The step ids the rules look up by name (active, completed, each timer's and task's step) must be
 * steps of the definition: a stored `"__proto__"` there would have the rules write on
 * `Object.prototype` through `steps[id]` or `tasks[id]`. Small lists, so cheap on every event.
 */
function stepReferences(
  wf: CompiledWorkflow,
  s: Snapshot,
  bad: (path: string, message: string) => void,
): void {
  const check = (path: string, id: unknown) => {
    // A passed savepoint's marker in `completed` is only ever looked up in a Map.
    if (!(typeof id === 'string' && (Object.hasOwn(wf.definition.steps, id) || id.startsWith(SAVEPOINT))))
      bad(path, 'names no step of the definition');
  };
  for (const id of s.active) check('active', id);
  for (const id of s.completed) check('completed', id);
  for (const t of s.timers) check('timers', t?.step);
  for (const key in s.tasks) check(`tasks.${key}`, s.tasks[key]?.step);
}
