import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { runRedisPayloadConformance } from './payload-suite.js';
import { requireServer, testClient } from './server.js';

// The cluster runs this suite in cluster.test.ts, whose restart test must not overlap it.
const client = testClient();
// A Redis of its own for the outage test (not the instance store suite's), so stopping it
// disturbs no other test, whichever suites run at the same time.
const OUTAGE_PORT = Number(process.env.STEPFOLD_REDIS_PAYLOAD_OUTAGE_PORT ?? 56389);
const outageClient = testClient(`redis://127.0.0.1:${OUTAGE_PORT}`);
const SERVICES = fileURLToPath(new URL('../../../scripts/services.sh', import.meta.url));
const server = (command: 'up' | 'stop' | 'start') =>
  promisify(execFile)('bash', [SERVICES, command, 'redis'], {
    env: { ...process.env, STEPFOLD_REDIS_PORT: String(OUTAGE_PORT) },
    timeout: 600_000,
  }).then(() => {});

beforeAll(async () => {
  await requireServer(client);
  await server('up');
});
afterAll(() => {
  client.disconnect();
  outageClient.disconnect();
});

runRedisPayloadConformance('redis', client, {
  client: outageClient,
  stop: () => server('stop'),
  start: () => server('start'),
});
