import { ValidationError } from './errors.js';
import { MAX_EVENT_TIME } from './event-time.js';
import * as z from './mini-schema.js';
import { idString, integer, parseWith, text } from './schema-kit.js';

// The events of flow limits: a runner's refusal or grant, which the reducer parses only where
// `flowControl` is passed (the core's `eventSchema` and `parseEvent` do not know them).

// The fields they share with the core's events, checked alike (see `events.ts`).
const opt = z.optional;
const at = integer(0, MAX_EVENT_TIME);
const handoff = opt(z.boolean());
const step = idString;
const attempt = integer(1, 1_000_000);
const phase = opt(z.literal(['run', 'compensate']));
const key = opt(text(1, 1000));
const item = opt(integer(0, 10_000_000));
/** A flow limit a holder needs, as the reducer resolved it (see `FlowNeed`). */
const need = z.strictObject({
  scope: text(1, 500),
  key: text(0, 1000),
  limit: integer(1, 1_000_000_000),
  periodMs: opt(integer(1, MAX_EVENT_TIME)),
});
/** The latest time a throttled holder is retried (a release wakes it earlier). */
const until = integer(0, MAX_EVENT_TIME);

/** Each flow event type's schema, by type. */
export const FLOW_EVENT_SCHEMAS = {
  /**
   * The runner could not acquire `need` for the attempt in flight (matched like a result): the
   * attempt did not start and is not consumed; it waits, and a tick dispatches it again.
   */
  'task.throttled': z.object({
    type: z.literal('task.throttled'),
    at,
    handoff,
    step,
    attempt,
    phase,
    key,
    item,
    need,
    until,
  }),
  /** The runner could not acquire the instance's admission (`need` is the one refused): it waits. */
  'instance.throttled': z.object({ type: z.literal('instance.throttled'), at, handoff, need, until }),
  /** The store granted the instance's admission: its limits are held and the start step is entered. */
  'instance.admitted': z.object({ type: z.literal('instance.admitted'), at, handoff }),
};

/** An event of flow limits. */
export type FlowEvent = z.infer<(typeof FLOW_EVENT_SCHEMAS)[keyof typeof FLOW_EVENT_SCHEMAS]>;

/** A flow event parsed (`INVALID_EVENT` with every problem when malformed); undefined for any other type. */
export function parseFlowEvent(event: unknown): FlowEvent | undefined {
  const type = (event as { type?: unknown } | null)?.type;
  if (typeof type !== 'string' || !Object.hasOwn(FLOW_EVENT_SCHEMAS, type)) return undefined;
  const r = parseWith(FLOW_EVENT_SCHEMAS[type as keyof typeof FLOW_EVENT_SCHEMAS] as z.Schema, event);
  if (!r.ok) throw new ValidationError('INVALID_EVENT', 'invalid event', r.issues);
  return r.value as FlowEvent;
}
