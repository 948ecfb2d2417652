// @ts-check
// The soak's flow-controlled workload (`--workload flow`): orders of FLOW_CUSTOMERS customers of
// FLOW_TENANTS tenants, whose one task holds a concurrency limit per customer and a rate limit per
// tenant, run while worker processes are SIGKILLed. The handler records each run's start and end
// (F records), and every grant the store gives is recorded with the time it counts a start at (G
// records, from withGrantLog): checkFlow then proves no customer ever had more than its limit of
// runs at once (a killed run ends at its process's death) and no tenant's grants ever put more
// than its limit in any window.
import { workflow } from '@stepfold/engine';
import { soakHandlers } from './workflows.mjs';

/** The limits of the flow workload's `charge` step. */
export const FLOW_LIMITS = { perCustomer: 2, perTenant: 10, periodMs: 1000 };
export const FLOW_CUSTOMERS = 30;
export const FLOW_TENANTS = 3;

// A kill costs the attempt it hits and a flaky handler fails up to two: attempts to spare.
const RETRY = { maxAttempts: 12, initialMs: 50, factor: 2, maxMs: 400, jitter: 0.2 };

/**
 * The flow workload's workflow with handler deadlines of `timeoutMs`.
 * @param {number} timeoutMs
 */
export function flowWorkflows(timeoutMs) {
  const charge = workflow('soak-flow', 1, { defaults: { retry: RETRY, timeoutMs } })
    .task('charge', {
      handler: 'flowCharge',
      concurrency: { key: 'input.customer', limit: FLOW_LIMITS.perCustomer },
      rateLimit: { key: 'input.tenant', limit: FLOW_LIMITS.perTenant, periodMs: FLOW_LIMITS.periodMs },
    })
    .build();
  return /** @type {const} */ ([charge]);
}

/**
 * Instance number `i` of the flow workload: its customer and tenant; it completes.
 * @param {number} i
 * @returns {import('./workflows.mjs').Design}
 */
export function flowDesign(i) {
  const customer = i % FLOW_CUSTOMERS;
  const input = { fate: 'ok', customer: `c-${customer}`, tenant: `t-${customer % FLOW_TENANTS}` };
  return {
    workflow: 'soak-flow',
    input: /** @type {import('./workflows.mjs').SoakInput} */ (input),
    status: 'completed',
    compensated: [],
  };
}

/**
 * The flow workload's handler: the soak's flaky handler between an F record of its start and one
 * of its end (written before it returns or throws).
 * @param {import('./workflows.mjs').CallLog} call
 * @param {(fields: Array<string | number>) => void} flow
 */
export function flowHandlers(call, flow) {
  const act = soakHandlers(call).charge;
  return {
    /** @param {import('@stepfold/engine').HandlerContext} ctx */
    flowCharge: async (ctx) => {
      const { customer, tenant } = /** @type {{ customer: string, tenant: string }} */ (ctx.workflowInput);
      const holder = `${ctx.idempotencyKey}#${ctx.phase}#${ctx.attempt}`;
      const record = (/** @type {string} */ phase) =>
        flow([phase, ctx.instanceId, customer, tenant, holder, Date.now(), process.pid]);
      record('start');
      try {
        return await act(ctx);
      } finally {
        record('end');
      }
    },
  };
}

/**
 * `store` with every grant of its flow recorded by `grant` (holder, the `now` the store counted):
 * a store object over the same client.
 * @param {import('@stepfold/engine').Store} store
 * @param {(holder: string, at: number) => void} grant
 * @returns {import('@stepfold/engine').Store}
 */
export function withGrantLog(store, grant) {
  const flow = store.flow;
  if (!flow) return store;
  return Object.assign(Object.create(store), {
    flow: {
      /** @type {typeof flow.acquire} */
      acquire: async (holder, instance, needs, now, until) => {
        const g = await flow.acquire(holder, instance, needs, now, until);
        if (g.granted) grant(holder, now);
        return g;
      },
      /** @type {typeof flow.release} */
      release: (holders, now) => flow.release(holders, now),
      /** @type {typeof flow.renew} */
      renew: (holders, until) => flow.renew(holders, until),
      /** @type {typeof flow.list} */
      list: (query) => flow.list(query),
    },
  });
}

/**
 * Violations of the flow limits in the oracle log: more than `perCustomer` runs of one customer at
 * once, or more than `perTenant` grants of one tenant's runs in a window of `periodMs`.
 * @param {string[][]} records every record of every process's log
 * @param {Map<number, number>} deaths when each worker process that died (a kill) died, by pid
 * @returns {{ violations: string[], runs: number, killed: number }}
 */
export function checkFlow(records, deaths) {
  /** @type {Map<string, { customer: string, tenant: string, start: number, end: number, holder: string, killed: boolean }>} */
  const runs = new Map();
  // A grant's holder is an attempt as one version of its instance dispatched it (`<attempt>@<version>`),
  // a run's is the attempt: each grant is a start the store counted, and a run none was logged for
  // (a store without a flow of its own) counts from its start.
  /** @type {Map<string, number>} */
  const grants = new Map();
  /** @type {Set<string>} */
  const granted = new Set();
  for (const r of records) {
    if (r[0] === 'G') {
      const holder = r[1] ?? '';
      grants.set(holder, Math.min(grants.get(holder) ?? Number.POSITIVE_INFINITY, Number(r[2])));
      granted.add(holder.replace(/@\d+$/, ''));
      continue;
    }
    if (r[0] !== 'F') continue;
    // F phase instance customer tenant holder at pid
    const [, phase, , customer = '', tenant = '', holder = '', at, pid] = r;
    const name = `${holder}@${pid}`;
    if (phase === 'start') {
      const death = deaths.get(Number(pid));
      runs.set(name, {
        customer,
        tenant,
        holder,
        start: Number(at),
        end: death ?? Number.POSITIVE_INFINITY,
        killed: death !== undefined,
      });
    } else {
      const run = runs.get(name);
      if (run) Object.assign(run, { end: Number(at), killed: false });
    }
  }
  /** @type {string[]} */
  const violations = [];
  const all = [...runs.values()];
  for (const [customer, list] of group(all, (x) => x.customer)) {
    const edges = list.flatMap((x) => [
      { at: x.start, d: 1, holder: x.holder },
      { at: x.end, d: -1, holder: x.holder },
    ]);
    // An end before a start at the same millisecond: the slot was free by then.
    edges.sort((a, b) => a.at - b.at || a.d - b.d);
    let now = 0;
    for (const e of edges) {
      now += e.d;
      if (now > FLOW_LIMITS.perCustomer) {
        violations.push(
          `${customer}: ${now} runs at once at ${e.at} (limit ${FLOW_LIMITS.perCustomer}), one of ${e.holder}`,
        );
        break;
      }
    }
  }
  // Instances are the part of a holder before its first '/'; every run of one has the same tenant.
  const tenantOf = new Map(all.map((x) => [x.holder.slice(0, x.holder.indexOf('/')), x.tenant]));
  /** @type {Array<{ tenant: string, at: number }>} */
  const starts = [];
  for (const [holder, at] of grants) {
    const tenant = tenantOf.get(holder.slice(0, holder.indexOf('/')));
    if (tenant !== undefined) starts.push({ tenant, at }); // else no run of it logged its tenant
  }
  for (const x of all) if (!granted.has(x.holder)) starts.push({ tenant: x.tenant, at: x.start });
  for (const [tenant, list] of group(starts, (x) => x.tenant)) {
    const times = list.map((x) => x.at).sort((a, b) => a - b);
    for (let i = 0, j = 0; i < times.length; i++) {
      while (/** @type {number} */ (times[i]) - /** @type {number} */ (times[j]) >= FLOW_LIMITS.periodMs) j++;
      if (i - j + 1 > FLOW_LIMITS.perTenant) {
        violations.push(
          `${tenant}: ${i - j + 1} starts within ${FLOW_LIMITS.periodMs} ms from ${times[j]} (limit ${FLOW_LIMITS.perTenant})`,
        );
        break;
      }
    }
  }
  return { violations, runs: all.length, killed: all.filter((x) => x.killed).length };
}

/**
 * @template T @param {T[]} items @param {(item: T) => string} by
 * @returns {Map<string, T[]>}
 */
function group(items, by) {
  /** @type {Map<string, T[]>} */
  const out = new Map();
  for (const x of items) out.set(by(x), [...(out.get(by(x)) ?? []), x]);
  return out;
}
