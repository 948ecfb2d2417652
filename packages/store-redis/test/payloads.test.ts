import { runRedisPayloadConformance } from './payload-suite.js';
import { outageServer, testClient } from './server.js';

// The cluster runs this suite in cluster.test.ts.
const client = testClient();
// A Redis of its own for the outage test (not the instance store suite's).
const outage = await outageServer('STEPFOLD_REDIS_PAYLOAD_OUTAGE_PORT', client);

runRedisPayloadConformance('redis', client, outage);
