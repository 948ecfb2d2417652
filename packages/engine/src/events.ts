import { z } from 'zod';
import { ValidationError } from './errors.js';
import { isValidId } from './ids.js';

const id = z.string().refine(isValidId, 'must be 1-200 characters of A-Z a-z 0-9 _ . : @ / + = -');
const at = z.number().int().min(0).max(8.64e15);
const errorInfo = z.object({
  message: z.string(),
  code: z.string().max(200).optional(),
  retryable: z.boolean().optional(),
});
const phase = z.enum(['run', 'compensate']).optional();

/** Zod schema of every event the reducer accepts (SPEC §4). */
export const eventSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('start'),
    at,
    id,
    input: z.unknown().optional(),
    /** Start a new run over a finished instance (id reuse); ignored when there is no snapshot. */
    reuse: z.boolean().optional(),
  }),
  z.object({
    type: z.literal('task.completed'),
    at,
    step: id,
    attempt: z.number().int().min(1),
    phase,
    output: z.unknown().optional(),
  }),
  z.object({
    type: z.literal('task.failed'),
    at,
    step: id,
    attempt: z.number().int().min(1),
    phase,
    error: errorInfo,
  }),
  z.object({ type: z.literal('tick'), at }),
  z.object({
    type: z.literal('signal'),
    at,
    name: id,
    payload: z.unknown().optional(),
    id: z.string().min(1).max(200).optional(),
  }),
  z.object({ type: z.literal('cancel'), at, reason: z.string().max(2000).optional() }),
  z.object({ type: z.literal('abort'), at, reason: z.string().max(2000).optional() }),
  z.object({
    type: z.literal('requeue'),
    at,
    step: id.optional(),
    inputPatch: z.record(z.string(), z.unknown()).optional(),
  }),
]);

/** Any event the reducer accepts. */
export type WorkflowEvent = z.infer<typeof eventSchema>;
/** The event of the given `type`. */
export type EventOf<T extends WorkflowEvent['type']> = Extract<WorkflowEvent, { type: T }>;

/** Validates an event, throwing `INVALID_EVENT` with every problem listed. */
export function parseEvent(event: unknown): WorkflowEvent {
  const r = eventSchema.safeParse(event);
  if (r.success) return r.data;
  throw new ValidationError(
    'INVALID_EVENT',
    'invalid event',
    r.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
  );
}

/** Throws `INVALID_EVENT` for an event that is well-formed but contradicts the snapshot. */
export function rejectEvent(message: string, path = ''): never {
  throw new ValidationError('INVALID_EVENT', `invalid event: ${message}`, [{ path, message }]);
}
