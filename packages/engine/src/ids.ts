import { ValidationError } from './errors.js';

/** Longest accepted instance id, workflow name or signal name. */
export const MAX_ID_LENGTH = 200;

const ID_PATTERN = /^[A-Za-z0-9_.:@/+=-]+$/;

/** Whether `id` may name an instance, workflow or signal: 1–200 of `A-Z a-z 0-9 _ . : @ / + = -`. */
export function isValidId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_ID_LENGTH && ID_PATTERN.test(id);
}

/** Throws `INVALID_ID` unless `id` passes {@link isValidId}. */
export function assertValidId(id: unknown, what = 'id'): asserts id is string {
  if (!isValidId(id)) {
    const shown = typeof id === 'string' ? JSON.stringify(id.slice(0, 60)) : typeof id;
    throw new ValidationError('INVALID_ID', `invalid ${what} ${shown}`, [
      {
        path: what,
        message: `must be 1-${MAX_ID_LENGTH} characters of A-Z a-z 0-9 _ . : @ / + = -`,
      },
    ]);
  }
}
