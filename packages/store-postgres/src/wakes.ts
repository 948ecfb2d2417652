import {
  type Backoff,
  backoffDelay,
  OUTAGE_BACKOFF,
  parseWakePayload,
  StoreUnavailableError,
  snapshotBytes,
  type WakeListener,
  type WakeNotice,
  type WakeSource,
  type WakeSubscription,
} from '@stepfold/engine';
import type { PgNotification, PgPool, PgPoolClient } from './setup.js';

/** Reconnect delays of a lost wake subscription (the engine's one retry schedule). */
export type WakeBackoff = Backoff;

/** Default reconnect delays: the engine's outage schedule, 100 ms doubling to 5 s, ±20%. */
export const WAKE_BACKOFF: WakeBackoff = OUTAGE_BACKOFF;

/**
 * The NOTIFY channel of one instance table: `stepfold_` and 16 hex digits of a 64-bit FNV-1a hash
 * of `schema.table`. A plain identifier of 25 bytes whatever the names' lengths; distinct tables
 * get distinct channels (the `.` cannot occur in either name).
 */
export function wakeChannel(schema: string, table: string): string {
  const key = `${schema}.${table}`;
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < key.length; i++) {
    h ^= BigInt(key.charCodeAt(i));
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return `stepfold_${h.toString(16).padStart(16, '0')}`;
}

// NOTIFY refuses a payload of 8000 bytes or more (the default build's limit).
const MAX_PAYLOAD_BYTES = 7999;

/**
 * A notice's payload, `{"at":<ms>,"w":"<workflow>","i":"<id>"}` (with `"b":1` for a busy notice:
 * a timer while a task runs), and `"s":<snapshot JSON>` after
 * them when `json` is given (a write that hands a task to any worker) and the whole still fits
 * NOTIFY's limit; a larger snapshot goes without, and the worker claims the instance by id. `at` is
 * finite, so `String` gives its JSON; workflow names and ids are valid ids (no `"` or `\`, at most
 * 200 characters), so the payload without the snapshot stays far below the limit.
 */
export function wakePayload(
  at: number,
  workflow: string,
  id?: string,
  json?: string,
  busy?: boolean,
): string {
  if (id === undefined) return `{"at":${at},"w":"${workflow}"}`;
  const bare = `{"at":${at},"w":"${workflow}","i":"${id}"${busy ? ',"b":1' : ''}}`;
  if (json === undefined) return bare;
  const full = `${bare.slice(0, -1)},"s":${json}}`;
  // A UTF-16 unit is at most 3 UTF-8 bytes: a short payload needs no count.
  return full.length * 3 <= MAX_PAYLOAD_BYTES || snapshotBytes(full) <= MAX_PAYLOAD_BYTES ? full : bare;
}

/** The hint of a NOTIFY payload, or null for anything that is not one of ours (anyone may NOTIFY the channel). */
export const parseWake: (payload: string | undefined) => WakeNotice | null = parseWakePayload;

/** One connection a subscription took from the pool, with its event handlers. */
interface Held {
  client: PgPoolClient;
  /** Set once the connection is being given back: its events no longer count. */
  gone: boolean;
  /** Set once it was released to the pool (which allows one release only). */
  released: boolean;
  detach(): void;
}

/**
 * Wake notices over LISTEN/NOTIFY. Each subscription holds one connection of `pool` for its whole
 * life (LISTEN is per session). When that connection fails, the listener hears `lost`, the
 * connection is destroyed, and new ones are tried with jittered exponential backoff until LISTEN
 * works again; then `restored`. Listener calls are made from a microtask, never inside the driver's
 * event handlers.
 */
export function pgWakeSource(
  pool: PgPool,
  channel: string,
  open: Set<WakeSubscription>,
  backoff: WakeBackoff = WAKE_BACKOFF,
): WakeSource {
  const listen = `LISTEN "${channel}"`;
  const unlisten = `UNLISTEN "${channel}"`;
  return {
    async subscribe(listener: WakeListener): Promise<WakeSubscription> {
      let current: Held | null = null;
      let closing: Promise<void> | null = null;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let reconnecting: Promise<void> | null = null;
      let attempt = 0;

      const call = (f: () => void) =>
        queueMicrotask(() => {
          if (closing === null) f();
        });

      // Gives a connection back, once: destroyed after a failure, else clean (caller ran UNLISTEN).
      const drop = (held: Held, failure?: Error) => {
        held.gone = true;
        if (held.released) return;
        held.released = true;
        held.detach();
        held.client.release(failure ?? false);
      };

      // The end of a connection nobody listens on any more: UNLISTEN, then back to the pool.
      const unlistenAndDrop = async (held: Held) => {
        held.gone = true; // a failure now is no loss to report
        try {
          await held.client.query(unlisten);
          drop(held);
        } catch (e) {
          drop(held, e instanceof Error ? e : new Error(String(e)));
        }
      };

      const lose = (held: Held, error: Error) => {
        if (held.gone) return;
        drop(held, error);
        if (held !== current) return; // still connecting: connect() sees `gone` and fails
        current = null;
        if (closing !== null) return;
        const cause = new StoreUnavailableError(`postgres wakes lost: ${error.message}`, error);
        call(() => listener.lost?.(cause));
        retry();
      };

      // A pool connection with our handlers attached and LISTEN done; destroyed again on failure.
      const connect = async (): Promise<Held> => {
        const client = await pool.connect();
        const onNotification = (m: PgNotification) => {
          if (m.channel !== channel) return;
          const hint = parseWake(m.payload);
          if (hint) call(() => listener.wake(hint));
        };
        const onError = (e: Error) => lose(held, e);
        const onEnd = () => lose(held, new Error('Connection terminated'));
        const held: Held = {
          client,
          gone: false,
          released: false,
          detach() {
            client.removeListener('notification', onNotification);
            client.removeListener('error', onError);
            client.removeListener('end', onEnd);
          },
        };
        client.on('notification', onNotification);
        client.on('error', onError);
        client.on('end', onEnd);
        try {
          await client.query(listen);
        } catch (e) {
          drop(held, e instanceof Error ? e : new Error(String(e)));
          throw e;
        }
        if (held.gone) throw new Error('Connection terminated while subscribing');
        return held;
      };

      const retry = () => {
        const delay = backoffDelay(backoff, attempt);
        attempt += 1;
        timer = setTimeout(() => {
          timer = undefined;
          reconnecting = connect().then(
            async (held) => {
              if (closing !== null) return unlistenAndDrop(held);
              current = held;
              attempt = 0;
              call(() => listener.restored?.());
            },
            () => {
              if (closing === null) retry();
            },
          );
          void reconnecting.finally(() => {
            reconnecting = null;
          });
        }, delay);
      };

      current = await connect().catch((e: unknown) => {
        const detail = e instanceof Error ? e.message : String(e);
        throw new StoreUnavailableError(`postgres wakes subscribe failed: ${detail}`, e);
      });

      const subscription: WakeSubscription = {
        close() {
          closing ??= (async () => {
            open.delete(subscription);
            clearTimeout(timer);
            await reconnecting;
            const held = current;
            current = null;
            if (held !== null && !held.gone) await unlistenAndDrop(held);
          })();
          return closing;
        },
      };
      open.add(subscription);
      return subscription;
    },
  };
}
