import { readFileSync } from 'node:fs';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { recreateDatabase } from './peers/common.js';
import { LINEAR_STEPS } from './workflows.js';

// DBOS Transact, the baseline of e2e-postgres: the same 10-step workflow of no-op steps, on the
// same PostgreSQL server, in its own system database (dropped and recreated per run so no
// workflow of an earlier run is recovered into this one).

/** The pinned version (the package does not export its package.json). */
export const DBOS_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    devDependencies: Record<string, string>;
  }
).devDependencies['@dbos-inc/dbos-sdk'];

const DB_NAME = 'stepfold_bench_dbos';

const noopStep = async () => null;

let workflow: ((orderId: number) => Promise<number>) | null = null;

/** Drops and recreates DBOS's system database, then launches DBOS on it. */
export async function launchDbos(pgUrl: string): Promise<void> {
  const url = await recreateDatabase(pgUrl, DB_NAME);
  workflow ??= DBOS.registerWorkflow(
    async (orderId: number) => {
      for (const name of LINEAR_STEPS) await DBOS.runStep(noopStep, { name });
      return orderId;
    },
    { name: 'benchLinear10' },
  );
  DBOS.setConfig({
    name: 'stepfold-bench',
    applicationVersion: 'bench-1',
    systemDatabaseUrl: url,
    logLevel: 'error',
  });
  await DBOS.launch();
}

/** Runs `count` workflows, `concurrency` at a time; returns workflows/s. */
export async function runDbos(count: number, concurrency: number, first: number): Promise<number> {
  if (!workflow) throw new Error('launchDbos first');
  const wf = workflow;
  let left = count;
  let next = first;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left > 0) {
        left--;
        const n = next++;
        if ((await wf(n)) !== n) throw new Error('DBOS workflow returned the wrong value');
      }
    }),
  );
  return count / ((performance.now() - t0) / 1000);
}

export async function shutdownDbos(): Promise<void> {
  await DBOS.shutdown();
}
