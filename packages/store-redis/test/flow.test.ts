import { afterAll } from 'vitest';
import { describeFlow } from './flow-suite.js';
import { testClient } from './server.js';

// The cluster runs the same suite from cluster.test.ts, the one file that uses it.
const client = testClient();
afterAll(() => client.quit());

describeFlow('one server', client);
