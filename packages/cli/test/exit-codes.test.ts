import {
  AlreadyExistsError,
  ERROR_KINDS,
  InboxOverflowError,
  NotFoundError,
  PastPivotError,
  RegistryError,
  SnapshotTooLargeError,
  StoreUnavailableError,
  TaskError,
  UnknownSignalError,
  ValidationError,
  VersionConflictError,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { EXIT, exitCodeOf, KIND_EXIT, RUN_EXIT, UsageError } from '../src/exit-codes.js';

describe('exit codes', () => {
  it('are the documented numbers, each meaning one thing', () => {
    // Scripts depend on these: a change here is a breaking change, to be listed in docs/cli.md too.
    expect(EXIT).toEqual({
      ok: 0,
      other: 1,
      usage: 2,
      'not-found': 3,
      refused: 4,
      invalid: 5,
      unavailable: 6,
      definition: 7,
      unchanged: 8,
      conflict: 9,
    });
    const all = [...Object.values(EXIT), ...new Set(Object.values(RUN_EXIT))];
    expect(new Set(all).size).toBe(all.length);
    expect(Object.keys(KIND_EXIT).sort()).toEqual([...new Set(Object.values(ERROR_KINDS))].sort());
  });

  it("an engine error exits with its kind's code, as the engine's table gives the kind", () => {
    for (const [e, exit] of [
      [new NotFoundError('i-1'), 3],
      [new AlreadyExistsError('i-1'), 4],
      [new PastPivotError('i-1', 'charge'), 4],
      [new InboxOverflowError('i-1', 100), 4],
      [new SnapshotTooLargeError('i-1', 2, 1), 4],
      [new ValidationError('INVALID_INPUT', 'bad', []), 5],
      [new UnknownSignalError('i-1', 'paymnet', ['payment']), 5],
      [new StoreUnavailableError('down'), 6],
      [new RegistryError('UNKNOWN_HANDLER', 'missing'), 7],
      [new RegistryError('DEFINITION_HASH_MISMATCH', 'changed'), 7],
      [new VersionConflictError('i-1', 1, 2), 9],
    ] as const) {
      expect(exitCodeOf(e), e.code).toBe(exit);
      expect(exitCodeOf(e), e.code).toBe(KIND_EXIT[ERROR_KINDS[e.code]]);
    }
  });

  it('a usage mistake exits 2; a handler, driver or unknown error exits 1', () => {
    expect(exitCodeOf(new UsageError('bad flag'))).toBe(EXIT.usage);
    expect(exitCodeOf(new TaskError('declined', { code: 'NOT_FOUND' }))).toBe(EXIT.other);
    expect(exitCodeOf(Object.assign(new Error('no table'), { code: '42P01' }))).toBe(EXIT.other);
    // A code is no kind without the engine's brand: a driver's own NOT_FOUND is not ours.
    expect(exitCodeOf(Object.assign(new Error('missing'), { code: 'NOT_FOUND' }))).toBe(EXIT.other);
    expect(exitCodeOf(undefined)).toBe(EXIT.other);
  });
});
