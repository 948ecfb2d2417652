import { assertValidId, ValidationError } from '@stepfold/engine';

/**
 * The body of one queue message: a stepfold event for one instance. `start`, `signal`, `cancel`,
 * `abort` and `requeue` mirror the engine's `RunnerMessage`; `wake` is this package's own message for
 * a timer or retry backoff (`wakeAt`) coming due, sent as an SQS delay or by a one-time schedule.
 */
export type QueueMessage =
  | { type: 'start'; id: string; workflow: string; input?: unknown; version?: number }
  | { type: 'signal'; id: string; name: string; payload?: unknown; signalId?: string }
  | { type: 'cancel' | 'abort'; id: string; reason?: string }
  | { type: 'requeue'; id: string; step?: string; inputPatch?: Record<string, unknown> }
  | {
      type: 'wake';
      id: string;
      /** The wake time (epoch ms): a message that arrives before it is sent again with the rest of the delay. */
      at: number;
      /** The snapshot version that armed this wake; once the instance has moved past it, the wake is stale. */
      version?: number;
    };

const fail = (message: string, path = ''): never => {
  throw new ValidationError('INVALID_EVENT', 'invalid queue message', [{ path, message }]);
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function optional<T>(o: Record<string, unknown>, key: string, check: (v: unknown) => v is T, what: string) {
  const v = o[key];
  if (v !== undefined && !check(v)) fail(`${key} must be ${what}`, key);
  return v as T | undefined;
}
const isString = (v: unknown): v is string => typeof v === 'string';
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** Parses and validates a message body; throws `INVALID_EVENT` (or `INVALID_ID`) naming the problem. */
export function parseMessage(body: string): QueueMessage {
  let o: unknown;
  try {
    o = JSON.parse(body);
  } catch (e) {
    return fail(`body is not JSON: ${(e as Error).message}`, 'body');
  }
  if (!isObject(o)) return fail('body must be a JSON object', 'body');
  if (!isString(o['id'])) return fail('id must be a string', 'id');
  assertValidId(o['id'], 'instance id');
  const id = o['id'];
  switch (o['type']) {
    case 'start': {
      if (!isString(o['workflow'])) return fail('workflow must be a string', 'workflow');
      assertValidId(o['workflow'], 'workflow name');
      const version = optional(o, 'version', isCount, 'a non-negative integer');
      return {
        type: 'start',
        id,
        workflow: o['workflow'],
        input: o['input'],
        ...(version === undefined ? {} : { version }),
      };
    }
    case 'signal': {
      if (!isString(o['name'])) return fail('name must be a string', 'name');
      assertValidId(o['name'], 'signal name');
      const signalId = optional(o, 'signalId', isString, 'a string');
      return {
        type: 'signal',
        id,
        name: o['name'],
        payload: o['payload'],
        ...(signalId === undefined ? {} : { signalId }),
      };
    }
    case 'cancel':
    case 'abort': {
      const reason = optional(o, 'reason', isString, 'a string');
      return { type: o['type'], id, ...(reason === undefined ? {} : { reason }) };
    }
    case 'requeue': {
      const step = optional(o, 'step', isString, 'a string');
      const inputPatch = optional(o, 'inputPatch', isObject, 'an object');
      return {
        type: 'requeue',
        id,
        ...(step === undefined ? {} : { step }),
        ...(inputPatch ? { inputPatch } : {}),
      };
    }
    case 'wake': {
      if (!isCount(o['at'])) return fail('at must be an epoch-ms integer', 'at');
      const version = optional(o, 'version', isCount, 'a non-negative integer');
      return { type: 'wake', id, at: o['at'], ...(version === undefined ? {} : { version }) };
    }
    default:
      return fail('type must be start, signal, wake, cancel, abort or requeue', 'type');
  }
}
