import { makeWorkerUtils } from 'graphile-worker';
import { wallMs } from './common.js';
import { quietGraphileLogger } from './graphile-worker.js';

// The adding side of graphile-latency.ts, in a process of its own: on each `next` message from the
// parent it pauses a random 10–30 ms, then adds one `latency` job whose payload carries the wall
// clock read just before the `addJob` call. Argument: the connection string of the database the
// parent's runner works on.

const url = process.argv[2];
if (!url || !process.send) throw new Error('usage: forked by graphile-latency.ts with a connection string');
const send = process.send.bind(process);

const utils = await makeWorkerUtils({ connectionString: url, logger: quietGraphileLogger });
process.on('message', (msg: unknown) => {
  if (msg === 'next') {
    setTimeout(
      async () => {
        const addedAt = wallMs();
        await utils.addJob('latency', { addedAt });
      },
      10 + Math.random() * 20,
    );
  } else if (msg === 'stop') {
    void Promise.resolve(utils.release()).then(() => process.exit(0));
  }
});
send('ready');
