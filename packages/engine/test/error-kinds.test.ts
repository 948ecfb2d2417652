import {
  AlreadyExistsError,
  CallbackError,
  CodecError,
  ERROR_KINDS,
  type ErrorCode,
  type ErrorKind,
  errorKind,
  FlowRefusedError,
  HTTP_STATUS,
  InboxOverflowError,
  InstanceFinishedError,
  NotFoundError,
  NoticeMismatchError,
  PastPivotError,
  PayloadNotFoundError,
  PayloadTooLargeError,
  RegistryError,
  SnapshotTooLargeError,
  StepfoldError,
  StepNotWaitingError,
  StoreUnavailableError,
  StreamFencedError,
  StreamUnsupportedError,
  TaskError,
  UnknownSignalError,
  ValidationError,
  VersionConflictError,
  WorkflowMismatchError,
} from '@stepfold/engine';
import { MigrationRefusedError } from '@stepfold/engine/migrations';
import { describe, expect, expectTypeOf, it } from 'vitest';

// One error of each code, built with the class and arguments the engine throws it with, so its
// `retryable` is the engine's own. A Record: a new code does not compile until it is listed here.
const ONE_OF: Record<ErrorCode, () => StepfoldError<string>> = {
  INVALID_DEFINITION: () => new ValidationError('INVALID_DEFINITION', 'bad', []),
  INVALID_EVENT: () => new ValidationError('INVALID_EVENT', 'bad', []),
  INVALID_SNAPSHOT: () => new ValidationError('INVALID_SNAPSHOT', 'bad', []),
  INVALID_ID: () => new ValidationError('INVALID_ID', 'bad', []),
  INVALID_INPUT: () => new ValidationError('INVALID_INPUT', 'bad', []),
  INVALID_OPTIONS: () => new ValidationError('INVALID_OPTIONS', 'bad', []),
  UNKNOWN_WORKFLOW: () => new RegistryError('UNKNOWN_WORKFLOW', 'missing'),
  UNKNOWN_VERSION: () => new RegistryError('UNKNOWN_VERSION', 'missing'),
  DEFINITION_HASH_MISMATCH: () => new RegistryError('DEFINITION_HASH_MISMATCH', 'changed'),
  UNKNOWN_HANDLER: () => new RegistryError('UNKNOWN_HANDLER', 'missing'),
  KIND_NOT_LOADED: () => new RegistryError('KIND_NOT_LOADED', 'not loaded'),
  VERSION_CONFLICT: () => new VersionConflictError('i-1', 1, 2),
  NOT_FOUND: () => new NotFoundError('i-1'),
  ALREADY_EXISTS: () => new AlreadyExistsError('i-1'),
  SNAPSHOT_TOO_LARGE: () => new SnapshotTooLargeError('i-1', 2, 1),
  STORE_UNAVAILABLE: () => new StoreUnavailableError('down'),
  INBOX_OVERFLOW: () => new InboxOverflowError('i-1', 1),
  INSTANCE_FINISHED: () => new InstanceFinishedError('i-1', 'completed'),
  UNKNOWN_SIGNAL: () => new UnknownSignalError('i-1', 'x', []),
  PAST_PIVOT: () => new PastPivotError('i-1', 'ship'),
  NOTICE_MISMATCH: () => new NoticeMismatchError('i-1', 3),
  WORKFLOW_MISMATCH: () =>
    new WorkflowMismatchError('i-1', { name: 'order', version: 1 }, { name: 'order', version: 2 }),
  INVALID_MIGRATION: () => new ValidationError('INVALID_MIGRATION', 'bad', []),
  MIGRATION_REFUSED: () => new MigrationRefusedError('i-1', ['step x']),
  PAYLOAD_TOO_LARGE: () => new PayloadTooLargeError('i-1', 2, 1),
  PAYLOAD_NOT_FOUND: () => new PayloadNotFoundError('i-1', 'ab'.repeat(32)),
  // Raised by the DynamoDB store (its WakeStreamError), built here as the engine's base class.
  NO_WAKE_STREAM: () => new StepfoldError('NO_WAKE_STREAM', 'no stream'),
  STREAM_FENCED: () => new StreamFencedError('i-1', 'model', 1, 2),
  // Thrown by ctx.heartbeat as the engine's base class.
  HEARTBEAT_TOO_LARGE: () => new StepfoldError('HEARTBEAT_TOO_LARGE', 'too large'),
  CALLBACK_INVALID: () => new CallbackError('CALLBACK_INVALID', 'forged'),
  CALLBACK_EXPIRED: () => new CallbackError('CALLBACK_EXPIRED', 'expired'),
  STEP_NOT_WAITING: () => new StepNotWaitingError('i-1', 'manager', 'it ended'),
  STREAM_UNSUPPORTED: () => new StreamUnsupportedError('i-1', 'model'),
  INVALID_SEARCH_ATTRIBUTE: () => new ValidationError('INVALID_SEARCH_ATTRIBUTE', 'bad', []),
  INVALID_QUERY: () => new ValidationError('INVALID_QUERY', 'bad', []),
  CODEC_KEY_MISSING: () => new CodecError('CODEC_KEY_MISSING', 'k1', 'no key k1'),
  CODEC_DECRYPT_FAILED: () => new CodecError('CODEC_DECRYPT_FAILED', 'k1', 'does not decrypt'),
  FLOW_REFUSED: () => new FlowRefusedError('i-1', 'i-1/1/charge/1#run#1@1'),
};

// Whether retrying may help is a property of the kind: the test holds each code's error to it.
const RETRYABLE: Record<ErrorKind, boolean> = {
  invalid: false,
  'not-found': false,
  conflict: true,
  refused: false,
  definition: false,
  unavailable: true,
};

const codes = Object.keys(ONE_OF) as ErrorCode[];

describe('error kinds', () => {
  it('give every code exactly one kind, and every kind a status', () => {
    expectTypeOf(ERROR_KINDS).toEqualTypeOf<Readonly<Record<ErrorCode, ErrorKind>>>();
    expect(Object.keys(ERROR_KINDS).sort()).toEqual([...codes].sort());
    const kinds = new Set(Object.values(ERROR_KINDS));
    expect([...kinds].sort()).toEqual(Object.keys(HTTP_STATUS).sort());
    expect([...kinds].sort()).toEqual(Object.keys(RETRYABLE).sort());
  });

  it("agree with each error's retryable flag: retryable exactly when its kind is", () => {
    for (const code of codes) {
      const e = ONE_OF[code]();
      expect(e.code).toBe(code);
      expect(e.retryable, code).toBe(RETRYABLE[ERROR_KINDS[code]]);
    }
    // So a retry loop may key on the kind: only conflicts and outages are worth another try.
    expect(codes.filter((c) => ONE_OF[c]().retryable).sort()).toEqual([
      'STORE_UNAVAILABLE',
      'VERSION_CONFLICT',
    ]);
  });

  it('map to the HTTP statuses the inspector and the examples answer with', () => {
    expect(HTTP_STATUS).toEqual({
      invalid: 400,
      'not-found': 404,
      conflict: 409,
      refused: 409,
      definition: 500,
      unavailable: 503,
    });
    const status = (code: ErrorCode) => HTTP_STATUS[ERROR_KINDS[code]];
    expect(status('UNKNOWN_SIGNAL')).toBe(400);
    expect(status('PAST_PIVOT')).toBe(409);
    expect(status('DEFINITION_HASH_MISMATCH')).toBe(500);
    expect(status('STORE_UNAVAILABLE')).toBe(503);
  });

  it('errorKind reads engine errors only, from any copy of the engine', () => {
    for (const code of codes) expect(errorKind(ONE_OF[code]())).toBe(ERROR_KINDS[code]);
    // Another copy's error: the same registry brand, not this copy's class.
    const foreign = Object.assign(new Error('gone'), { code: 'NOT_FOUND' });
    Object.defineProperty(foreign, Symbol.for('stepfold.error'), { value: true });
    expect(errorKind(foreign)).toBe('not-found');

    expect(errorKind(new TaskError('handler', { code: 'NOT_FOUND' }))).toBeUndefined();
    expect(errorKind(Object.assign(new Error('driver'), { code: 'NOT_FOUND' }))).toBeUndefined();
    expect(errorKind(new StepfoldError('FROM_A_NEWER_ENGINE', 'x'))).toBeUndefined();
    // A code that names an inherited property of the table is still no kind.
    expect(errorKind(new StepfoldError('toString', 'x'))).toBeUndefined();
    expect(errorKind(null)).toBeUndefined();
    expect(errorKind('NOT_FOUND')).toBeUndefined();
  });
});
