import type pg from 'pg';

/** One handler call as the example records it. */
export interface CallRecord {
  instance: string;
  step: string;
  phase: 'run' | 'compensate';
  attempt: number;
  idempotencyKey: string;
}

/**
 * The example's own table of handler calls: a row when a handler starts (with the worker's pid),
 * completed with the outcome when it returns. It stands in for the side effects a real handler
 * would have (a payment, an email), so a test can read what ran, where, and with which key, across
 * worker restarts.
 */
export interface CallLog {
  setup(): Promise<void>;
  begin(call: CallRecord): Promise<number>;
  end(id: number, outcome: 'ok' | 'error', detail?: string): Promise<void>;
}

export function createCallLog(pool: pg.Pool, schema: string): CallLog {
  const table = `"${schema}"."calls"`;
  return {
    async setup() {
      // One server-side lock: two workers starting at once must not race on CREATE.
      const client = await pool.connect();
      try {
        await client.query('SELECT pg_advisory_lock(hashtext($1))', [table]);
        await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
        await client.query(`CREATE TABLE IF NOT EXISTS ${table} (
          id bigserial PRIMARY KEY,
          instance text NOT NULL,
          step text NOT NULL,
          phase text NOT NULL,
          attempt integer NOT NULL,
          idempotency_key text NOT NULL,
          pid integer NOT NULL,
          started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
          finished_at timestamptz,
          outcome text,
          detail text)`);
        await client.query(`CREATE INDEX IF NOT EXISTS calls_instance ON ${table} (instance, id)`);
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [table]).catch(() => {});
        client.release();
      }
    },
    async begin(c) {
      const r = await pool.query<{ id: string }>(
        `INSERT INTO ${table} (instance, step, phase, attempt, idempotency_key, pid)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
        [c.instance, c.step, c.phase, c.attempt, c.idempotencyKey, process.pid],
      );
      return Number(r.rows[0]!.id);
    },
    async end(id, outcome, detail) {
      await pool.query(
        `UPDATE ${table} SET finished_at = clock_timestamp(), outcome = $2, detail = $3 WHERE id = $1`,
        [id, outcome, detail ?? null],
      );
    },
  };
}
