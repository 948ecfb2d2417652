import { DBOS_VERSION, launchDbos, runDbos, shutdownDbos } from '../dbos.js';
import * as absurd from './absurd.js';
import type { Peer } from './common.js';
import * as graphile from './graphile-worker.js';
import * as openworkflow from './openworkflow.js';

// The e2e-postgres baselines: each runs a 10-step chain of no-op steps on the same PostgreSQL
// server as ours, in a database of its own (dropped and recreated by `launch`), with a worker of
// concurrency 4 in this process. `run(count, concurrency, first)` keeps `concurrency` workflows in
// flight and returns workflows/s; what "done" means for each is in its module's header.

export type { Peer } from './common.js';

export const PEERS: Peer[] = [
  {
    name: 'dbos',
    version: `@dbos-inc/dbos-sdk ${DBOS_VERSION}`,
    launch: launchDbos,
    run: runDbos,
    shutdown: shutdownDbos,
  },
  {
    name: 'graphile-worker',
    version: `graphile-worker ${graphile.GRAPHILE_WORKER_VERSION}`,
    launch: graphile.launch,
    run: graphile.run,
    shutdown: graphile.shutdown,
  },
  {
    name: 'absurd',
    version: `absurd-sdk ${absurd.ABSURD_VERSION} (schema by absurdctl ${absurd.ABSURD_VERSION})`,
    launch: absurd.launch,
    run: absurd.run,
    shutdown: absurd.shutdown,
  },
  {
    name: 'openworkflow',
    version: `openworkflow ${openworkflow.OPENWORKFLOW_VERSION} (postgres ${openworkflow.POSTGRES_JS_VERSION})`,
    launch: openworkflow.launch,
    run: openworkflow.run,
    shutdown: openworkflow.shutdown,
  },
];
