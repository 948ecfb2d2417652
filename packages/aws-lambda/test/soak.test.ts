/**
 * The serverless soak: the Lambda-shaped fleet on moto (the `stream` function on the table's
 * stream, `queue` on the SQS queue, `sweep` every 3 s, a driver firing due schedules) runs a mix
 * of orders started and decided through `api`, while invocations are killed mid-batch and stream
 * records are dropped (how a kill is simulated: see soak-fleet.ts). It passes when every order ends
 * as designed (status, compensations, each effect applied once), no completion is written twice,
 * and nothing of any order is left queued (visible, delayed or in flight) or scheduled.
 *
 * Sizes and faults come from the environment; the defaults are the CI run. A larger run:
 *   STEPFOLD_SOAK_ORDERS=160 STEPFOLD_SOAK_KILL_RATE=0.2 pnpm exec vitest run packages/aws-lambda/test/soak.test.ts
 */

import type { Snapshot } from '@stepfold/engine';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaApp } from '../src/index.js';
import { createScheduleDriver, queueDepth } from '../src/local/index.js';
import { type Fleet, startFleet } from './soak-fleet.js';
import {
  APPROVAL_MS,
  CompletionLog,
  checkOrder,
  design,
  EffectLedger,
  type OrderDesign,
  soakHandlers,
  soakWorkflows,
} from './soak-orders.js';
import { clients, http, provision } from './support.js';

const env = process.env;
const ORDERS = Number(env.STEPFOLD_SOAK_ORDERS ?? 27);
const KILL_RATE = Number(env.STEPFOLD_SOAK_KILL_RATE ?? 0.3);
const DROP_RATE = Number(env.STEPFOLD_SOAK_DROP_RATE ?? 0.1);
const SEED = Number(env.STEPFOLD_SOAK_SEED ?? 7);
/** Orders driven at once (each starts, waits for its approval step, decides). */
const AT_ONCE = Math.min(32, Math.max(8, Math.ceil(ORDERS / 4)));
/** How long every order has to end, and then the queue and schedules to empty. */
const END_MS = 60_000 + ORDERS * 1_000;
const LEFTOVER_MS = APPROVAL_MS + 20_000;

/** A small seeded generator (mulberry32): the same faults for the same seed and timing. */
function seeded(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FINAL = ['completed', 'failed', 'cancelled', 'aborted'];
const ROLE = 'arn:aws:iam::123456789012:role/stepfold-scheduler';

const c = clients();
let res: Awaited<ReturnType<typeof provision>>;
let fleet: Fleet;
const ledger = new EffectLedger();
const completions = new CompletionLog();

beforeAll(async () => {
  res = await provision(c, 'soak');
  fleet = startFleet({
    resources: res,
    roleArn: ROLE,
    workflows: soakWorkflows,
    container: (name, probe) => ({
      handlers: soakHandlers(ledger, probe),
      hooks: completions.hooks(name, () => probe.alive()),
    }),
    killRate: KILL_RATE,
    dropRate: DROP_RATE,
    sweepMs: 3_000,
    streamLanes: 4,
    queuePollers: 2,
    random: seeded(SEED),
  });
});

afterAll(async () => {
  await fleet?.stop();
  await res?.drop();
});

describe('the Lambda fleet on moto, with invocations killed and stream records dropped', () => {
  it('every order ends as designed, each effect once, and nothing is left queued or scheduled', {
    timeout: 2 * END_MS + LEFTOVER_MS + 30_000,
  }, async () => {
    const started = Date.now();
    // `api` is its own function, never killed here: the driver is the caller that sees its answers.
    const { api } = createLambdaApp({
      workflows: soakWorkflows,
      handlers: soakHandlers(ledger, { alive: () => true, applied: () => {} }),
      hooks: completions.hooks('api', () => true),
      dynamodb: c.dynamodb,
      table: res.table,
      log: () => {},
      env: {},
    });
    const call = async (method: string, path: string, body?: unknown) => {
      for (let attempt = 1; ; attempt++) {
        const r = await api(http(method, path, body));
        if (r.statusCode < 500 || attempt === 5) return { status: r.statusCode, body: JSON.parse(r.body) };
        await pause(200);
      }
    };
    const store = createDynamoStore({ client: c.dynamodb, table: res.table });

    // One deadline for the whole drive: a fleet that stalls fails the run, not each order in turn.
    const deadline = started + END_MS;
    const designs = Array.from({ length: ORDERS }, (_, i) => design(i, `soak-${process.pid}`));
    const driverErrors: string[] = [];
    const drive = async (d: OrderDesign) => {
      const start = await call('POST', `/workflows/${d.workflow}/instances/${d.id}`, d.input);
      if (start.status !== 201) return void driverErrors.push(`${d.id}: start answered ${start.status}`);
      if (d.decision === 'none') return;
      for (;;) {
        const s = await store.load(d.id);
        if (s && FINAL.includes(s.status))
          return void driverErrors.push(`${d.id}: ended ${s.status} before its decision`);
        if (s?.status === 'waiting' && s.active.includes('approve')) break;
        if (Date.now() > deadline) return void driverErrors.push(`${d.id}: never reached approve`);
        await pause(500);
      }
      const decision = d.decision === 'approve-then-cancel-in-backoff' ? 'approve' : d.decision;
      const r =
        decision === 'cancel'
          ? await call('POST', `/instances/${d.id}/cancel`, { reason: 'soak' })
          : await call('POST', `/instances/${d.id}/signals/approve`, { decision });
      if (r.status !== 200) driverErrors.push(`${d.id}: ${decision} answered ${r.status}`);
      // A signal to an ended instance is answered with it as it is: the decision came too late.
      else if (FINAL.includes(r.body.status) && decision === 'approve')
        driverErrors.push(
          `${d.id}: approved once already ${r.body.status} (${JSON.stringify(r.body.error)})`,
        );
      if (d.decision !== 'approve-then-cancel-in-backoff') return;
      // The charge failed once and waits for its retry: a cancel now leaves the delayed wake queued.
      for (;;) {
        const s = await store.load(d.id);
        if (!s || FINAL.includes(s.status))
          return void driverErrors.push(`${d.id}: ended ${s?.status} before its cancel`);
        if (s.timers.some((t) => t.kind === 'retry')) break;
        if (Date.now() > deadline) return void driverErrors.push(`${d.id}: no backoff to cancel in`);
        await pause(100);
      }
      const cancelled = await call('POST', `/instances/${d.id}/cancel`, { reason: 'soak, in a backoff' });
      if (cancelled.status !== 200) driverErrors.push(`${d.id}: cancel answered ${cancelled.status}`);
    };
    let next = 0;
    await Promise.all(
      Array.from({ length: AT_ONCE }, async () => {
        while (next < designs.length) await drive(designs[next++]!);
      }),
    );
    expect(driverErrors).toEqual([]);

    // Every order final (or the time is up): one read each per round.
    const finals = new Map<string, Snapshot | null>();
    const endBy = started + 2 * END_MS;
    while (finals.size < designs.length && Date.now() < endBy) {
      for (const d of designs) {
        if (finals.has(d.id)) continue;
        const s = await store.load(d.id);
        if (s && FINAL.includes(s.status)) finals.set(d.id, s);
      }
      await pause(500);
    }
    const allEnded = Date.now();
    for (const d of designs) if (!finals.has(d.id)) finals.set(d.id, await store.load(d.id));

    // Nothing left: killed batches come back after the visibility timeout (and write nothing), a
    // schedule whose end record was dropped fires once (a stale wake) and deletes itself.
    const driver = createScheduleDriver({ scheduler: c.scheduler, sqs: c.sqs, group: res.group });
    let left = { messages: -1, schedules: [] as string[] };
    let leftWhenAllEnded: { messages: number; schedules: number } | undefined;
    const leftBy = Date.now() + LEFTOVER_MS;
    for (;;) {
      left = {
        messages: (await queueDepth(c.sqs, res.queueUrl)).total,
        schedules: (await driver.list()).map((s) => s.name),
      };
      leftWhenAllEnded ??= { messages: left.messages, schedules: left.schedules.length };
      if ((left.messages === 0 && left.schedules.length === 0) || Date.now() > leftBy) break;
      await pause(500);
    }
    const emptied = Date.now();
    const stats = await fleet.stop();
    // Still nothing once the fleet has stopped (nothing was in a handler's hands).
    const after = {
      messages: (await queueDepth(c.sqs, res.queueUrl)).total,
      schedules: (await driver.list()).map((s) => s.name),
    };

    const violations = [
      ...designs.flatMap((d) => checkOrder(d, finals.get(d.id) ?? null, ledger.of(d.id))),
      ...completions.violations(),
    ];
    const byStatus: Record<string, number> = {};
    for (const s of finals.values())
      byStatus[s?.status ?? 'missing'] = (byStatus[s?.status ?? 'missing'] ?? 0) + 1;
    console.log(
      JSON.stringify({
        orders: ORDERS,
        killRate: KILL_RATE,
        dropRate: DROP_RATE,
        seed: SEED,
        byStatus,
        violations: violations.length,
        effects: ledger.applied.size,
        handlerCalls: ledger.calls,
        reruns: ledger.reruns,
        ...stats,
        left,
        leftWhenAllEnded,
        allEndedMs: allEnded - started,
        emptiedMs: emptied - started,
      }),
    );
    // What went wrong, in each violating order's own words: its transition log.
    for (const id of new Set(violations.map((v) => v.split(':')[0]!))) {
      const s = finals.get(id);
      if (s)
        console.log(id, JSON.stringify(s.log.map((e) => [e.v, e.at - started, e.type, e.step, e.detail])));
    }
    expect(violations).toEqual([]);
    expect(left).toEqual({ messages: 0, schedules: [] });
    expect(after).toEqual({ messages: 0, schedules: [] });
    // The faults happened: the run proves nothing if no invocation died and no record was lost.
    if (KILL_RATE > 0) expect(stats.kills.queue + stats.kills.stream + stats.kills.sweep).toBeGreaterThan(0);
    if (DROP_RATE > 0) expect(stats.records.dropped).toBeGreaterThan(0);
  });
});
