import { makeTestSnapshot } from '@stepfold/engine';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRedisStore,
  DEFAULT_MAX_SNAPSHOT_BYTES,
  DEFAULT_PREFIX,
  MAX_SNAPSHOT_BYTES_LIMIT,
} from '../src/index.js';
import { DELETE } from '../src/scripts.js';
import { dropPrefix, keysUnder, openStore, requireServer, type TestStore, testClient } from './server.js';

const client = testClient();
const opened: TestStore[] = [];

function open(label?: string, maxSnapshotBytes?: number): TestStore {
  const t = openStore(client, label, { maxSnapshotBytes });
  opened.push(t);
  return t;
}

beforeAll(() => requireServer(client));
afterAll(async () => {
  for (const t of opened) await dropPrefix(client, t.prefix);
  client.disconnect();
});

describe('redis adapter: keys and indexes', () => {
  it('keeps one hash per instance and its index entries under the prefix', async () => {
    const { store, prefix } = open('layout');
    await store.create(makeTestSnapshot('lay-1', { wakeAt: 42, status: 'waiting' }));
    expect(await keysUnder(client, prefix)).toEqual(
      [
        'all',
        'due',
        'due-workflow:conformance',
        'instance:lay-1',
        'status-workflow:waiting#conformance',
        'status:waiting',
        'workflow:conformance',
      ].map((k) => prefix + k),
    );
    const hash = await client.hgetall(`${prefix}instance:lay-1`);
    expect(Object.keys(hash).sort()).toEqual(['json', 'status', 'version', 'workflow']);
    expect(hash).toMatchObject({ version: '1', status: 'waiting', workflow: 'conformance' });
    expect(hash.json).toBe(JSON.stringify(makeTestSnapshot('lay-1', { wakeAt: 42, status: 'waiting' })));
    expect(await client.zrange(`${prefix}due`, 0, -1, 'WITHSCORES')).toEqual(['lay-1', '42']);
    expect(await client.zrange(`${prefix}due-workflow:conformance`, 0, -1, 'WITHSCORES')).toEqual([
      'lay-1',
      '42',
    ]);
    expect(await client.zscore(`${prefix}all`, 'lay-1')).toBe('0');
  });

  it('moves the id between status, workflow and due indexes on save, and clears them on delete', async () => {
    const { store, prefix } = open('moves');
    const members = async () => {
      const out: Record<string, string[]> = {};
      for (const key of await keysUnder(client, prefix)) {
        if (key.includes('instance:')) continue;
        out[key.slice(prefix.length)] = await client.zrange(key, 0, -1);
      }
      return out;
    };
    await store.create(makeTestSnapshot('m-1', { wakeAt: 10 }));
    await store.create(makeTestSnapshot('m-2', { wakeAt: null }));
    await store.save(
      makeTestSnapshot('m-1', {
        version: 2,
        status: 'completed',
        wakeAt: null,
        workflow: { name: 'other', version: 1, hash: 'h' },
      }),
      1,
    );
    await store.save(makeTestSnapshot('m-2', { version: 2, status: 'waiting', wakeAt: 7 }), 1);
    expect(await members()).toEqual({
      all: ['m-1', 'm-2'],
      due: ['m-2'],
      'due-workflow:conformance': ['m-2'],
      'status:completed': ['m-1'],
      'status:waiting': ['m-2'],
      'workflow:conformance': ['m-2'],
      'workflow:other': ['m-1'],
      'status-workflow:completed#other': ['m-1'],
      'status-workflow:waiting#conformance': ['m-2'],
    });
    // Only the workflow changes: the status index stays, the combined one moves.
    await store.save(
      makeTestSnapshot('m-2', {
        version: 3,
        status: 'waiting',
        workflow: { name: 'other', version: 2, hash: 'h' },
      }),
      2,
    );
    expect(await members()).toMatchObject({
      'status:waiting': ['m-2'],
      'workflow:other': ['m-1', 'm-2'],
      'status-workflow:waiting#other': ['m-2'],
    });
    expect(await store.list({ limit: 10, status: 'waiting', workflow: 'conformance' })).toEqual({
      items: [],
      cursor: null,
    });
    expect(await store.delete('m-1')).toBe(true);
    expect(await store.delete('m-2')).toBe(true);
    expect(await keysUnder(client, prefix)).toEqual([]);
  });

  it('two stores with different prefixes on one server do not see each other', async () => {
    const a = open('iso-a').store;
    const b = open('iso-b').store;
    await a.create(makeTestSnapshot('same', { input: 'a', wakeAt: 1 }));
    expect(await b.load('same')).toBeNull();
    expect(await b.listDue(10, 10)).toEqual([]);
    expect((await b.list({ limit: 10 })).items).toEqual([]);
    expect(await b.delete('same')).toBe(false);
    await b.create(makeTestSnapshot('same', { input: 'b' }));
    await expect(b.save(makeTestSnapshot('same', { version: 2 }), 1)).resolves.toBeUndefined();
    expect((await a.load('same'))?.input).toBe('a');
    expect((await a.load('same'))?.version).toBe(1);
    expect(await a.listDue(10, 10)).toEqual(['same']);
  });

  it('runs its scripts again after SCRIPT FLUSH (EVALSHA falls back to EVAL on NOSCRIPT)', async () => {
    const { store } = open('flush');
    await store.setup();
    await client.script('FLUSH');
    await store.create(makeTestSnapshot('fl-1'));
    await client.script('FLUSH');
    await store.save(makeTestSnapshot('fl-1', { version: 2 }), 1);
    await client.script('FLUSH');
    expect((await store.list({ limit: 5 })).items.map((s) => s.version)).toEqual([2]);
    await client.script('FLUSH');
    expect(await store.delete('fl-1')).toBe(true);
    // The EVAL fallback cached the script: the next call is an EVALSHA hit.
    expect(await client.script('EXISTS', DELETE.sha)).toEqual([1]);
  });

  it('uses the default prefix with a hash tag when none is given', async () => {
    expect(DEFAULT_PREFIX).toBe('stepfold:{sf}:');
    const store = createRedisStore({ client });
    expect(await store.load('surely-not-stored-by-anyone')).toBeNull();
  });
});

describe('redis adapter: data', () => {
  it('stores the JSON text exactly and reads it back deep-equal', async () => {
    const { store, prefix } = open('json');
    const input = JSON.parse(
      '{"__proto__":{"polluted":true},"$set":{"version":99},"a.b":1,"":0,"nul":"\\u0000","lone":"\\ud800","emoji":"😀","n":[5e-324,1e21,-0.5]}',
    );
    const s = makeTestSnapshot('json-1', { input });
    await store.create(s);
    expect(await client.hget(`${prefix}instance:json-1`, 'json')).toBe(JSON.stringify(s));
    const loaded = await store.load('json-1');
    expect(JSON.stringify(loaded)).toBe(JSON.stringify(s));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('orders due ids by wake time (negative, fractional, tiny, huge), ties by id; infinite wakeAt is not due', async () => {
    const { store } = open('due');
    const rows: Array<[string, number | null]> = [
      ['d-huge', 1e21],
      ['d-neg', -1.5],
      ['d-tiny', 5e-324],
      ['d-zero', 0],
      ['d-frac-b', 0.25],
      ['d-frac-a', 0.25],
      ['d-inf', Number.POSITIVE_INFINITY],
      ['d-none', null],
    ];
    for (const [id, wakeAt] of rows) await store.create(makeTestSnapshot(id, { wakeAt }));
    expect(await store.listDue(0.25, 100)).toEqual(['d-neg', 'd-zero', 'd-tiny', 'd-frac-a', 'd-frac-b']);
    // Given back, each returns to its exact wake time (a lapsed claim would sit at its expiry).
    await store.claims.release(['d-neg', 'd-zero', 'd-tiny', 'd-frac-a', 'd-frac-b']);
    expect(await store.listDue(Number.POSITIVE_INFINITY, 100)).toEqual([
      'd-neg',
      'd-zero',
      'd-tiny',
      'd-frac-a',
      'd-frac-b',
      'd-huge',
    ]);
    expect(await store.listDue(Number.NEGATIVE_INFINITY, 100)).toEqual([]);
    expect(await store.listDue(100, 0)).toEqual([]);
    await expect(store.listDue(Number.NaN, 5)).rejects.toThrow(RangeError);
  });

  it('lists with both filters from the combined index, paging by cursor', async () => {
    const { store } = open('both');
    for (let i = 0; i < 12; i++) {
      await store.create(
        makeTestSnapshot(`b-${String(i).padStart(2, '0')}`, {
          status: i % 2 ? 'waiting' : 'running',
          workflow: { name: i % 3 ? 'x' : 'y', version: 1, hash: 'h' },
        }),
      );
    }
    const first = await store.list({ limit: 2, status: 'running', workflow: 'x' });
    expect(first.items.map((s) => s.id)).toEqual(['b-02', 'b-04']);
    expect(first.cursor).toBe('b-04');
    const second = await store.list({ limit: 2, status: 'running', workflow: 'x', cursor: first.cursor });
    expect(second).toMatchObject({ cursor: null });
    expect(second.items.map((s) => s.id)).toEqual(['b-08', 'b-10']);
  });

  it('refuses an oversized snapshot before sending anything', async () => {
    const { store, prefix } = open('size', 2048);
    expect(store.maxSnapshotBytes).toBe(2048);
    const big = makeTestSnapshot('big', { input: 'é'.repeat(1100) });
    await expect(store.create(big)).rejects.toMatchObject({ code: 'SNAPSHOT_TOO_LARGE', limit: 2048 });
    expect(await keysUnder(client, prefix)).toEqual([]);
  });
});

describe('redis adapter: options', () => {
  it('validates the prefix', () => {
    for (const prefix of [
      '',
      'a b',
      'a\tb',
      'x*',
      'x?',
      'x[1]',
      'a\\b',
      '{}',
      'a{b',
      'a}b',
      '}a{',
      '{a}{b}',
      'é',
    ]) {
      expect(() => createRedisStore({ client, prefix }), JSON.stringify(prefix)).toThrow(TypeError);
    }
    for (const prefix of ['a', 'app:{x}:', '{tenant-1}', 'stepfold:', 'x'.repeat(256)]) {
      expect(() => createRedisStore({ client, prefix }), prefix).not.toThrow();
    }
  });

  it('caps maxSnapshotBytes at 512 MiB and defaults to 16 MiB', () => {
    expect(createRedisStore({ client }).maxSnapshotBytes).toBe(DEFAULT_MAX_SNAPSHOT_BYTES);
    expect(DEFAULT_MAX_SNAPSHOT_BYTES).toBe(16 * 1024 * 1024);
    expect(createRedisStore({ client, maxSnapshotBytes: MAX_SNAPSHOT_BYTES_LIMIT }).maxSnapshotBytes).toBe(
      512 * 1024 * 1024,
    );
    for (const bad of [MAX_SNAPSHOT_BYTES_LIMIT + 1, 0, -1, 1.5, Number.NaN]) {
      expect(() => createRedisStore({ client, maxSnapshotBytes: bad })).toThrow(RangeError);
    }
  });

  it('refuses a Cluster client unless the prefix has a hash tag', () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    expect(() => createRedisStore({ client: cluster, prefix: 'app:' })).toThrow(/hash tag/);
    expect(() => createRedisStore({ client: cluster, prefix: 'app:{t1}:' })).not.toThrow();
    expect(() => createRedisStore({ client: cluster })).not.toThrow();
    cluster.disconnect();
  });

  it('refuses a client with keyPrefix (the scripts build keys themselves)', () => {
    const prefixed = testClient();
    prefixed.options.keyPrefix = 'p:';
    try {
      expect(() => createRedisStore({ client: prefixed })).toThrow(/keyPrefix/);
    } finally {
      prefixed.disconnect();
    }
  });

  it('refuses list filters that are not strings', async () => {
    const { store } = open('filters');
    const bad = { $ne: 'x' } as unknown as string;
    await expect(store.list({ limit: 5, workflow: bad })).rejects.toThrow(TypeError);
    await expect(store.list({ limit: 5, cursor: bad })).rejects.toThrow(TypeError);
  });
});
