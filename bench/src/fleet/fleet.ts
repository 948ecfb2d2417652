import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { Snapshot } from '@stepfold/engine';
import type { ChildCommand, ChildReply, Layer } from './child.js';
import type { StoreKind } from './child-stores.js';

// The parent side of the bench's worker processes: forks `processes` copies of child.ts over one
// PostgreSQL database (or another store: child-stores.ts) and drives them over IPC. Rounds run on every child at once and are timed
// here, from the first command sent to the last reply.

const CHILD = fileURLToPath(new URL('./child.js', import.meta.url));

/** One batch of workflows across every process. */
export interface FleetRun {
  workflowsPerSec: number;
  writesPerSec: number;
  seconds: number;
  /** CPU of the worker processes per write, µs. */
  cpuUsPerWrite: number;
  /** With `bytes`: the largest snapshot JSON an instance of the workflow wrote, UTF-8 bytes. */
  maxBytes?: number;
  /** Writes that lost a race and were applied again. */
  conflicts: number;
  /**
   * Per workflow: worker CPU µs (of which in the kernel), statements sent (PostgreSQL), voluntary
   * context switches (the event loop's sleeps) and involuntary ones (preempted).
   */
  perWorkflow: { cpuUs: number; systemUs: number; statements?: number; sleeps: number; preempted: number };
}

/** What a {@link Fleet.run} runs: another workflow than the linear one, its input, what to record. */
export interface RunOptions {
  workflow?: string;
  /** Each instance's input is `{ items: [0, …, items - 1] }`. */
  items?: number;
  /** Record the largest snapshot written (a JSON.stringify per write: not for timed rounds). */
  bytes?: boolean;
  /** Each instance's input also has `key: 'k-<n mod keys>'` (the flow-limited workflow's key). */
  keys?: number;
}

/** Worker processes ready for commands. */
export interface Fleet {
  readonly processes: number;
  /**
   * Runs `count` workflows split across the processes (the first ones take the remainder: a count
   * of 1 runs in the first process alone); each keeps its `concurrency` in flight.
   */
  run(count: number, tag: string, options?: RunOptions): Promise<FleetRun>;
  /**
   * Raw conditional saves/s from every process at once, each with `concurrency` clients (and their
   * CPU µs per update): of `snapshot` over and over, else a linear workflow's writes through `through`.
   */
  raw(ms: number, snapshot?: Snapshot, through?: Layer): Promise<{ perSec: number; cpuUsPerWrite: number }>;
  /** listDue calls each process has made so far. */
  queries(): Promise<number[]>;
  /** Latencies the `hit` handler reports, in arrival order (any process). */
  onHit(listener: (ms: number, id: string) => void): void;
  /** Starts the `stamp` handler reports (epoch ms, instance, its tenant, its flow holder), in arrival order (any process). */
  onBegan(listener: (at: number, id: string, key: string, holder: string) => void): void;
  /** Grants of the store's flow (holder, the time counted), with `flow`, in arrival order (any process). */
  onGranted(listener: (holder: string, at: number) => void): void;
  stop(): Promise<void>;
}

/** Forks the processes and waits until each has its store set up and its worker started. */
export async function startFleet(o: {
  /** The PostgreSQL database's URL (the store unless `store` names another). */
  pgUrl?: string;
  /** Another store than PostgreSQL, and its server's URL or endpoint. */
  store?: { kind: Exclude<StoreKind, 'postgres'>; url: string };
  processes: number;
  concurrency: number;
  table?: string;
  /** The store's `groupCommit` option (default false). */
  groupCommit?: boolean;
  /** Pass `kinds: [composition]` and register the map and child workflows (trees.ts). */
  composition?: boolean;
  /** Runners with an AES-GCM codec (the codec-overhead row). */
  codec?: boolean;
  /** Handlers return a small object instead of null, so each step's output is a value to store (and encrypt). */
  outputs?: boolean;
  /** Pass `flowControl` and register the flow rows' workflows (workflows.ts). */
  flow?: boolean;
  /**
   * Report the store's flow grants (`onGranted`): one IPC message per grant, a cost of the bench's
   * own in the worker, so only the row that reads them asks.
   */
  grants?: boolean;
  /**
   * Handler slots of each process's worker (default `concurrency`, at least 4). The drivers keep
   * `concurrency` workflows in flight whatever this is; a map uses the slots up to its `maxConcurrency`.
   */
  slots?: number;
}): Promise<Fleet> {
  const hits = new Set<(ms: number, id: string) => void>();
  const began = new Set<(at: number, id: string, key: string, holder: string) => void>();
  const granted = new Set<(holder: string, at: number) => void>();
  const children: ChildProcess[] = [];
  type Waiter = { resolve(r: ChildReply): void; reject(e: Error): void };
  const pending = new Map<ChildProcess, Waiter[]>();
  for (let i = 0; i < o.processes; i++) {
    const child = fork(CHILD, [], {
      env: {
        ...process.env,
        BENCH_STORE: o.store?.kind ?? 'postgres',
        BENCH_STORE_URL: o.store?.url ?? o.pgUrl ?? '',
        BENCH_CONCURRENCY: String(o.concurrency),
        BENCH_TABLE: o.table ?? 'instances',
        BENCH_GROUP_COMMIT: o.groupCommit ? '1' : '0',
        BENCH_COMPOSITION: o.composition ? '1' : '0',
        BENCH_FLOW: o.flow ? '1' : '0',
        BENCH_FLOW_GRANTS: o.grants ? '1' : '0',
        BENCH_CODEC: o.codec ? '1' : '0',
        BENCH_OUTPUTS: o.outputs ? '1' : '0',
        BENCH_SLOTS: String(o.slots ?? 0),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // e.g. BENCH_CHILD_ARGV="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the workers.
      execArgv: process.env['BENCH_CHILD_ARGV'] ? process.env['BENCH_CHILD_ARGV'].split(' ') : [],
    });
    pending.set(child, []);
    child.on('message', (r: ChildReply) => {
      if (r.type === 'hit') for (const h of hits) h(r.ms, r.id);
      else if (r.type === 'began') for (const b of began) b(r.at, r.id, r.key, r.holder);
      else if (r.type === 'granted') for (const g of granted) g(r.holder, r.at);
      else if (r.type === 'ended') {
        // A parent's end written here may be awaited by the process that started it.
        for (const c of children) if (c !== child) c.send({ cmd: 'ended', id: r.id, status: r.status });
      } else pending.get(child)!.shift()?.resolve(r);
    });
    child.on('exit', (code) => {
      for (const w of pending.get(child)!.splice(0))
        w.reject(new Error(`bench worker ${child.pid} exited (${code})`));
    });
    children.push(child);
  }
  const ask = (c: ChildProcess, m: ChildCommand) =>
    new Promise<ChildReply>((resolve, reject) => {
      pending.get(c)!.push({ resolve, reject });
      c.send(m);
    });
  await Promise.all(
    children.map(
      (c) => new Promise<ChildReply>((resolve, reject) => pending.get(c)!.push({ resolve, reject })),
    ),
  );
  return {
    processes: o.processes,
    async run(count, tag, options = {}) {
      const base = Math.floor(count / children.length);
      const extra = count % children.length;
      const t0 = performance.now();
      const replies = await Promise.all(
        children.flatMap((c, i) => {
          const n = base + (i < extra ? 1 : 0);
          return n === 0 ? [] : [ask(c, { cmd: 'run', count: n, tag: `${tag}-${i}`, ...options })];
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      let workflows = 0;
      let writes = 0;
      let cpuMs = 0;
      let maxBytes: number | undefined;
      let conflicts = 0;
      let sent: number | undefined;
      let sleeps = 0;
      let preempted = 0;
      let systemMs = 0;
      for (const r of replies) {
        if (r.type !== 'ran') throw new Error(`unexpected reply ${r.type}`);
        workflows += r.workflows;
        writes += r.writes;
        cpuMs += r.cpuMs;
        conflicts += r.conflicts;
        if (r.sent !== undefined) sent = (sent ?? 0) + r.sent;
        sleeps += r.switches.voluntary;
        preempted += r.switches.involuntary;
        systemMs += r.systemMs;
        if (r.maxBytes !== undefined) maxBytes = Math.max(maxBytes ?? 0, r.maxBytes);
      }
      return {
        workflowsPerSec: workflows / seconds,
        writesPerSec: writes / seconds,
        seconds,
        cpuUsPerWrite: (cpuMs * 1000) / writes,
        conflicts,
        perWorkflow: {
          cpuUs: (cpuMs * 1000) / workflows,
          systemUs: (systemMs * 1000) / workflows,
          ...(sent === undefined ? {} : { statements: sent / workflows }),
          sleeps: sleeps / workflows,
          preempted: preempted / workflows,
        },
        ...(maxBytes === undefined ? {} : { maxBytes }),
      };
    },
    async raw(ms, snapshot, through) {
      const replies = await Promise.all(
        children.map((c) =>
          ask(
            c,
            snapshot ? { cmd: 'raw', ms, snapshot } : { cmd: 'rawflow', ms, ...(through ? { through } : {}) },
          ),
        ),
      );
      let perSec = 0;
      let updates = 0;
      let cpuMs = 0;
      for (const r of replies) {
        if (r.type !== 'raw') throw new Error(`unexpected reply ${r.type}`);
        perSec += r.updates / r.seconds;
        updates += r.updates;
        cpuMs += r.cpuMs;
      }
      return { perSec, cpuUsPerWrite: (cpuMs * 1000) / updates };
    },
    async queries() {
      const replies = await Promise.all(children.map((c) => ask(c, { cmd: 'queries' })));
      return replies.map((r) => (r.type === 'queries' ? r.listDue : Number.NaN));
    },
    onHit(listener) {
      hits.add(listener);
    },
    onBegan(listener) {
      began.add(listener);
    },
    onGranted(listener) {
      granted.add(listener);
    },
    async stop() {
      await Promise.all(
        children.map(async (c) => {
          if (c.exitCode !== null) return;
          c.send({ cmd: 'stop' } satisfies ChildCommand);
          const t = setTimeout(() => c.kill('SIGKILL'), 15_000);
          await once(c, 'exit');
          clearTimeout(t);
        }),
      );
    },
  };
}
