/**
 * INTERIM: a minimal PostgreSQL `Store` until `@stepfold/store-postgres` lands; replaced then.
 */
import {
  AlreadyExistsError,
  assertValidId,
  type ListPage,
  type ListQuery,
  NotFoundError,
  type Snapshot,
  SnapshotTooLargeError,
  type Store,
  StoreUnavailableError,
  snapshotBytes,
  VersionConflictError,
} from '@stepfold/engine';
import type pg from 'pg';

const IDENT = /^[a-z_][a-z0-9_]{0,62}$/;

export function createPostgresStore(o: { pool: pg.Pool; schema?: string; table?: string }): Store {
  const schema = o.schema ?? 'stepfold';
  const table = o.table ?? 'instances';
  if (!IDENT.test(schema) || !IDENT.test(table)) throw new TypeError('invalid schema or table name');
  const t = `"${schema}"."${table}"`;
  const max = 64 * 1024 * 1024;
  const q = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) => {
    try {
      return await o.pool.query<R>(text, values);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === '23505' || code?.startsWith('22') || code?.startsWith('42')) throw e;
      throw new StoreUnavailableError(`postgres: ${(e as Error).message}`, e);
    }
  };
  const json = (s: Snapshot) => {
    const text = JSON.stringify(s);
    const bytes = snapshotBytes(text);
    if (bytes > max) throw new SnapshotTooLargeError(s.id, bytes, max);
    return text;
  };
  return {
    maxSnapshotBytes: max,
    async setup() {
      await q(`CREATE SCHEMA IF NOT EXISTS "${schema}"`).catch(() => {});
      await q(`CREATE TABLE IF NOT EXISTS ${t} (
        id text PRIMARY KEY, version integer NOT NULL, status text NOT NULL, workflow text NOT NULL,
        wake_at bigint, snapshot jsonb NOT NULL)`).catch((e) => {
        if ((e as { code?: string }).code !== '23505') throw e;
      });
      await q(
        `CREATE INDEX IF NOT EXISTS "${table}_wake_at" ON ${t} (wake_at, id) WHERE wake_at IS NOT NULL`,
      ).catch(() => {});
    },
    async create(s) {
      assertValidId(s.id);
      try {
        await q(
          `INSERT INTO ${t} (id, version, status, workflow, wake_at, snapshot) VALUES ($1,$2,$3,$4,$5,$6)`,
          [s.id, s.version, s.status, s.workflow.name, s.wakeAt, json(s)],
        );
      } catch (e) {
        if ((e as { code?: string }).code === '23505') throw new AlreadyExistsError(s.id);
        throw e;
      }
    },
    async load(id) {
      assertValidId(id);
      const r = await q<{ snapshot: Snapshot }>(`SELECT snapshot FROM ${t} WHERE id = $1`, [id]);
      return r.rows[0]?.snapshot ?? null;
    },
    async save(s, expected) {
      const r = await q(
        `UPDATE ${t} SET version = $3, status = $4, wake_at = $5, snapshot = $6 WHERE id = $1 AND version = $2`,
        [s.id, expected, s.version, s.status, s.wakeAt, json(s)],
      );
      if (r.rowCount === 1) return;
      const cur = await q<{ version: number }>(`SELECT version FROM ${t} WHERE id = $1`, [s.id]);
      if (!cur.rows[0]) throw new NotFoundError(s.id);
      throw new VersionConflictError(s.id, expected, cur.rows[0].version);
    },
    async listDue(now, limit) {
      const r = await q<{ id: string }>(
        `SELECT id FROM ${t} WHERE wake_at IS NOT NULL AND wake_at <= $1 ORDER BY wake_at, id LIMIT $2`,
        [now, limit],
      );
      return r.rows.map((x) => x.id);
    },
    async list(query: ListQuery): Promise<ListPage> {
      const r = await q<{ snapshot: Snapshot; id: string }>(
        `SELECT id, snapshot FROM ${t} WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR workflow = $2)
         AND ($3::text IS NULL OR id > $3) ORDER BY id LIMIT $4`,
        [query.status ?? null, query.workflow ?? null, query.cursor ?? null, query.limit + 1],
      );
      const items = r.rows.slice(0, query.limit).map((x) => x.snapshot);
      return { items, cursor: r.rows.length > query.limit ? (items.at(-1)?.id ?? null) : null };
    },
    async delete(id) {
      const r = await q(`DELETE FROM ${t} WHERE id = $1`, [id]);
      return r.rowCount === 1;
    },
    async close() {},
  };
}
