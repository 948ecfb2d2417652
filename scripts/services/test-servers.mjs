// A test's own server (the second server an outage test stops and starts): a port nobody else
// uses, and services.sh run for that port. Imported by the store packages' tests; plain ESM so
// the Node soak scripts can use it too.
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const SERVICES = fileURLToPath(new URL('../services.sh', import.meta.url));

/**
 * A TCP port on 127.0.0.1 that nothing listens on, chosen by the OS (listen on port 0, read it,
 * close), so parallel runs — two checkouts, two vitest workers — each get their own.
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no port from listen(0)'))));
    });
  });
}

/**
 * The port of a suite's own server: `process.env[variable]` when it is set (a fixed port, by
 * hand), else a {@link freePort}.
 * @param {string} variable
 * @returns {Promise<number>}
 */
export async function ownPort(variable) {
  const fixed = process.env[variable];
  return fixed ? Number(fixed) : freePort();
}

/**
 * Runs `bash scripts/services.sh <command> <name> --port <port>`: `up` (start and wait until it
 * answers), `stop`, `start`, or `drop` (stop it and delete its data, when the suite is done).
 * @param {'up' | 'stop' | 'start' | 'drop'} command
 * @param {'pg' | 'redis' | 'mongo' | 'dynamo'} name
 * @param {number | string} port
 * @returns {Promise<void>}
 */
export async function services(command, name, port) {
  await promisify(execFile)('bash', [SERVICES, command, name, '--port', String(port)], {
    timeout: 600_000, // services.sh may wait for another run holding its lock
  });
}

/**
 * @typedef {object} TestServer a server of one test file's own, run by services.sh
 * @property {number} port its port: `process.env[variable]` when set, else one the OS found free
 * @property {() => Promise<void>} up starts it (made on first use), waiting until it answers
 * @property {() => Promise<void>} stop stops it: the process goes away
 * @property {() => Promise<void>} start starts it again on the same port
 * @property {() => Promise<void>} drop stops it and deletes its data, when the file is done
 */

/**
 * A server `name` on {@link ownPort}`(variable)`, and the services.sh commands for it.
 * @param {'pg' | 'redis' | 'mongo' | 'dynamo'} name
 * @param {string} variable
 * @returns {Promise<TestServer>}
 */
export async function testServer(name, variable) {
  const port = await ownPort(variable);
  return {
    port,
    up: () => services('up', name, port),
    stop: () => services('stop', name, port),
    start: () => services('start', name, port),
    drop: () => services('drop', name, port),
  };
}
