import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { aesGcmCodec, createRunner, type Snapshot } from '@stepfold/engine';
import { createPostgresStore } from '@stepfold/store-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { cli, EXAMPLES, exampleHandlers, expenseDefinition, parsed, uniqueName } from './cli.js';

// A store a runner with a codec wrote: the CLI shows markers without the keys, the data with
// `--key-file` (or STEPFOLD_KEY_FILE), and refuses to change an encrypted instance without them.

const PG_URL = process.env.STEPFOLD_PG_URL ?? 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';

describe('the CLI on an encrypted store (PostgreSQL)', () => {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
  pool.on('error', () => {});
  const schema = uniqueName('codec');
  const store = createPostgresStore({ pool, schema });
  const url = new URL(PG_URL);
  url.searchParams.set('schema', schema);
  const storeUrl = url.toString();
  const k2 = crypto.getRandomValues(new Uint8Array(32));
  const dir = mkdtempSync(join(tmpdir(), 'stepfold-keys-'));
  const keyFile = join(dir, 'keys.json');
  const wrongFile = join(dir, 'wrong.json');
  const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
  const acting = (...more: string[]) => [
    '--store',
    storeUrl,
    '--definitions',
    EXAMPLES.expense,
    '--json',
    ...more,
  ];
  const raw = async (id: string) => (await store.load(id)) as Snapshot;

  beforeAll(async () => {
    await store.setup();
    writeFileSync(keyFile, JSON.stringify({ current: 'k2', keys: { k2: b64(k2) } }));
    writeFileSync(
      wrongFile,
      JSON.stringify({ keys: { k9: b64(crypto.getRandomValues(new Uint8Array(32))) } }),
    );
    const runner = createRunner({
      store,
      workflows: [expenseDefinition()],
      handlers: await exampleHandlers(EXAMPLES.expenseHandlers),
      codec: aesGcmCodec({ keys: { k2 } }),
    });
    for (const id of ['enc-1', 'enc-2'])
      await runner.start('expense', id, { amount: 40, note: 'MARK-claim' });
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  });

  it('show without the keys prints markers where the data is, and nothing of it', async () => {
    const r = await cli(['show', 'enc-1', '--store', storeUrl]);
    expect(r.code, r.stderr).toBe(EXIT.ok);
    expect(r.stdout).toContain('[encrypted k2]');
    expect(r.stdout).not.toContain('MARK-claim');
    const json = parsed<Snapshot>(await cli(['show', 'enc-1', '--store', storeUrl, '--json']));
    expect(json.input).toBe('[encrypted k2]');
  });

  it('show with --key-file or STEPFOLD_KEY_FILE prints the data; a key file without k2 is CODEC_KEY_MISSING', async () => {
    const flagged = parsed<Snapshot>(
      await cli(['show', 'enc-1', '--store', storeUrl, '--json', '--key-file', keyFile]),
    );
    expect(flagged.input).toEqual({ amount: 40, note: 'MARK-claim' });
    const fromEnv = parsed<Snapshot>(
      await cli(['show', 'enc-1', '--store', storeUrl, '--json'], { STEPFOLD_KEY_FILE: keyFile }),
    );
    expect(fromEnv.input).toEqual({ amount: 40, note: 'MARK-claim' });
    const wrong = await cli(['show', 'enc-1', '--store', storeUrl, '--json', '--key-file', wrongFile]);
    expect(wrong.code, wrong.stderr).not.toBe(EXIT.ok);
    expect(wrong.stderr).toContain('CODEC_KEY_MISSING');
  });

  it('a command that writes refuses an encrypted instance without the keys (nothing written), and writes with them', async () => {
    const before = await raw('enc-2');
    const refused = await cli(['approve', 'enc-2', '--by', 'bob', ...acting()]);
    expect(refused.code).toBe(EXIT.usage);
    expect(refused.stderr).toContain('--key-file');
    expect((await raw('enc-2')).version).toBe(before.version);

    const approved = await cli(['approve', 'enc-2', '--by', 'bob', ...acting('--key-file', keyFile)]);
    expect(approved.code, approved.stderr).toBe(EXIT.ok);
    const after = await raw('enc-2');
    expect(after.version).toBe(before.version + 1);
    // What it wrote is encrypted too: the decision is in the step's output, under k2.
    expect(after.steps['manager']?.output).toMatchObject({ $enc: 'aes-gcm', kid: 'k2' });
    expect(JSON.stringify(after)).not.toContain('bob');
  });
});
