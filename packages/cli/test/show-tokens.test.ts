import { makeTestSnapshot, PAYLOAD_REF, type UsageTotal } from '@stepfold/engine';
import { createPostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { cli, parsed, uniqueName } from './cli.js';

// `stepfold show` prints the model tokens an instance has counted (a step output's `usageTotal`,
// kept inline beside an offloaded payload's reference, or carried in a continued run's input).

const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';

const total: UsageTotal = { inputTokens: 1200, outputTokens: 345, totalTokens: 1545, modelCalls: 7 };
const ref = (keep: Record<string, unknown>) => ({
  $ref: PAYLOAD_REF,
  owner: 'chat-1',
  sha256: 'ab'.repeat(32),
  bytes: 4096,
  keep,
});

describe('stepfold show: token counts', () => {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
  pool.on('error', () => {});
  const schema = uniqueName('showtokens');
  const store = createPostgresStore({ pool, schema });
  const url = new URL(PG_URL);
  url.searchParams.set('schema', schema);

  beforeAll(async () => {
    await store.setup();
    // Mid-run: the model step's output is offloaded, its total kept inline; an older total in
    // the prepare step's (the one before this call) does not win.
    const before = { ...total, inputTokens: 1000, totalTokens: 1300, outputTokens: 300, modelCalls: 6 };
    await store.create(
      makeTestSnapshot('chat-1', {
        steps: {
          prepare: {
            status: 'completed',
            iteration: 7,
            attempt: 1,
            startedAt: 0,
            output: ref({ fresh: true, usageTotal: before }),
          },
          model: {
            status: 'completed',
            iteration: 7,
            attempt: 1,
            startedAt: 0,
            output: ref({ status: 'answered', usageTotal: total }),
          },
        },
      }),
    );
    // Right after a continue-as-new: the total rides in the input's last turn.
    await store.create(
      makeTestSnapshot('chat-2', { run: 2, input: { last: ref({ usageTotal: total }), resumed: 7 } }),
    );
    await store.create(makeTestSnapshot('job-1', { input: { tokens: 5 } }));
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('prints the total in the text and as `tokens` in --json, mid-run and after a continue-as-new', async () => {
    for (const id of ['chat-1', 'chat-2']) {
      const r = await cli(['show', id, '--store', url.toString()]);
      expect(r.code, r.stderr).toBe(EXIT.ok);
      expect(r.stdout).toContain('  tokens: 1200 in, 345 out, 1545 total over 7 model calls\n');
      const j = parsed<{ tokens?: UsageTotal }>(await cli(['show', id, '--store', url.toString(), '--json']));
      expect(j.tokens).toEqual(total);
    }
  });

  it('says nothing of tokens for an instance that counts none', async () => {
    const r = await cli(['show', 'job-1', '--store', url.toString()]);
    expect(r.code, r.stderr).toBe(EXIT.ok);
    expect(r.stdout).not.toContain('tokens:');
    expect(
      parsed<{ tokens?: unknown }>(await cli(['show', 'job-1', '--store', url.toString(), '--json'])).tokens,
    ).toBeUndefined();
  });
});
