// @ts-check
// The agent workload's run on one store (`--workload agent`, agent-workload.mjs): worker processes
// (agent-worker.mjs) are SIGKILLed every few seconds and kill themselves in the crash windows,
// while the driver holds `instances` conversations: it sends each its first message (which starts
// it), its second once the first is answered, and waits for both answers. Then the oracles
// (agent-checks.mjs): both answers, the ledger, the streams, the token totals. Latency is a
// conversation's, from its first message to the second answer as the driver saw it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sendMessage } from '@stepfold/ai';
import { composition, createRunner } from '@stepfold/engine';
import { answeredBoth, checkLedger, checkStream, checkUsage, TOOL_WORKFLOW } from './agent-checks.mjs';
import { AGENT, agentWorkflow, messages, toolWorkflow } from './agent-workload.mjs';
import { inBatches, killWorkers, retrying, servingPid, startFleet } from './fleet.mjs';
import { percentile, secs as s1 } from './metrics.mjs';
import { LogTail } from './oracle-log.mjs';
import { listIds } from './oracles.mjs';
import { openStore, storeUrl } from './stores.mjs';

/** @typedef {import('@stepfold/engine').Snapshot} Snapshot */

/**
 * Runs `instances` conversations on store `kind` with kills (unless `kills` is false) and checks them.
 * @param {{ kind: import('./stores.mjs').StoreKind, instances: number, kills?: boolean, crashEvery?: number,
 *   budgetMs: number, killEveryMs?: [number, number], processes?: number, startsPerSecond?: number,
 *   maxInFlight?: number, claimMs?: number, progress?: (line: string) => void }} o
 */
export async function runAgentSoak(o) {
  const t0 = Date.now();
  const say = o.progress ?? (() => {});
  const ns = `soak_agent_${Date.now().toString(36)}_${process.pid}`;
  const logDir = mkdtempSync(join(tmpdir(), 'stepfold-soak-agent-'));
  const url = storeUrl(o.kind);
  const { store, close, drop } = openStore(o.kind, url, ns, o.claimMs);
  await retrying(() => store.setup());
  // The driver only writes events (messages): every task goes to the workers.
  const runner = createRunner({
    store,
    workflows: [agentWorkflow, toolWorkflow],
    kinds: [composition],
    handlers: {},
    execute: false,
  });
  const ids = Array.from({ length: o.instances }, (_, i) => `${o.kind}-agent-${i}`);
  const crashEvery = o.kills === false ? 0 : (o.crashEvery ?? 0);
  /** @type {Set<number>} */
  const killed = new Set();
  /** @type {Set<number>} */
  const serving = new Set();
  /** @type {Array<{ pid: number, how: string }>} exits the driver did not cause */
  const exits = [];
  const fleet = startFleet({
    module: new URL('./agent-worker.mjs', import.meta.url),
    run: o,
    url,
    ns,
    logDir,
    crashEvery,
    exit(index, pid, code, signal, expected) {
      if (!expected && !killed.has(pid))
        exits.push({ pid, how: `worker ${index} (pid ${pid}): ${String(signal ?? code)}` });
    },
  });
  const tail = new LogTail(logDir);
  /** @type {string[][]} */
  const records = [];
  const readLog = () => {
    for (const r of tail.read()) {
      records.push(r);
      const pid = servingPid(r);
      if (pid) serving.add(pid);
    }
  };

  /** @type {Map<string, number>} when each conversation's first message was sent */
  const sentAt = new Map();
  /** @type {Map<string, number>} when the driver saw each conversation answer both */
  const doneAt = new Map();
  /** @type {Set<string>} conversations sent their second message */
  const second = new Set();
  let running = true;
  const killer = killWorkers({
    fleet,
    serving,
    running: () => running,
    run: o,
    refresh: readLog,
    killing: (pid) => void killed.add(pid),
  });

  const pace = 1000 / (o.startsPerSecond ?? 20);
  let next = 0;
  let lastSay = 0;
  const deadline = t0 + o.budgetMs;
  try {
    while (doneAt.size < ids.length && Date.now() < deadline) {
      // Start conversations at the pace, at most maxInFlight unanswered at once.
      while (
        next < ids.length &&
        sentAt.size - doneAt.size < (o.maxInFlight ?? 50) &&
        Date.now() >= t0 + next * pace
      ) {
        const id = /** @type {string} */ (ids[next++]);
        await retrying(() => sendMessage(runner, AGENT, id, /** @type {any} */ (messages(id)[0])));
        sentAt.set(id, Date.now());
      }
      const open = [...sentAt.keys()].filter((id) => !doneAt.has(id));
      await inBatches(open, async (id) => {
        const s = await store.load(id).catch(() => null);
        if (answeredBoth(s)) doneAt.set(id, Date.now());
        else if (s && s.run >= 2 && !second.has(id)) {
          await retrying(() => sendMessage(runner, AGENT, id, /** @type {any} */ (messages(id)[1])));
          second.add(id);
        }
      });
      readLog();
      if (Date.now() - lastSay >= 3000) {
        lastSay = Date.now();
        say(
          `[${o.kind}] agent: ${doneAt.size}/${ids.length} answered, ${sentAt.size} started, kills=${killer.kills}, ${s1(Date.now() - t0)}s`,
        );
      }
      await sleep(250);
    }
  } finally {
    running = false;
    await killer.done;
    await fleet.stop();
  }
  readLog();
  const endedAt = Date.now();

  /** @type {Map<string, Snapshot | null>} */
  const conversations = new Map();
  await inBatches(ids, async (id) => void conversations.set(id, await retrying(() => store.load(id))));
  const toolIds = await retrying(() => listIds(store, TOOL_WORKFLOW));
  /** @type {Snapshot[]} */
  const tools = [];
  await inBatches(toolIds, async (id) => {
    const s = await retrying(() => store.load(id));
    if (s) tools.push(s);
  });
  /** @type {string[]} */
  const violations = [];
  let resets = 0;
  for (const [id, s] of conversations) {
    if (!answeredBoth(s)) {
      violations.push(
        `${id}: not answered after ${o.budgetMs} ms (${s ? `run ${s.run} ${s.status} active ${s.active}` : 'no snapshot'})`,
      );
      continue;
    }
    violations.push(...checkUsage(/** @type {Snapshot} */ (s)));
    const streamed = await retrying(() => checkStream(/** @type {any} */ (store.stream), id));
    violations.push(...streamed.violations);
    resets += streamed.resets;
  }
  const ledger = checkLedger(conversations, tools, records);
  violations.push(...ledger.violations);
  const windows = { stream: 0, settled: 0 };
  /** @type {Set<number>} processes that killed themselves in a window */
  const selfKilled = new Set();
  for (const r of records) {
    if (r[0] !== 'X' || (r[2] !== 'stream' && r[2] !== 'settled')) continue;
    windows[r[2]]++;
    selfKilled.add(Number(r[4]));
  }
  const crashes = exits.filter((e) => !selfKilled.has(e.pid)).map((e) => e.how);
  violations.push(...crashes.map((c) => `unplanned exit: ${c}`));
  const modelCalls = records.filter((r) => r[0] === 'S' && r[3] === 'model').length;
  const ms = [...doneAt].map(([id, at]) => at - (sentAt.get(id) ?? at)).sort((a, b) => a - b);
  const ok = violations.length === 0;
  const seconds = (endedAt - t0) / 1000;
  const summary =
    `store=${o.kind} workload=agent conversations=${ids.length} answered=${doneAt.size} kills=${killer.kills} ` +
    `window-kills=stream:${windows.stream},settled:${windows.settled} violations=${violations.length} ` +
    `seconds=${seconds.toFixed(1)} latency-s p50=${s1(percentile(ms, 0.5))} p99=${s1(percentile(ms, 0.99))} max=${s1(ms.at(-1) ?? Number.NaN)} ` +
    `tool-calls=${ledger.settled} charge-runs-before-settling=${ledger.earlierRuns} stream-resets=${resets} ` +
    `model-steps-completed=${modelCalls} unplanned-exits=${crashes.length}${ok ? '' : ` kept=${ns} log=${logDir}`}`;
  if (ok) {
    await drop().catch(() => {});
    rmSync(logDir, { recursive: true, force: true });
  }
  await close();
  return { ok, summary, violations, kills: killer.kills, windows, seconds, latency: ms, crashes };
}
