import { createRedisStore } from '@stepfold/store-redis';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { cli, uniqueName } from './cli.js';
import { storeCommandSuite } from './store-commands.js';

const REDIS_URL = process.env.STEPFOLD_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('store commands on Redis', () => {
  storeCommandSuite(async () => {
    const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const prefix = `${uniqueName('redis')}:{t}:`;
    const store = createRedisStore({ client, prefix });
    await store.setup();
    const url = new URL(REDIS_URL);
    url.searchParams.set('prefix', prefix);
    return {
      url: url.toString(),
      store,
      destroy: async () => {
        const keys = await client.keys(`${prefix}*`);
        if (keys.length) await client.del(...keys);
        client.disconnect();
      },
    };
  });

  it('a closed port is STORE_UNAVAILABLE (exit 6)', async () => {
    const r = await cli(['list', '--store', 'redis://127.0.0.1:1']);
    expect(r.code).toBe(EXIT.unavailable);
  });
});
