import { isStepfoldError, type ValidationError } from '@stepfold/engine';
import { expect } from 'vitest';

/** The issues (`path: message`) of the INVALID_DEFINITION error `fn` throws; fails the test if it throws none or another. */
export function issuesOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    expect(isStepfoldError(e, 'INVALID_DEFINITION')).toBe(true);
    return (e as ValidationError).issues.map((i) => `${i.path}: ${i.message}`);
  }
  throw new Error('expected INVALID_DEFINITION');
}
