// @ts-check
// A TCP proxy that injects network faults between a store's clients and its server: the soak puts
// one in front of each store so the drivers meet what a real network does to them. node:net only.
//
// Faults, all in-process and changeable at any time:
// - latency: each chunk, in each direction, is held `ms ± jitter` before it is forwarded (order is
//   kept: a chunk never overtakes the one before it);
// - resets: every live connection reset now (the client reads ECONNRESET), and/or a fraction of new
//   connections reset as soon as they are accepted;
// - blackhole: for `ms`, connections are accepted and held and nothing is forwarded either way
//   (what a dropped route or a stalled server looks like: no error, no answer); then the held bytes
//   are released (TCP's retransmits would get them through a short outage), or every connection of
//   the outage is reset (a middlebox that forgot them).
import net from 'node:net';

/**
 * @typedef {object} FaultProxyStats
 * @property {number} connections accepted
 * @property {number} live open now
 * @property {number} resets connections reset by the proxy
 * @property {number} blackholes blackholes begun
 * @property {number} bytesUp bytes forwarded client → server
 * @property {number} bytesDown bytes forwarded server → client
 *
 * @typedef {object} FaultProxy
 * @property {number} port where it listens, on 127.0.0.1
 * @property {(url: string) => string} url `url` with its host and port replaced by the proxy's
 * @property {(ms: number, jitterMs?: number) => void} setLatency delay per chunk (0: none)
 * @property {() => number} resetAll resets every live connection; how many
 * @property {(fraction: number) => void} resetNew resets this fraction of new connections (0: none)
 * @property {(ms: number, then?: 'release' | 'reset') => Promise<void>} blackhole holds every
 *   connection silent for `ms`, then releases or resets them; resolves when it is over
 * @property {() => boolean} blackholed whether a blackhole is on now
 * @property {FaultProxyStats} stats
 * @property {() => Promise<void>} close stops listening and destroys every connection
 */

/** Bytes queued in one direction before the proxy stops reading from its source. */
const HIGH_WATER = 1 << 20;

/**
 * Starts a fault proxy on 127.0.0.1 (port 0: any free one) forwarding to `target`.
 * @example
 * const proxy = await startFaultProxy({ target: { host: '127.0.0.1', port: 5432 } });
 * const pool = new pg.Pool({ connectionString: proxy.url('postgres://u:p@127.0.0.1:5432/db') });
 * proxy.setLatency(20, 10);
 * await proxy.blackhole(3000, 'reset');
 * @param {{ target: { host: string, port: number }, port?: number, random?: () => number }} options
 * @returns {Promise<FaultProxy>}
 */
export async function startFaultProxy(options) {
  const random = options.random ?? Math.random;
  let latency = 0;
  let jitter = 0;
  let resetFraction = 0;
  /** @type {{ of: Set<Pair>, timer: ReturnType<typeof setTimeout>, over(): void } | null} */
  let hole = null;
  /** @type {Set<Pair>} */
  const pairs = new Set();
  const stats = { connections: 0, live: 0, resets: 0, blackholes: 0, bytesUp: 0, bytesDown: 0 };

  const delay = () => (latency > 0 ? Math.max(0, latency + (random() * 2 - 1) * jitter) : 0);

  /**
   * One direction of a connection: chunks wait in order for their due time and for no blackhole.
   * @param {net.Socket} from @param {net.Socket} to @param {'bytesUp' | 'bytesDown'} counter
   */
  const lane = (from, to, counter) => {
    /** @type {Array<{ at: number, data: Buffer }>} */
    const queue = [];
    let queued = 0;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    let ended = false;
    const pump = () => {
      timer = undefined;
      if (to.destroyed) return;
      while (queue.length && !hole) {
        const head = /** @type {{ at: number, data: Buffer }} */ (queue[0]);
        const wait = head.at - Date.now();
        if (wait > 0) {
          timer = setTimeout(pump, wait);
          return;
        }
        queue.shift();
        queued -= head.data.length;
        stats[counter] += head.data.length;
        to.write(head.data);
      }
      if (queued < HIGH_WATER && from.isPaused()) from.resume();
      if (!queue.length && ended) to.end();
    };
    from.on('data', (data) => {
      const last = queue.at(-1)?.at ?? 0;
      queue.push({ at: Math.max(Date.now() + delay(), last), data });
      queued += data.length;
      if (queued >= HIGH_WATER) from.pause();
      if (timer === undefined) pump();
    });
    from.on('end', () => {
      ended = true;
      if (timer === undefined) pump();
    });
    return {
      kick: () => {
        if (timer !== undefined) clearTimeout(timer);
        pump();
      },
      stop: () => clearTimeout(timer),
    };
  };

  /**
   * @typedef {{ client: net.Socket, server: net.Socket, reset(): void, kick(): void }} Pair
   * @param {net.Socket} client
   */
  const accept = (client) => {
    stats.connections++;
    if (resetFraction > 0 && random() < resetFraction) {
      stats.resets++;
      client.on('error', () => {});
      client.resetAndDestroy();
      return;
    }
    const server = net.connect(options.target.port, options.target.host);
    const up = lane(client, server, 'bytesUp');
    const down = lane(server, client, 'bytesDown');
    let closed = false;
    /** @type {Pair} */
    const pair = {
      client,
      server,
      reset() {
        if (closed) return;
        stats.resets++;
        finish();
        client.resetAndDestroy();
        server.destroy();
      },
      kick() {
        up.kick();
        down.kick();
      },
    };
    const finish = () => {
      if (closed) return;
      closed = true;
      stats.live--;
      pairs.delete(pair);
      up.stop();
      down.stop();
    };
    stats.live++;
    pairs.add(pair);
    hole?.of.add(pair);
    // Either side failing ends both: the client sees its connection reset, as it would without us.
    client.on('error', () => {
      finish();
      server.destroy();
    });
    server.on('error', () => pair.reset());
    client.on('close', () => {
      finish();
      server.destroy();
    });
    // The server closing first (an HTTP server done with a connection) is a clean end: its lane
    // forwards what it still holds, then ends the client's side, whose close finishes the pair.
    server.on('close', () => {
      if (!closed && client.destroyed) finish();
    });
  };

  const listener = net.createServer({ allowHalfOpen: true, pauseOnConnect: false }, accept);
  await new Promise((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(options.port ?? 0, '127.0.0.1', () => resolve(undefined));
  });
  const port = /** @type {net.AddressInfo} */ (listener.address()).port;

  return {
    port,
    url(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      // URL adds a "/" path to a bare http://host:port; the caller's URL had none.
      const out = u.toString();
      return out.endsWith('/') && !url.endsWith('/') ? out.slice(0, -1) : out;
    },
    setLatency(ms, jitterMs = 0) {
      latency = ms;
      jitter = Math.min(jitterMs, ms);
    },
    resetAll() {
      const all = [...pairs];
      for (const p of all) p.reset();
      return all.length;
    },
    resetNew(fraction) {
      resetFraction = fraction;
    },
    blackhole(ms, then = 'release') {
      if (hole) throw new Error('fault proxy: a blackhole is already on');
      stats.blackholes++;
      return new Promise((resolve) => {
        const of = new Set(pairs);
        hole = {
          of,
          over: () => resolve(undefined),
          timer: setTimeout(() => {
            hole = null;
            if (then === 'reset') for (const p of of) p.reset();
            for (const p of pairs) p.kick();
            resolve(undefined);
          }, ms),
        };
      });
    },
    blackholed: () => hole !== null,
    stats,
    async close() {
      if (hole) {
        clearTimeout(hole.timer);
        hole.over();
        hole = null;
      }
      for (const p of [...pairs]) {
        p.client.destroy();
        p.server.destroy();
      }
      await new Promise((resolve) => listener.close(() => resolve(undefined)));
    },
  };
}
