import type { WakeListener, WakeNotice, WakeSource, WakeSubscription } from '@stepfold/engine';
import { type Backoff, backoffDelay, OUTAGE_BACKOFF, parseWakePayload, storeGuard } from '@stepfold/engine';
import { type Cluster, Redis, type RedisOptions } from 'ioredis';
import type { HintRoute } from './encode.js';
import { isUnavailable } from './map-error.js';

/** Reconnect delays of a wake subscription whose connection broke: the engine's outage schedule, capped at 2 s (a reconnect is one cheap SUBSCRIBE). */
export const WAKE_BACKOFF: Backoff = { ...OUTAGE_BACKOFF, maxMs: 2_000 };
/** First reconnect delay of a wake subscription whose connection broke; it doubles per failed try. */
export const WAKE_RETRY_MIN_MS = WAKE_BACKOFF.firstMs;
/** Longest delay between two reconnect tries of a wake subscription. */
export const WAKE_RETRY_MAX_MS = WAKE_BACKOFF.maxMs;

// The dedicated connection: no offline queue (a command while down fails at once instead of waiting),
// no reconnect or resubscribe by ioredis (the subscription makes a new connection per try, so it knows
// exactly when the SUBSCRIBE is back in force and never holds a queue while the server is away).
const DEDICATED: RedisOptions = {
  lazyConnect: true,
  enableOfflineQueue: false,
  autoResubscribe: false,
  autoResendUnfulfilledCommands: false,
  retryStrategy: () => null,
  reconnectOnError: () => false,
  maxRetriesPerRequest: 0,
};

/** The dedicated connection's name (CLIENT LIST), which tells whose subscription it is. */
export function wakeConnectionName(channel: string): string {
  return `stepfold-wakes:${channel}`;
}

/** A hint's payload as a {@link WakeNotice}, or null when it is not one (never thrown on). */
export const parseHint: (message: string) => WakeNotice | null = parseWakePayload;

interface Address {
  host: string;
  port: number;
}

/** Opens one connection subscribed to the channel (payloads to `onMessage`), and ends that subscription. */
interface Open {
  connect(onMessage: (payload: string) => void, track: (conn: Redis) => void): Promise<Redis>;
  leave(conn: Redis): Promise<unknown>;
}

/** On one server: a `duplicate()` of the client, SUBSCRIBE. */
function openSingle(client: Redis, channel: string): Open {
  return {
    async connect(onMessage, track) {
      const conn = client.duplicate({ ...DEDICATED, connectionName: wakeConnectionName(channel) });
      track(conn);
      conn.on('message', (_ch: string, payload: string) => onMessage(payload));
      await conn.connect();
      await conn.subscribe(channel);
      return conn;
    },
    leave: (conn) => conn.unsubscribe(channel),
  };
}

const REDIRECT = /^(?:MOVED|ASK) \d+ (.+):(\d+)$/;

/**
 * On a cluster: a plain connection to the master that owns the channel's slot (the store's slot),
 * SSUBSCRIBE. The first try goes to a node the cluster client knows; a keyed read of the channel's
 * name (EXISTS) answers MOVED on any other node, naming the owner.
 */
function openCluster(client: Cluster, channel: string): Open {
  let owner: Address | null = null;
  let turn = 0;
  const mapped = (a: Address): Address => {
    const natMap = client.options.natMap;
    const key = `${a.host}:${a.port}`;
    const m = typeof natMap === 'function' ? natMap(key) : natMap?.[key];
    return m ? { host: m.host, port: m.port } : a;
  };
  const candidates = (): Address[] => {
    const known: Address[] = client
      .nodes('master')
      .map((n) => ({ host: n.options.host ?? '127.0.0.1', port: n.options.port ?? 6379 }));
    const startup = (client as unknown as { startupNodes?: Array<Partial<Address> | string | number> })
      .startupNodes;
    for (const s of startup ?? []) {
      if (typeof s === 'object' && s.port) known.push({ host: s.host ?? '127.0.0.1', port: s.port });
    }
    return known;
  };
  const connect: Open['connect'] = async (onMessage, track) => {
    let target = owner;
    if (!target) {
      const all = candidates();
      if (all.length === 0) throw new Error("Cluster isn't ready: no node known to subscribe on");
      target = all[turn++ % all.length]!;
    }
    for (let hop = 0; ; hop++) {
      const conn = new Redis({
        ...client.options.redisOptions,
        ...target,
        ...DEDICATED,
        connectionName: wakeConnectionName(channel),
      });
      track(conn);
      conn.on('smessage', (_ch: string, payload: string) => onMessage(payload));
      // ioredis swallows a MOVED reply to SSUBSCRIBE (the call never settles): drop the connection,
      // which fails the call, and try again.
      conn.on('moved', () => conn.disconnect());
      try {
        await conn.connect();
        // Does this node hold the channel's slot? If not, the MOVED reply names the one that does.
        await conn.exists(channel);
        await conn.ssubscribe(channel);
        owner = target;
        return conn;
      } catch (e) {
        conn.disconnect();
        owner = null; // a failed try asks another node next time (the owner may have failed over)
        const moved = e instanceof Error ? REDIRECT.exec(e.message) : null;
        if (!moved || hop >= 3) throw e;
        target = mapped({ host: moved[1]!, port: Number(moved[2]) });
      }
    }
  };
  return { connect, leave: (conn) => conn.sunsubscribe(channel) };
}

/** Calls a listener method; a listener that throws must not end the subscription. */
function notify(call: () => void): void {
  try {
    call();
  } catch {
    // The listener's failure is its own: hints are advisory and polling stays the source of truth.
  }
}

/** One subscription: a connection, and a reconnect loop with backoff once it breaks. */
function subscription(open: Open, listener: WakeListener): { start(): Promise<void> } & WakeSubscription {
  let conn: Redis | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  let tries = 0;
  let lastError: unknown;

  const onMessage = (payload: string) => {
    const hint = parseHint(payload);
    if (hint && !closed) notify(() => listener.wake(hint));
  };
  const track = (c: Redis) => {
    conn = c;
    c.on('error', (e: unknown) => {
      lastError = e;
    });
  };
  const connect = async () => {
    const c = await open.connect(onMessage, track);
    // Broken between the SUBSCRIBE reply and here, or closed by the caller meanwhile.
    if (closed || c.status !== 'ready') {
      c.disconnect();
      throw lastError ?? new Error('Connection is closed.');
    }
    c.once('close', () => {
      if (closed || conn !== c) return;
      conn = null;
      const error = lastError ?? new Error('Connection is closed.');
      notify(() => listener.lost?.(error));
      retry();
    });
  };
  const retry = () => {
    const delay = backoffDelay(WAKE_BACKOFF, tries);
    tries += 1;
    timer = setTimeout(() => {
      lastError = undefined;
      connect().then(
        () => {
          tries = 0;
          if (!closed) notify(() => listener.restored?.());
        },
        () => {
          if (closed) return;
          conn?.disconnect();
          retry();
        },
      );
    }, delay);
  };

  return {
    async start() {
      try {
        await connect();
      } catch (e) {
        conn?.disconnect();
        throw e;
      }
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      const c = conn;
      conn = null;
      if (!c) return;
      if (c.status !== 'ready') {
        c.disconnect();
        return;
      }
      // Unsubscribe and QUIT; a connection that breaks meanwhile is simply dropped.
      await open
        .leave(c)
        .then(() => c.quit())
        .catch(() => c.disconnect());
    },
  };
}

/** The store's {@link WakeSource}: each `subscribe` opens its own connection; `closeAll` ends them all. */
export function createWakeSource(
  client: Redis | Cluster,
  route: HintRoute,
): WakeSource & { closeAll(): Promise<void> } {
  // defineStore passes a wake source through as it is: a subscribe that cannot connect is
  // STORE_UNAVAILABLE here.
  const guard = storeGuard('redis', isUnavailable);
  const open = client.isCluster
    ? openCluster(client as Cluster, route.channel)
    : openSingle(client as Redis, route.channel);
  const live = new Set<WakeSubscription>();
  return {
    async subscribe(listener) {
      const sub = subscription(open, listener);
      await guard('wakes.subscribe', () => sub.start());
      const handle: WakeSubscription = {
        async close() {
          live.delete(handle);
          await sub.close();
        },
      };
      live.add(handle);
      return handle;
    },
    async closeAll() {
      await Promise.all([...live].map((s) => s.close()));
    },
  };
}
