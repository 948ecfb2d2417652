import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseHint } from '../src/index.js';
import { requireServer, testClient } from './server.js';
import { describeDeadSubscribe, describeWakes } from './wake-suite.js';

const client = testClient();
afterAll(() => client.disconnect());
beforeAll(() => requireServer(client));

describeWakes({ name: 'one server', client, nodeOf: async () => testClient() });
describeDeadSubscribe();

describe('redis adapter: hint payloads', () => {
  it('parses {"at","w"} and nothing else', () => {
    expect(parseHint('{"at":5e-324,"w":"wf"}')).toEqual({ at: 5e-324, workflow: 'wf' });
    expect(parseHint('{"at":1,"w":"wf","i":"id-1"}')).toEqual({ at: 1, workflow: 'wf', id: 'id-1' });
    expect(parseHint('{"at":1,"i":"not valid"}')).toEqual({ at: 1 });
    expect(parseHint('{"at":-1}')).toEqual({ at: -1 });
    // A hand-off's snapshot, only when it is an object of the instance named.
    expect(parseHint('{"at":1,"w":"wf","i":"id-1","s":{"id":"id-1","v":2}}')).toEqual({
      at: 1,
      workflow: 'wf',
      id: 'id-1',
      snapshot: { id: 'id-1', v: 2 },
    });
    expect(parseHint('{"at":1,"i":"id-1","s":{"id":"other"}}')).toEqual({ at: 1, id: 'id-1' });
    expect(parseHint('{"at":1,"i":"id-1","s":"id-1"}')).toEqual({ at: 1, id: 'id-1' });
    expect(parseHint('{"at":1,"s":{"id":"id-1"}}')).toEqual({ at: 1 });
    for (const junk of ['', 'null', '1', '{"at":"1"}', '{"at":1e400}', '{"w":"x"}', '{']) {
      expect(parseHint(junk), junk).toBeNull();
    }
  });
});
