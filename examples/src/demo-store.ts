/**
 * The store a demo runs on, picked with `--store memory|postgres` (default memory). PostgreSQL is the
 * server `pnpm services` starts, at STEPFOLD_PG_URL; the demo uses its own table, `stepfold_demo.<table>`.
 */
import type { Store } from '@stepfold/engine';
import { createMemoryStore } from '@stepfold/engine';

/** Stores a demo can run on. */
export type DemoStoreKind = 'memory' | 'postgres';

/** A demo's store, what to say about it, and how to let go of it. */
export interface DemoStore {
  store: Store;
  /** One line saying where the snapshots live. */
  description: string;
  close(): Promise<void>;
}

/** Default PostgreSQL URL: the test server of `pnpm services`. */
export const DEMO_PG_URL = 'postgres://stepfold:stepfold@127.0.0.1:5432/stepfold';

/** The `--store` value in `argv` (`--store postgres` or `--store=postgres`), or `memory`. */
export function storeFromArgs(argv: readonly string[]): DemoStoreKind {
  let value = 'memory';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--store') value = argv[++i] ?? '';
    else if (arg.startsWith('--store=')) value = arg.slice('--store='.length);
  }
  if (value === 'pg') value = 'postgres';
  if (value !== 'memory' && value !== 'postgres') {
    throw new Error(`--store must be memory or postgres, not ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * Opens the store: set up, and with the demo's instance ids removed so a rerun starts clean. On
 * PostgreSQL the rows stay after the demo, to look at with psql.
 */
export async function openDemoStore(kind: DemoStoreKind, table: string, ids: string[]): Promise<DemoStore> {
  if (kind === 'memory') {
    return { store: createMemoryStore(), description: 'in-memory store', close: async () => {} };
  }
  const [{ default: pg }, { createPostgresStore }] = await Promise.all([
    import('pg'),
    import('@stepfold/store-postgres'),
  ]);
  const url = process.env['STEPFOLD_PG_URL'] ?? DEMO_PG_URL;
  const pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 5000 });
  pool.on('error', () => {}); // an idle connection the server dropped; the pool replaces it
  const store = createPostgresStore({ pool, schema: 'stepfold_demo', table });
  try {
    await store.setup();
    for (const id of ids) await store.delete(id);
  } catch (e) {
    await pool.end();
    const shown = new URL(url);
    shown.password = shown.password ? '***' : '';
    throw new Error(
      `PostgreSQL at ${shown} is not usable (run \`pnpm services\` or set STEPFOLD_PG_URL): ${(e as Error).message}`,
      { cause: e },
    );
  }
  return {
    store,
    description: `PostgreSQL, table stepfold_demo.${table}`,
    close: () => pool.end(),
  };
}
