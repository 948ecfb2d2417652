// A bench worker process (forked by fleet.ts): a runner and a `createWorker` over one store
// (PostgreSQL unless BENCH_STORE names another: child-stores.ts), driven by the parent over IPC.
// `run` keeps `concurrency` workflows in flight (linear ones unless told otherwise) and reports
// what it wrote; `raw` and `rawflow` run the adapter's writes by hand from as many clients (the
// physical limit); a `hit` handler reports wake latencies; `queries` counts the polls' queries
// (listDue, claimDue, the inbox claim). With BENCH_COMPOSITION=1 it also runs the map and child
// workflows of trees.ts, whose ends may be written by any process's worker (a child's end reaches
// its parent through the parent's inbox): each process tells the parent process of the ends it
// wrote, which passes them on to the others.
import {
  createRunner,
  createWorker,
  isTerminal,
  type Snapshot,
  type Store,
  snapshotBytes,
  step,
} from '@stepfold/engine';
import { wallMs } from '../peers/common.js';
import { FLOW_WORKFLOWS, LINEAR_STEPS, linear10, linearChain, noop } from '../workflows.js';
import { openChildStore, type RawRow, type StoreKind } from './child-stores.js';
import { signalProbe, timerProbe } from './probes.js';
import { PARENTS, TREE_WORKFLOWS } from './trees.js';

/** A command from the parent. */
export type ChildCommand =
  | {
      cmd: 'run';
      count: number;
      tag: string;
      /** Default `bench-linear`. */
      workflow?: string;
      /** Each instance's input is `{ items: [0, 1, …, items - 1] }` (default `{ orderId }`). */
      items?: number;
      /** Record the largest snapshot JSON each instance of `workflow` wrote (costs a stringify per write). */
      bytes?: boolean;
      /** Each instance's input also has `key: 'k-<n mod keys>'` (the flow-limited workflow's key). */
      keys?: number;
    }
  | { cmd: 'ended'; id: string; status: string }
  | { cmd: 'raw'; ms: number; snapshot: Snapshot }
  | { cmd: 'rawflow'; ms: number; through?: Layer }
  | { cmd: 'queries' }
  | { cmd: 'stop' };

/**
 * What the writes of a `rawflow` go through: the driver by hand (the -limit rows' baseline), the
 * adapter (its create and save, with the reducer's snapshots made beforehand), or the reducer and
 * the adapter (each event reduced, then saved): how far the runner's own share of a write is from
 * the layers under it.
 */
export type Layer = 'driver' | 'adapter' | 'reducer';

/** A reply to the parent. */
export type ChildReply =
  | { type: 'ready' }
  | {
      type: 'ran';
      workflows: number;
      writes: number;
      seconds: number;
      cpuMs: number;
      /** With `bytes`: the largest snapshot of the workflow run, UTF-8 bytes of its JSON. */
      maxBytes?: number;
      /** Writes that lost a race and were applied again. */
      conflicts: number;
      /** Statements the store's pool sent (PostgreSQL); voluntary and involuntary context switches of the process. */
      sent?: number;
      switches: { voluntary: number; involuntary: number };
      /** Of `cpuMs`, in the kernel. */
      systemMs: number;
    }
  | { type: 'ended'; id: string; status: string }
  | { type: 'raw'; updates: number; seconds: number; cpuMs: number }
  | { type: 'queries'; listDue: number }
  | { type: 'hit'; ms: number; id: string }
  /** The `stamp` handler began (epoch ms), for the instance of `id` whose input's tenant is `key`, as flow holder `holder`. */
  | { type: 'began'; at: number; id: string; key: string; holder: string }
  /** The store's flow granted `holder` at `at` (the time a rate limit counts its start at). */
  | { type: 'granted'; holder: string; at: number };

const send = (m: ChildReply) => process.send!(m);
const concurrency = Number(process.env['BENCH_CONCURRENCY'] ?? 2);
const kind = (process.env['BENCH_STORE'] ?? 'postgres') as StoreKind;
const db = await openChildStore({
  kind,
  url: process.env['BENCH_STORE_URL'] ?? '',
  table: process.env['BENCH_TABLE'] ?? 'instances',
  groupCommit: process.env['BENCH_GROUP_COMMIT'] === '1',
  concurrency,
});
const inner = db.store;
// Every query a poll makes: listDue, claimDue (each lane, and notices' ids) and the inbox's claim (its lane).
let listDue = 0;
const claims = inner.claims;
const inbox = inner.inbox;
const innerFlow = inner.flow;
const store: Store = Object.assign(Object.create(inner) as Store, {
  listDue(...a: Parameters<Store['listDue']>) {
    listDue++;
    return inner.listDue(...a);
  },
  ...(claims && {
    claims: {
      ...claims,
      claimDue(...a: Parameters<typeof claims.claimDue>) {
        listDue++;
        return claims.claimDue(...a);
      },
    },
  }),
  // Grants reported to the parent when asked: flow-rate-accuracy counts a start at its grant, as the store does
  // (a holder taken with a save is granted when the save is written).
  ...(innerFlow &&
    process.env['BENCH_FLOW_GRANTS'] === '1' && {
      async save(...a: Parameters<Store['save']>) {
        await inner.save(...a);
        const flow = a[2]?.flow;
        if (flow?.take) send({ type: 'granted', holder: flow.take.holder, at: flow.now });
      },
      flow: {
        inSave: innerFlow.inSave,
        async acquire(...a: Parameters<typeof innerFlow.acquire>) {
          const g = await innerFlow.acquire(...a);
          if (g.granted) send({ type: 'granted', holder: a[0], at: a[3] });
          return g;
        },
        release: (...a: Parameters<typeof innerFlow.release>) => innerFlow.release(...a),
        renew: (...a: Parameters<typeof innerFlow.renew>) => innerFlow.renew(...a),
        list: (...a: Parameters<typeof innerFlow.list>) => innerFlow.list(...a),
      },
    }),
  ...(inbox && {
    inbox: {
      ...inbox,
      claim(...a: Parameters<typeof inbox.claim>) {
        listDue++;
        return inbox.claim(...a);
      },
    },
  }),
});
await inner.setup();
// Instances `run` started on a store other than PostgreSQL (a shared server): deleted at `stop`.
const started: string[] = [];

const composition = process.env['BENCH_COMPOSITION'] === '1';
// With BENCH_FLOW=1 the flow rows' workflows (flow limits, fairness) run too.
const flow = process.env['BENCH_FLOW'] === '1';
const engine = await import('@stepfold/engine');
const kinds = [...(composition ? [engine.composition] : []), ...(flow ? [engine.flowControl] : [])];

// Ends of parent workflows (trees.ts), written here or reported by another process, until a
// `run` waiting for them takes them; and those waiting.
const ended = new Map<string, string>();
const waiting = new Map<string, (status: string) => void>();
const endOf = (id: string, status: string) => {
  const w = waiting.get(id);
  if (w) {
    waiting.delete(id);
    w(status);
  } else ended.set(id, status);
};
// The largest snapshot written per workflow name, while a `run` with `bytes` measures.
let measuring: string | undefined;
let maxBytes = 0;

const runner = createRunner({
  store,
  workflows: [
    linear10,
    signalProbe,
    timerProbe,
    ...(composition ? TREE_WORKFLOWS : []),
    ...(flow ? FLOW_WORKFLOWS : []),
  ],
  kinds,
  // A fixed key: the bench measures the cost of encrypting, not its secrecy.
  ...(process.env['BENCH_CODEC'] === '1' && {
    codec: engine.aesGcmCodec({ keys: { bench: new Uint8Array(32) } }),
  }),
  ...(composition && {
    onWritten(s: Snapshot) {
      if (s.workflow.name === measuring) maxBytes = Math.max(maxBytes, snapshotBytes(JSON.stringify(s)));
      if (isTerminal(s.status) && PARENTS.has(s.workflow.name)) {
        endOf(s.id, s.status);
        send({ type: 'ended', id: s.id, status: s.status });
      }
    },
  }),
  handlers: {
    // The codec row's handlers return a small object (null, the e2e rows' output, is never encrypted).
    noop: process.env['BENCH_OUTPUTS'] === '1' ? ({ attempt }) => ({ ok: true, attempt }) : noop,
    hit: ({ input, instanceId }) => {
      send({ type: 'hit', ms: wallMs() - (input as { sentAt: number }).sentAt, id: instanceId });
      return null;
    },
    stamp: async ({ input, instanceId, idempotencyKey, phase, attempt }) => {
      const { tenant, workMs } = input as { tenant: string; workMs?: number };
      const holder = `${idempotencyKey}#${phase}#${attempt}`;
      send({ type: 'began', at: Date.now(), id: instanceId, key: tenant, holder });
      if (workMs) await new Promise((r) => setTimeout(r, workMs));
      return null;
    },
  },
});
// A map's items use the slots up to its maxConcurrency; the drivers' in-flight count is `concurrency`.
const slots = Number(process.env['BENCH_SLOTS'] ?? 0);
const worker = createWorker({ runner, concurrency: Math.max(concurrency, 4, slots) });
await worker.start();

/** Resolves with the final status of `id` (a parent of trees.ts) once it has ended, here or in another process. */
function ending(id: string): Promise<string> {
  const status = ended.get(id);
  if (status === undefined) return new Promise((resolve) => waiting.set(id, resolve));
  ended.delete(id);
  return Promise.resolve(status);
}

/** Keeps `concurrency` workflows in flight until `count` have completed. */
async function run(m: Extract<ChildCommand, { cmd: 'run' }>): Promise<ChildReply> {
  const { count, tag } = m;
  const workflow = m.workflow ?? 'bench-linear';
  const items = m.items === undefined ? undefined : Array.from({ length: m.items }, (_, i) => i);
  measuring = m.bytes ? workflow : undefined;
  maxBytes = 0;
  ended.clear(); // ends of earlier runs' instances that other processes passed on
  const before = runner.stats.writes;
  const conflicts = runner.stats.conflicts;
  const cpu = process.cpuUsage();
  const usage = process.resourceUsage();
  const sent = db.sent?.();
  let left = count;
  let seq = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (left > 0) {
        left--;
        const id = `${tag}-${seq++}`;
        if (kind !== 'postgres') started.push(id);
        const input = items
          ? { items }
          : m.keys
            ? { orderId: seq, key: `k-${seq % m.keys}` }
            : { orderId: seq };
        const s = await runner.start(workflow, id, input);
        // A parent whose last child's end went through its inbox is ended by a worker, maybe not this call.
        let status: string = s.status;
        if (!isTerminal(s.status) && PARENTS.has(workflow)) status = await ending(id);
        else ended.delete(id);
        if (status !== 'completed') throw new Error(`${s.id} ended ${status}`);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000;
  const usage1 = process.resourceUsage();
  const sent1 = db.sent?.();
  measuring = undefined;
  return {
    type: 'ran',
    workflows: count,
    writes: runner.stats.writes - before,
    seconds,
    cpuMs,
    conflicts: runner.stats.conflicts - conflicts,
    ...(sent1 === undefined ? {} : { sent: sent1 - sent! }),
    systemMs: (usage1.systemCPUTime - usage.systemCPUTime) / 1000,
    switches: {
      voluntary: usage1.voluntaryContextSwitches - usage.voluntaryContextSwitches,
      involuntary: usage1.involuntaryContextSwitches - usage.involuntaryContextSwitches,
    },
    ...(m.bytes ? { maxBytes } : {}),
  };
}

/** The row the adapter writes for `s` (as the store kit encodes it), with the wake time given. */
function rowOf(s: Snapshot, json: string, wakeAt: number | null): RawRow {
  const wf = s.workflow;
  return {
    id: s.id,
    version: s.version,
    status: s.status,
    workflow: wf.name,
    definition: `${wf.name}@${wf.version}@${wf.hash}`,
    wakeAt,
    json,
  };
}

/** The adapter's save by hand, from `concurrency` clients, each on its own row. */
async function raw(ms: number, base: Snapshot): Promise<ChildReply> {
  const rows = await Promise.all(
    Array.from({ length: concurrency }, async (_, k) => {
      const s: Snapshot = { ...base, id: `${base.id}-${process.pid}-${k}`, version: 1 };
      await inner.delete(s.id);
      // Created by hand with no wake time, as the updates write it: the snapshot's own (a running
      // task's lease, long past) would put the row in the due order, and this process's idle
      // worker could claim and tick it before the first update (which then matches nothing).
      await db.insert(rowOf(s, JSON.stringify(s), null));
      return s;
    }),
  );
  let updates = 0;
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + ms;
  await Promise.all(
    rows.map(async (s0) => {
      let s = s0;
      while (performance.now() < end) {
        const next = { ...s, version: s.version + 1 };
        // No wake time indexed, as before: the row stays out of the due index.
        await db.update(rowOf(next, JSON.stringify(next), null), s.version);
        s = next;
        updates++;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu);
  for (const s of rows) await inner.delete(s.id);
  return { type: 'raw', updates, seconds, cpuMs: (used.user + used.system) / 1000 };
}

/**
 * The same writes a workflow of `run` makes, without the runner: per workflow a create and then
 * ten conditional saves, from `concurrency` clients. Through the driver (default), each is the
 * adapter's request by hand, with the snapshots the reducer produces for it (serialized per write,
 * as the store does) and the wake times the store would index; through the adapter, its create and
 * save with those snapshots; through the reducer, each event reduced and then saved by the adapter.
 */
async function rawFlow(ms: number, through: Layer): Promise<ChildReply> {
  const chain = linearChain('rawflow-template');
  const t0s = chain[0]!.createdAt;
  const prefix = `rawflow-${process.pid}-${Date.now().toString(36)}-`;
  const ids: string[] = [];
  let updates = 0;
  const one = async (id: string) => {
    if (through === 'reducer') {
      let s = step(linear10, null, { type: 'start', at: Date.now(), id, input: { orderId: 1 } });
      await inner.create(s);
      for (const name of LINEAR_STEPS) {
        const next = step(linear10, s, {
          type: 'task.completed',
          at: Date.now(),
          step: name,
          attempt: 1,
          output: null,
        });
        await inner.save(next, s.version);
        s = next;
      }
      updates += LINEAR_STEPS.length + 1;
      return;
    }
    const now = Date.now();
    for (const s of chain) {
      if (through === 'adapter') {
        // Its wake time moved to this workflow's start, as the driver's rows' are: the chain's own
        // (a running task's lease from when the chain was made) passes during a long layer, and an
        // idle worker on the same table would then claim the row and race these saves.
        const mine = { ...s, id, wakeAt: s.wakeAt === null ? null : s.wakeAt - t0s + now };
        if (s.version === 1) await inner.create(mine);
        else await inner.save(mine, s.version - 1);
      } else {
        // A running task's deadline, indexed rounded up to the second as the store kit does.
        const wake = s.wakeAt === null ? null : Math.ceil((s.wakeAt - t0s + now) / 1000) * 1000;
        const row = rowOf(s, JSON.stringify({ ...s, id }), wake);
        row.id = id;
        if (s.version === 1) await db.insert(row);
        else await db.update(row, s.version - 1);
      }
      updates++;
    }
  };
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + ms;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, k) => {
      for (let n = 0; performance.now() < end; n++) {
        const id = `${prefix}${k}-${n}`;
        ids.push(id);
        await one(id);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu);
  await db.removeRaw(prefix, ids);
  return { type: 'raw', updates, seconds, cpuMs: (used.user + used.system) / 1000 };
}

process.on('message', (m: ChildCommand) => {
  const reply = (p: Promise<ChildReply>) =>
    p.then(send, (e) => {
      console.error(e);
      process.exit(1);
    });
  if (m.cmd === 'run') reply(run(m));
  else if (m.cmd === 'ended') endOf(m.id, m.status);
  else if (m.cmd === 'raw') reply(raw(m.ms, m.snapshot));
  else if (m.cmd === 'rawflow') reply(rawFlow(m.ms, m.through ?? 'driver'));
  else if (m.cmd === 'queries') reply(Promise.resolve({ type: 'queries', listDue }));
  else if (m.cmd === 'stop') {
    void worker
      .stop({ graceMs: 5_000 })
      .then(async () => {
        for (let i = 0; i < started.length; i += 50)
          await Promise.all(started.slice(i, i + 50).map((id) => inner.delete(id).catch(() => false)));
      })
      .then(() => db.close())
      .then(() => process.exit(0));
  }
});
send({ type: 'ready' });
