import { MongoNetworkError, MongoNetworkTimeoutError } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { isUnavailable } from '../src/map-error.js';

// What the driver (mongodb 6) throws at the operations in flight when a server monitor times out
// (a network that stalls, then drops, behind the soak's fault proxy): its PoolClearedOnNetworkError,
// a MongoNetworkError subclass it does not export, with the name and label below. Rebuilt here as
// the driver builds it.
class PoolClearedOnNetworkError extends MongoNetworkError {
  constructor(address: string) {
    super(`Connection to ${address} interrupted due to server monitor timeout`, {
      cause: new MongoNetworkTimeoutError(`connection <monitor> to ${address} timed out`),
    });
    this.addErrorLabel('PoolRequstedRetry');
  }
  override get name(): string {
    return 'PoolClearedOnNetworkError';
  }
}

describe('mongo store: which driver errors mean the server is unavailable', () => {
  it('a pool cleared by a monitor timeout is unavailable (retryable), by its name or its label', () => {
    const e = new PoolClearedOnNetworkError('127.0.0.1:27017');
    expect(e.name).toBe('PoolClearedOnNetworkError');
    expect(isUnavailable(e)).toBe(true);
    // Any error the driver labels for a retry after a pool clear, whatever its name.
    const labelled = new MongoNetworkError('cleared');
    Object.defineProperty(labelled, 'name', { value: 'SomeFutureName' });
    labelled.addErrorLabel('PoolRequstedRetry');
    expect(isUnavailable(labelled)).toBe(true);
  });

  it('a socket error the driver let through unwrapped is unavailable (a write on a reset connection)', () => {
    const raw = Object.assign(new Error('write ECONNRESET'), { code: 'ECONNRESET', syscall: 'write' });
    expect(isUnavailable(raw)).toBe(true);
    expect(isUnavailable(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))).toBe(true);
  });

  it('a plain failure, or a duplicate key, is not', () => {
    expect(isUnavailable(new Error('boom'))).toBe(false);
    expect(isUnavailable({ name: 'MongoServerError', code: 11000 })).toBe(false);
    expect(isUnavailable(null)).toBe(false);
  });
});
