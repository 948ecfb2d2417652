import { readFileSync } from 'node:fs';
import pg from 'pg';

// What every peer module shares: the pinned version of its package, its own database next to the
// one in the bench's URL (dropped and recreated per launch, so nothing of an earlier run is
// recovered into this one), and the driver that keeps `concurrency` workflows in flight.

/** The version of `pkg` pinned in bench/package.json (peers do not export their package.json). */
export function pinnedVersion(pkg: string): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  const v = manifest.devDependencies[pkg];
  if (!v) throw new Error(`${pkg} is not in bench/package.json`);
  return v;
}

/** `pgUrl` with its database replaced by `db`. */
export function databaseUrl(pgUrl: string, db: string): string {
  const u = new URL(pgUrl);
  u.pathname = `/${db}`;
  return u.toString();
}

/** Drops and recreates database `db` on the server of `pgUrl`; returns its URL. */
export async function recreateDatabase(pgUrl: string, db: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(db)) throw new Error(`bad database name ${db}`);
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  try {
    // FORCE cannot end another role's backend (42501: a superuser's session on the database, such
    // as a psql left open): tried again for a few seconds before the row gives up.
    for (let tries = 0; ; tries++) {
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
        break;
      } catch (e) {
        if ((e as { code?: string }).code !== '42501' || tries >= 10) throw e;
        await new Promise((r) => setTimeout(r, 500 * (tries + 1)));
      }
    }
    await admin.query(`CREATE DATABASE ${db}`);
  } finally {
    await admin.end();
  }
  return databaseUrl(pgUrl, db);
}

/**
 * Runs workflows numbered `first` … `first + count - 1`, `concurrency` at a time: each of
 * `concurrency` loops starts the next number as soon as its previous one is done. `one(n)`
 * resolves once workflow `n` has completed. Returns workflows/s.
 */
export async function keepInFlight(
  count: number,
  concurrency: number,
  first: number,
  one: (n: number) => Promise<void>,
): Promise<number> {
  let left = count;
  let next = first;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left > 0) {
        left--;
        await one(next++);
      }
    }),
  );
  return count / ((performance.now() - t0) / 1000);
}

/** Promises keyed by workflow, resolved from wherever the peer reports a workflow done. */
export class Waiters<K> {
  private readonly pending = new Map<K, () => void>();
  /** Finished before anyone waited (the report can beat the start call's reply). */
  private readonly early = new Set<K>();

  wait(key: K): Promise<void> {
    if (this.early.delete(key)) return Promise.resolve();
    return new Promise((resolve) => this.pending.set(key, resolve));
  }

  done(key: K): void {
    const resolve = this.pending.get(key);
    if (resolve) {
      this.pending.delete(key);
      resolve();
    } else {
      this.early.add(key);
    }
  }
}

/** The interface every peer module has (see peers/index.ts). */
export interface Peer {
  name: string;
  version: string;
  /** Recreates the peer's own database next to `pgUrl`, installs its schema, starts its worker. */
  launch(pgUrl: string): Promise<void>;
  /** Runs `count` 10-step workflows, `concurrency` in flight, numbered from `first`; workflows/s. */
  run(count: number, concurrency: number, first: number): Promise<number>;
  shutdown(): Promise<void>;
}

/** Percentile `p` (0–100) of `xs`, nearest rank. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[rank]!;
}

/**
 * Wall-clock milliseconds with sub-millisecond precision: the clock `Date.now()` reads (the
 * process's time origin on it plus the monotonic time since), so two processes on one machine
 * can compare their readings.
 */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}
