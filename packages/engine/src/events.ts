import { ValidationError } from './errors.js';
import { isTime, MAX_EVENT_TIME } from './event-time.js';
import type { FlowEvent } from './flow-events.js';
import { isValidId } from './ids.js';
import * as z from './mini-schema.js';
import { idString as id, integer, parseWith, text } from './schema-kit.js';
import type { SearchValue } from './search.js';
import { MAX_PRIORITY } from './snapshot.js';

const opt = z.optional;
const at = integer(0, MAX_EVENT_TIME);
const errorInfo = z.object({ message: z.string(), code: opt(text(0, 200)), retryable: opt(z.boolean()) });
const phase = opt(z.literal(['run', 'compensate']));
const attempt = integer(1, 1_000_000);
/** A result may name the execution it belongs to; one of another run or iteration is stale. */
const key = opt(text(1, 1000));
/** The writer of this event will not run the tasks it dispatches: they are queued for any worker. */
const handoff = opt(z.boolean());
/** A map step's item index. */
const item = opt(integer(0, 10_000_000));
/** Where a child instance reports its end (see `ParentRef`). */
const parent = opt(
  z.strictObject({
    id,
    workflow: id,
    step: id,
    key: text(1, 1000),
    item,
    phase: opt(z.literal('compensate')),
  }),
);

/** The schedule slot a run is for (see `ScheduledFor`). */
const schedule = opt(
  z.strictObject({
    id,
    slot: integer(0, MAX_EVENT_TIME),
    how: z.literal(['slot', 'backfill', 'trigger']),
  }),
);

/**
 * True for a trace carrier: a plain object of at most 8 string entries, keys of 1-512 and values
 * of 0-512 characters. Kept small on purpose: it is copied into every snapshot version.
 */
export function isTraceCarrier(v: unknown): v is Record<string, string> {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || Object.keys(v).length > 8) return false;
  return Object.entries(v).every(
    ([k, x]) => k && k.length <= 512 && typeof x === 'string' && x.length <= 512,
  );
}

// Checked as a whole and kept as given (a record schema would drop a __proto__ key); the reducer copies it.
const trace = opt(
  z.custom<Record<string, string>>(isTraceCarrier, 'must be up to 8 strings of up to 512 characters'),
);

// One object schema per event type, each with its literal `type`. Listed once, then offered as a
// union (`eventSchema`) and by type (what `parseEvent` uses, for the type's own precise issues).
const EVENT_SCHEMAS = [
  z.object({
    type: z.literal('start'),
    at,
    handoff,
    id,
    input: opt(z.unknown()),
    /** Start a new run over a finished instance (id reuse); ignored when there is no snapshot. */
    reuse: opt(z.boolean()),
    /** Where the caller's trace continues (W3C `traceparent`/`tracestate`): kept as `snapshot.trace`. */
    trace,
    /** A child instance's parent, which hears of its end. */
    parent,
    /** The schedule slot the run is for: kept as `snapshot.schedule`. */
    schedule,
    /** The run's priority (0 to 1000, higher first), over its workflow's: kept as `snapshot.priority`; needs `flowControl`. */
    priority: opt(integer(0, MAX_PRIORITY)),
  }),
  z.object({
    type: z.literal('task.completed'),
    at,
    handoff,
    step: id,
    attempt,
    phase,
    key,
    item,
    output: opt(z.unknown()),
    /** Search attributes the handler set (`ctx.setAttributes`; `null` clears one): checked by `searchAttributes`. */
    search: opt(z.unknown() as z.Schema<Record<string, SearchValue | null>>),
  }),
  z.object({
    type: z.literal('task.failed'),
    at,
    handoff,
    step: id,
    attempt,
    phase,
    key,
    item,
    error: errorInfo,
  }),
  /** A runner gives back a task dispatched to it that it never started: queued for any worker, same attempt. */
  z.object({ type: z.literal('task.released'), at, handoff, step: id, attempt, phase, key, item }),
  /**
   * A runner still runs the attempt (or, for a step with `heartbeatMs`, its handler said so): its
   * lease (`leaseUntil`) moves to `at` plus the lease. `details`, from the handler, are kept for the
   * next attempt (a task step's; at most `HEARTBEAT_DETAILS_MAX_BYTES` of JSON).
   */
  z.object({
    type: z.literal('task.heartbeat'),
    at,
    handoff,
    step: id,
    attempt,
    phase,
    key,
    item,
    details: opt(z.unknown()),
  }),
  /**
   * A child instance ended (for `phase: 'compensate'`, the end its revert reached): matched to the
   * parent's task by `key`, so a late or repeated report changes nothing.
   */
  z.object({
    type: z.literal('child.ended'),
    at,
    handoff,
    step: id,
    key: text(1, 1000),
    item,
    phase,
    child: id,
    status: z.literal(['completed', 'failed', 'cancelled', 'aborted']),
    output: opt(z.unknown()),
    error: opt(errorInfo),
    /** The child completed past one of its pivots. */
    pivot: opt(z.boolean()),
  }),
  /**
   * Undoes a completed child instance for its parent's rollback: its completed steps are
   * compensated, latest first, and it ends `cancelled`. Refused with `PAST_PIVOT` past a pivot.
   */
  z.object({ type: z.literal('revert'), at, handoff, reason: opt(text(0, 2000)) }),
  z.object({ type: z.literal('tick'), at, handoff }),
  z.object({
    type: z.literal('signal'),
    at,
    handoff,
    name: id,
    payload: opt(z.unknown()),
    id: opt(text(1, 200)),
  }),
  z.object({ type: z.literal('cancel'), at, handoff, reason: opt(text(0, 2000)) }),
  z.object({ type: z.literal('abort'), at, handoff, reason: opt(text(0, 2000)) }),
  z.object({
    type: z.literal('requeue'),
    at,
    handoff,
    step: opt(id),
    // Kept as given (a record schema would drop a __proto__ key); the reducer copies it key by key.
    inputPatch: opt(
      z.custom<Record<string, unknown>>(
        (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
        'must be an object',
      ),
    ),
  }),
] as const;

/** The schema of every event the reducer accepts (`mini-schema.ts`: `safeParse`, `parse`). */
export const eventSchema = z.union(EVENT_SCHEMAS);

/** Each event type's schema. */
const SCHEMA_OF: Record<string, z.Schema> = Object.fromEntries(
  EVENT_SCHEMAS.map((schema) => [schema.shape.type.values[0], schema]),
);

/**
 * Any event the reducer accepts: the core's (`eventSchema`), and flow limits' (parsed where
 * `flowControl` is passed; see `flow-events.ts`).
 */
export type WorkflowEvent = z.infer<typeof eventSchema> | FlowEvent;
/** The event of the given `type`. */
export type EventOf<T extends WorkflowEvent['type']> = Extract<WorkflowEvent, { type: T }>;

/**
 * Deepest nesting of the data an event carries (`input`, `output`, `payload`, `inputPatch`). Every store serializes snapshots with a recursive JSON encoder, so deeper data
 * (or a reference cycle) could be applied but never saved: it is refused with the event instead.
 */
export const MAX_DATA_DEPTH = 512;

/** Whether `v` nests objects or arrays more than `left` levels deep (a cycle always does). */
function deeperThan(v: unknown, left: number): boolean {
  if (typeof v !== 'object' || v === null) return false;
  if (left < 1) return true;
  // Every event's data passes here: a loop over the keys, not an array of the values per object.
  for (const k in v) if (deeperThan((v as Record<string, unknown>)[k], left - 1)) return true;
  return false;
}

/** The free-form data field of each event type that has one. */
const DATA_FIELD: Partial<Record<WorkflowEvent['type'], string>> = {
  start: 'input',
  'task.completed': 'output',
  'child.ended': 'output',
  signal: 'payload',
  requeue: 'inputPatch',
};

/**
 * Validates an event, throwing `INVALID_EVENT` with every problem listed (flow limits' events are
 * parsed by their rules, where `flowControl` is passed).
 */
export function parseEvent(event: unknown): WorkflowEvent {
  let ev = commonEvent(event as Record<string, unknown>);
  if (!ev) {
    // The issues a discriminated union would report: the object, then its `type`, then the
    // fields of that type's schema.
    if (typeof event !== 'object' || event === null || Array.isArray(event)) {
      const got = event === null ? 'null' : Array.isArray(event) ? 'array' : typeof event;
      throw new ValidationError('INVALID_EVENT', 'invalid event', [
        { path: '', message: `expected object, got ${got}` },
      ]);
    }
    const type = (event as { type?: unknown }).type;
    const schema = typeof type === 'string' && Object.hasOwn(SCHEMA_OF, type) ? SCHEMA_OF[type] : undefined;
    if (!schema)
      throw new ValidationError('INVALID_EVENT', 'invalid event', [
        { path: 'type', message: 'does not match any allowed form' },
      ]);
    const r = parseWith(schema, event);
    if (!r.ok) throw new ValidationError('INVALID_EVENT', 'invalid event', r.issues);
    ev = r.value as WorkflowEvent;
  }
  // `error` is checked field by field by the schema: only the free-form data can nest, and a parsed
  // event has only its own type's fields (the schema strips the others, the fast path copies).
  const path = DATA_FIELD[ev.type];
  if (path !== undefined && deeperThan((ev as Record<string, unknown>)[path], MAX_DATA_DEPTH))
    rejectEvent(`${path} deeper than ${MAX_DATA_DEPTH} levels`, path);
  return ev;
}

/** Throws `INVALID_EVENT` for an event that is well-formed but contradicts the snapshot. */
export function rejectEvent(message: string, path = ''): never {
  throw new ValidationError('INVALID_EVENT', `invalid event: ${message}`, [{ path, message }]);
}

const isText = (v: unknown, max: number) => typeof v === 'string' && v.length > 0 && v.length <= max;
const isAttempt = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= 1_000_000;

/** An event as parsed JSON: the fields the fast path reads, each of unknown type. */
type LooseEvent = { [field: string]: unknown } & Partial<
  Record<
    | 'type'
    | 'at'
    | 'handoff'
    | 'step'
    | 'attempt'
    | 'phase'
    | 'key'
    | 'output'
    | 'name'
    | 'payload'
    | 'id'
    | 'reuse'
    | 'trace'
    | 'input'
    | 'item',
    unknown
  >
>;

/** A common event that carries `handoff`: checked without it, then given it back. */
function handedOff(e: LooseEvent): WorkflowEvent | undefined {
  if (typeof e.handoff !== 'boolean') return undefined;
  const { handoff, ...rest } = e;
  const plain = commonEvent(rest);
  return plain && { ...plain, handoff };
}

/**
 * The common events (start, task.completed, signal, tick) checked by hand against the same rules
 * as {@link eventSchema}, copied field by field as its parse would. Anything else, or anything that
 * fails, returns undefined and goes through the schema, which writes the error report.
 */
function commonEvent(e: LooseEvent): WorkflowEvent | undefined {
  if (typeof e !== 'object' || e === null || !isTime(e.at)) return undefined;
  const { type, at } = e as { type: never; at: number };
  if (e.handoff !== undefined) return handedOff(e);
  if (type === 'task.completed') {
    const { step, attempt, phase, key } = e;
    if (e['search'] !== undefined) return undefined;
    if (!isValidId(step) || !isAttempt(attempt) || (key !== undefined && !isText(key, 1000)))
      return undefined;
    if (phase !== undefined && phase !== 'run' && phase !== 'compensate') return undefined;
    const item = e.item as number | undefined;
    if (item !== undefined) {
      if (!Number.isSafeInteger(item) || item < 0 || item > 10_000_000) return undefined;
      return { type, at, step, attempt, phase, key, item, output: e.output } as EventOf<'task.completed'>;
    }
    return { type, at, step, attempt, phase, key, output: e.output } as EventOf<'task.completed'>;
  }
  if (type === 'signal') {
    if (!isValidId(e.name) || (e.id !== undefined && !isText(e.id, 200))) return undefined;
    return { type, at, name: e.name, payload: e.payload, id: e.id as string | undefined };
  }
  if (type === 'tick') return { type, at };
  if (
    type === 'start' &&
    isValidId(e.id) &&
    (e.reuse === undefined || typeof e.reuse === 'boolean') &&
    (e.trace === undefined || isTraceCarrier(e.trace)) &&
    e['parent'] === undefined &&
    e['schedule'] === undefined &&
    e['priority'] === undefined
  ) {
    const { reuse, trace: carrier } = e as EventOf<'start'>;
    return { type, at, id: e.id, input: e.input, reuse, trace: carrier };
  }
  return undefined;
}
