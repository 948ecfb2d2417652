import { makeTestSnapshot, type StreamTail } from '@stepfold/engine';
import { createPostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { cli, parsed, uniqueName } from './cli.js';

// `stepfold show <id> --stream`: the instance's state, then the last entries of its stream.

const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';

describe('stepfold show --stream on PostgreSQL', () => {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
  pool.on('error', () => {});
  const schema = uniqueName('showstream');
  const store = createPostgresStore({ pool, schema });
  const url = new URL(PG_URL);
  url.searchParams.set('schema', schema);

  beforeAll(async () => {
    await store.setup();
    await store.create(makeTestSnapshot('chat-1', { status: 'running' }));
    await store.create(makeTestSnapshot('chat-2', { status: 'running' }));
    const deltas = Array.from({ length: 60 }, (_, i) => ({ type: 'text-delta', delta: `t${i}` }));
    await store.stream!.append('chat-1', 'model', 1, deltas);
    await store.stream!.begin('chat-1', 'model', 2);
    await store.stream!.append('chat-1', 'model', 2, [{ type: 'text-delta', delta: 'again' }]);
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('prints the last entries after the state: the reset of a superseded attempt, then its chunks', async () => {
    const r = await cli(['show', 'chat-1', '--store', url.toString(), '--stream']);
    expect(r.code, r.stderr).toBe(EXIT.ok);
    // The first attempt's 60 chunks are superseded: the tail is its reset and the new chunk.
    expect(r.stdout).toMatch(
      /stream: offsets 60–61\n60 {2}model#2 {2}reset: earlier attempts' chunks dropped\n61 {2}model#2 {2}\{"type":"text-delta","delta":"again"\}/,
    );
    const j = parsed<{ stream: StreamTail }>(
      await cli(['show', 'chat-1', '--store', url.toString(), '--stream', '--json']),
    );
    expect(j.stream.last).toBe(61);
    expect(j.stream.entries.map((e) => e.type)).toEqual(['reset', 'chunk']);
    expect((await cli(['show', 'chat-2', '--store', url.toString(), '--stream'])).stdout).toContain(
      'stream: empty',
    );
  });
});
