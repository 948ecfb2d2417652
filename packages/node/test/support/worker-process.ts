import { type ChildProcess, fork } from 'node:child_process';

// Worker processes for the tests that kill them: forked with an IPC channel (their output goes to
// the test's), waited for by the messages they send, SIGKILLed, or drained with 'stop'; a set of
// them is stopped in a test's `finally`, whatever state each is in.

/** An IPC message of a worker process. */
type Message = Record<string, unknown>;

/** A forked worker process. */
export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** True until the process exited. */
  readonly alive: boolean;
  /** The next message that has `key` (and passes `when`); rejects when the process exits first. */
  next<T>(key: string, when?: (m: T) => boolean): Promise<T>;
  /** The next `n` messages that have `key`; rejects when the process exits first. */
  collect<T>(key: string, n: number): Promise<T[]>;
  /** Calls `fn` with every later message that has `key`. */
  each<T>(key: string, fn: (m: T) => void): void;
  /** SIGKILLs the process; resolves once it exited. */
  kill(): Promise<void>;
  /** Sends 'stop' and resolves once it exited (SIGKILLed after `graceMs`); at once when it had. */
  stop(graceMs?: number): Promise<void>;
}

/** Forks `module` with `env` added to this process's environment. */
export function forkWorker(module: URL, env: Record<string, string>): WorkerProcess {
  const child = fork(module, [], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let alive = true;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      alive = false;
      resolve();
    }),
  );
  const listen = <T>(key: string, take: (m: T) => boolean, what: () => string): Promise<void> =>
    new Promise((resolve, reject) => {
      if (!alive) return reject(new Error(`worker process ${child.pid} had exited before ${what()}`));
      const onExit = (code: number | null, signal: string | null) =>
        reject(new Error(`worker process exited (${code ?? signal}) before ${what()}`));
      const on = (m: Message) => {
        if (!(key in m) || !take(m as T)) return;
        child.off('message', on);
        child.off('exit', onExit);
        resolve();
      };
      child.on('message', on);
      child.once('exit', onExit);
    });
  return {
    child,
    pid: child.pid!,
    get alive() {
      return alive;
    },
    async next<T>(key: string, when: (m: T) => boolean = () => true) {
      let got: T | undefined;
      await listen<T>(
        key,
        (m) => {
          if (!when(m)) return false;
          got = m;
          return true;
        },
        () => `sending ${key}`,
      );
      return got as T;
    },
    async collect<T>(key: string, n: number) {
      const into: T[] = [];
      await listen<T>(
        key,
        (m) => into.push(m) === n,
        () => `${into.length} of ${n} ${key} messages`,
      );
      return into;
    },
    each<T>(key: string, fn: (m: T) => void) {
      child.on('message', (m: Message) => {
        if (key in m) fn(m as T);
      });
    },
    async kill() {
      if (alive) child.kill('SIGKILL');
      await exited;
    },
    async stop(graceMs = 10_000) {
      if (!alive) return;
      child.send('stop');
      const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(t);
    },
  };
}

/** Worker processes of one test: each forked through it, all stopped by `stopAll`. */
export interface WorkerSet {
  /** Every process forked so far, in order. */
  readonly all: readonly WorkerProcess[];
  /** Forks `module` with `env` (see {@link forkWorker}). */
  fork(module: URL, env: Record<string, string>): WorkerProcess;
  /** Forks `module` and resolves once it sent `{ ready }`. */
  start(module: URL, env: Record<string, string>): Promise<WorkerProcess>;
  /** Drains every process still up (for a `finally`). */
  stopAll(): Promise<void>;
}

/** A new, empty set of worker processes. */
export function workerSet(): WorkerSet {
  const all: WorkerProcess[] = [];
  const set: WorkerSet = {
    all,
    fork(module, env) {
      const w = forkWorker(module, env);
      all.push(w);
      return w;
    },
    async start(module, env) {
      const w = set.fork(module, env);
      await w.next('ready');
      return w;
    },
    async stopAll() {
      await Promise.all(all.map((w) => w.stop()));
    },
  };
  return set;
}
