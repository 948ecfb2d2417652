import type { PgNotification, PgPool, PgPoolClient } from './setup.js';

// What stream tails wait on: one LISTEN connection per store object, taken from the pool at the
// first wait and held until the store closes, whose notices (an instance id per append) wake the
// tails of that instance. A lost connection wakes every tail (each reads again) and the next wait
// connects anew.

/** The tails' waits over one listening connection. */
export interface StreamNotices {
  /** Resolves once the stream of `instance` holds an entry at `next` or later, after `ms`, or on abort. */
  wait(instance: string, next: number, ms: number, signal?: AbortSignal): Promise<void>;
  /** Ends the listening connection (the store's `close`). */
  close(): Promise<void>;
}

/** Notices of appends on `channel`; `headNext` reads the offset after a stream's last entry. */
export function pgStreamNotices(
  pool: PgPool,
  channel: string,
  headNext: (instance: string) => Promise<number>,
): StreamNotices {
  const waiting = new Map<string, Set<() => void>>();
  let closed = false;

  const wakeAll = () => {
    for (const set of waiting.values()) for (const w of [...set]) w();
  };

  /** A listening connection, and how to give it back once (destroyed after a failure). */
  interface Held {
    client: PgPoolClient;
    drop(error?: Error): void;
  }
  let listening: Promise<Held> | null = null;

  const connect = async (): Promise<Held> => {
    const client = await pool.connect();
    const current = listening;
    let gone = false;
    const onNotification = (m: PgNotification) => {
      if (m.channel !== channel || m.payload === undefined) return;
      for (const w of [...(waiting.get(m.payload) ?? [])]) w();
    };
    const drop = (error?: Error) => {
      if (gone) return;
      gone = true;
      client.removeListener('notification', onNotification);
      client.removeListener('error', onError);
      client.removeListener('end', onEnd);
      client.release(error ?? false);
    };
    const lose = (error: Error) => {
      if (gone) return;
      drop(error);
      if (listening === current) listening = null;
      wakeAll();
    };
    const onError = (e: Error) => lose(e);
    const onEnd = () => lose(new Error('Connection terminated'));
    client.on('notification', onNotification);
    client.on('error', onError);
    client.on('end', onEnd);
    try {
      await client.query(`LISTEN "${channel}"`);
    } catch (e) {
      lose(e instanceof Error ? e : new Error(String(e)));
      throw e;
    }
    return { client, drop };
  };

  const listen = (): Promise<Held> => {
    if (!listening) {
      const attempt = connect();
      listening = attempt;
      attempt.catch(() => {
        if (listening === attempt) listening = null;
      });
    }
    return listening;
  };

  return {
    async wait(instance, next, ms, signal) {
      if (closed || signal?.aborted) return;
      await listen();
      await new Promise<void>((resolve) => {
        let set = waiting.get(instance);
        if (!set) {
          set = new Set();
          waiting.set(instance, set);
        }
        const mine = set;
        const done = () => {
          clearTimeout(timer);
          mine.delete(done);
          if (!mine.size && waiting.get(instance) === mine) waiting.delete(instance);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        mine.add(done);
        signal?.addEventListener('abort', done, { once: true });
        // Listening now: an append committed before this read is seen by it, any later one notified.
        headNext(instance).then(
          (end) => {
            if (end > next) done();
          },
          () => done(),
        );
      });
    },
    async close() {
      closed = true;
      const held = listening;
      listening = null;
      wakeAll();
      if (!held) return;
      const h = await held.catch(() => null);
      if (!h) return;
      try {
        await h.client.query(`UNLISTEN "${channel}"`);
        h.drop();
      } catch (e) {
        h.drop(e instanceof Error ? e : new Error(String(e)));
      }
    },
  };
}
