// A test's own server (the second server an outage test stops and starts): a port nobody else
// uses, and services.sh run for that port. Imported by the store packages' tests; plain ESM so
// the Node soak scripts can use it too.
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const SERVICES = fileURLToPath(new URL('../services.sh', import.meta.url));

/**
 * Listens on `port` of 127.0.0.1 (0: one the OS chooses) and closes again: the port it got, or
 * 0 when that port is taken.
 * @param {number} port
 * @returns {Promise<number>}
 */
function tryListen(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.on('error', () => resolve(0));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const got = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(got));
    });
  });
}

/**
 * A TCP port on 127.0.0.1 that nothing listens on, chosen by the OS (listen on port 0, read it,
 * close), so parallel runs — two checkouts, two vitest workers — each get their own; with `count`,
 * the first of that many free ports in a row (a Redis Cluster's nodes).
 * @param {number} [count]
 * @returns {Promise<number>}
 */
export async function freePort(count = 1) {
  for (let tries = 0; tries < 50; tries++) {
    const first = await tryListen(0);
    if (!first) continue;
    let free = first + count <= 65536;
    for (let i = 1; free && i < count; i++) free = (await tryListen(first + i)) === first + i;
    if (free) return first;
  }
  throw new Error(`no ${count} free ports in a row on 127.0.0.1`);
}

/**
 * The port of a suite's own server: `process.env[variable]` when it is set (a fixed port, by
 * hand), else a {@link freePort} (the first of `count`).
 * @param {string} variable
 * @param {number} [count]
 * @returns {Promise<number>}
 */
export async function ownPort(variable, count = 1) {
  const fixed = process.env[variable];
  return fixed ? Number(fixed) : freePort(count);
}

/**
 * Runs `bash scripts/services.sh <command> <name> --port <port>`: `up` (start and wait until it
 * answers), `stop`, `start`, or `drop` (stop it and delete its data, when the suite is done).
 * @param {'up' | 'stop' | 'start' | 'drop'} command
 * @param {ServerName} name
 * @param {number | string} port
 * @returns {Promise<void>}
 */
export async function services(command, name, port) {
  await promisify(execFile)('bash', [SERVICES, command, name, '--port', String(port)], {
    timeout: 600_000, // services.sh may wait for another run holding its lock
  });
}

/** @typedef {'pg' | 'redis' | 'redis-cluster' | 'mongo' | 'dynamo'} ServerName */

/**
 * @typedef {object} TestServer a server of one test file's own, run by services.sh
 * @property {number} port its port: `process.env[variable]` when set, else one the OS found free
 *   (a Redis Cluster's first node: the other two are on the next ports)
 * @property {() => Promise<void>} up starts it (made on first use), waiting until it answers
 * @property {() => Promise<void>} stop stops it: the process goes away
 * @property {() => Promise<void>} start starts it again on the same port
 * @property {() => Promise<void>} drop stops it and deletes its data, when the file is done
 */

/**
 * A server `name` on {@link ownPort}`(variable)`, and the services.sh commands for it.
 * @param {ServerName} name
 * @param {string} variable
 * @returns {Promise<TestServer>}
 */
export async function testServer(name, variable) {
  const port = await ownPort(variable, name === 'redis-cluster' ? 3 : 1);
  return {
    port,
    up: () => services('up', name, port),
    stop: () => services('stop', name, port),
    start: () => services('start', name, port),
    drop: () => services('drop', name, port),
  };
}
