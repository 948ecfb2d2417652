import { createStoreKit, makeTestSnapshot, StoreUnavailableError } from '@stepfold/engine';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore, isUnavailable } from '../src/index.js';
import { dropPrefix, FAIL_FAST, requireServer, testClient, uniquePrefix } from './server.js';

const client = testClient();
const prefixes: string[] = [];

beforeAll(() => requireServer(client));
afterAll(async () => {
  for (const p of prefixes) await dropPrefix(client, p);
  client.disconnect();
});

/** The error `call` rejects with, and how long that took. */
async function failure(call: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const t0 = performance.now();
  const error = await call.then(
    () => new Error('resolved'),
    (e: unknown) => e,
  );
  return { error, ms: performance.now() - t0 };
}

describe('redis adapter: errors', () => {
  it('a server that does not answer is STORE_UNAVAILABLE with the client error as cause, quickly', async () => {
    // Nothing listens on port 1: every connect is refused at once.
    const dead = new Redis('redis://127.0.0.1:1', FAIL_FAST);
    dead.on('error', () => {});
    try {
      const store = createRedisStore({ client: dead, prefix: uniquePrefix('dead') });
      for (const call of [
        store.load('x'),
        store.create(makeTestSnapshot('x')),
        store.save(makeTestSnapshot('x', { version: 2 }), 1),
        store.list({ limit: 1 }),
        store.listDue(1, 1),
        store.delete('x'),
        store.setup(),
      ]) {
        const { error, ms } = await failure(call);
        expect(error).toBeInstanceOf(StoreUnavailableError);
        expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE', retryable: true });
        expect((error as Error).cause).toMatchObject({ name: 'MaxRetriesPerRequestError' });
        expect(ms).toBeLessThan(5000);
      }
    } finally {
      dead.disconnect();
    }
  });

  it('a client that was quit is STORE_UNAVAILABLE ("Connection is closed.")', async () => {
    const quit = testClient();
    await quit.ping();
    await quit.quit();
    const store = createRedisStore({ client: quit, prefix: uniquePrefix('quit') });
    const { error } = await failure(store.load('x'));
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(((error as Error).cause as Error).message).toBe('Connection is closed.');
  });

  it('a command that times out is STORE_UNAVAILABLE', async () => {
    const slow = new Redis(process.env.STEPFOLD_REDIS_URL ?? 'redis://127.0.0.1:6379', {
      commandTimeout: 50,
    });
    slow.on('error', () => {});
    try {
      const prefix = uniquePrefix('timeout');
      prefixes.push(prefix);
      const store = createRedisStore({ client: slow, prefix });
      // Writes wait while the server is paused (for a second: other tests share it).
      await client.client('PAUSE', 1000, 'WRITE');
      const { error } = await failure(store.create(makeTestSnapshot('late')));
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(((error as Error).cause as Error).message).toBe('Command timed out');
    } finally {
      slow.disconnect();
    }
  });

  it('classifies transient server replies as unavailable, and the rest not', async () => {
    const reply = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });
    for (const m of [
      'LOADING Redis is loading the dataset in memory',
      'BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.',
      'MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no.',
      'CLUSTERDOWN The cluster is down',
      'TRYAGAIN Multiple keys request during rehashing of slot',
      "READONLY You can't write against a read only replica.",
    ]) {
      expect(isUnavailable(reply(m)), m).toBe(true);
    }
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']) {
      expect(isUnavailable(Object.assign(new Error('socket'), { code })), code).toBe(true);
    }
    for (const m of [
      'NOSCRIPT No matching script.',
      'WRONGTYPE Operation against a key holding the wrong kind of value',
      'ERR syntax error',
      'OOM command not allowed when used memory > maxmemory.',
    ]) {
      expect(isUnavailable(reply(m)), m).toBe(false);
    }
    expect(isUnavailable(new Error('wrapped', { cause: { code: 'ECONNRESET' } }))).toBe(true);
    const { guard } = createStoreKit('redis', isUnavailable, { asked: undefined, fallback: 1024 });
    await expect(
      guard('x', async () => {
        throw reply('LOADING Redis is loading the dataset in memory');
      }),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
    const other = reply('ERR unknown command');
    await expect(
      guard('x', async () => {
        throw other;
      }),
    ).rejects.toBe(other);
  });
});
