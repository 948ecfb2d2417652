/**
 * Flow control on Cloudflare: one Durable Object (the flow object) keeps every flow key's counts in
 * its SQLite, and every workflow object asks it over `fetch`. The counts are shared by all the
 * instances of a deployment, so they cannot live in an instance's own object.
 *
 *   POST /acquire { holder, instance, needs, now, until } → FlowGrant
 *   POST /release { holders, now }                        → string[] (instances to wake)
 *   POST /renew   { holders, until }                      → null
 *   POST /list    { scope?, limit, cursor?, now }         → FlowKeyPage
 */
import {
  defineStore,
  documentFlow,
  type FlowCounterRef,
  type FlowDocument,
  type FlowDocumentCalls,
  type FlowDriver,
  type FlowListArgs,
  type FlowNeed,
  type FlowStore,
  flowRefId,
  type StoreDriver,
  type StoredFlowDocument,
} from '@stepfold/engine';
import type { DurableNamespace, DurableStub, SqlDurableState, SqlDurableStorage } from './platform.js';

/** The flow object's name in its namespace when none is given: one object for the deployment. */
export const DEFAULT_FLOW_OBJECT = 'stepfold-flow';

// A row per counter (scope, key, period: 0 for concurrency slots): its slots, starts and waiters as
// JSON and the version writes compare; a row per holder and counter it holds or waits on, so a
// release finds its counters.
const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS stepfold_flow (scope TEXT NOT NULL, flow_key TEXT NOT NULL,
    period INTEGER NOT NULL, v INTEGER NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (scope, flow_key, period))`,
  `CREATE TABLE IF NOT EXISTS stepfold_flow_holders (holder TEXT NOT NULL, scope TEXT NOT NULL,
    flow_key TEXT NOT NULL, period INTEGER NOT NULL, PRIMARY KEY (holder, scope, flow_key, period))`,
];

const COUNTER = 'scope = ? AND flow_key = ? AND period = ?';

const storedOf = (row: Record<string, unknown>): StoredFlowDocument => ({
  doc: JSON.parse(String(row['doc'])) as FlowDocument,
  version: Number(row['v']),
});

/** The flow calls over a SQLite-backed Durable Object's storage (the flow object's). */
export function sqliteFlow(storage: SqlDurableStorage): FlowDriver {
  const { sql } = storage;
  for (const statement of SCHEMA) sql.exec(statement);
  const at = (ref: FlowCounterRef) => [ref.scope, ref.key, ref.period] as const;
  const select = (ref: FlowCounterRef) =>
    sql.exec(`SELECT v, doc FROM stepfold_flow WHERE ${COUNTER}`, ...at(ref)).toArray()[0];
  // Each call below is synchronous SQL: the object runs it whole before any other request.
  const calls: FlowDocumentCalls = {
    async read(refs) {
      const out = new Map<string, StoredFlowDocument>();
      for (const ref of refs) {
        const row = select(ref);
        if (row) out.set(flowRefId(ref), storedOf(row));
      }
      return out;
    },
    async write(ref, doc, version) {
      return storage.transactionSync(() => {
        const row = select(ref);
        if ((row ? Number(row['v']) : null) !== version) return false;
        sql.exec(`DELETE FROM stepfold_flow_holders WHERE ${COUNTER}`, ...at(ref));
        if (doc === null) {
          sql.exec(`DELETE FROM stepfold_flow WHERE ${COUNTER}`, ...at(ref));
          return true;
        }
        sql.exec(
          'INSERT OR REPLACE INTO stepfold_flow (scope, flow_key, period, v, doc) VALUES (?, ?, ?, ?, ?)',
          ...at(ref),
          (version ?? 0) + 1,
          JSON.stringify(doc),
        );
        for (const holder of new Set([...doc.holds, ...doc.waiting].map((h) => h.holder))) {
          sql.exec(
            'INSERT INTO stepfold_flow_holders (holder, scope, flow_key, period) VALUES (?, ?, ?, ?)',
            holder,
            ...at(ref),
          );
        }
        return true;
      });
    },
    async holding(holders) {
      const out = new Map<string, StoredFlowDocument>();
      for (const holder of new Set(holders)) {
        const rows = sql
          .exec(
            `SELECT f.scope, f.flow_key, f.period, f.v, f.doc FROM stepfold_flow_holders h JOIN stepfold_flow f
             ON f.scope = h.scope AND f.flow_key = h.flow_key AND f.period = h.period WHERE h.holder = ?`,
            holder,
          )
          .toArray();
        for (const row of rows)
          out.set(JSON.stringify([row['scope'], row['flow_key'], row['period']]), storedOf(row));
      }
      return [...out.values()];
    },
    async page({ scope, after, limit }) {
      const where: string[] = [];
      const args: Array<string | number> = [];
      if (scope !== undefined) {
        where.push('scope = ?');
        args.push(scope);
      }
      if (after) {
        where.push('(scope, flow_key, period) > (?, ?, ?)');
        args.push(...at(after));
      }
      const rows = sql
        .exec(
          `SELECT scope, flow_key, period, v, doc FROM stepfold_flow
           ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY scope, flow_key, period LIMIT ?`,
          ...args,
          limit,
        )
        .toArray();
      const end = rows.length === limit ? rows[rows.length - 1] : undefined;
      return {
        docs: rows.map(storedOf),
        last: end
          ? { scope: String(end['scope']), key: String(end['flow_key']), period: Number(end['period']) }
          : null,
      };
    },
  };
  return documentFlow(calls, { name: 'durable-object' });
}

/** What a call's request carries (the fields of the route's call). */
type CallBody = FlowListArgs & {
  holder: string;
  instance: string;
  needs: FlowNeed[];
  until: number;
  holders: string[];
};

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/**
 * The flow object: bind it as a SQLite-backed Durable Object class (`new_sqlite_classes`) and give
 * its namespace to {@link createDurableFlowStore}. It serves the driver's calls; the arguments are
 * checked by the caller's store before they are sent.
 */
export class FlowObject {
  private readonly flow: FlowDriver;

  constructor(ctx: SqlDurableState, _env?: unknown) {
    this.flow = sqliteFlow(ctx.storage);
  }

  /** Serves one flow call (see the routes above). */
  async fetch(request: Request): Promise<Response> {
    if (request.method !== 'POST') return json(405, { error: { message: 'use POST' } });
    try {
      const b = (await request.json()) as CallBody;
      switch (new URL(request.url).pathname) {
        case '/acquire':
          return json(200, await this.flow.acquire(b.holder, b.instance, b.needs, b.now, b.until));
        case '/release':
          return json(200, await this.flow.release(b.holders, b.now));
        case '/renew':
          await this.flow.renew(b.holders, b.until);
          return json(200, null);
        case '/list':
          return json(200, await this.flow.list(b));
        default:
          return json(404, { error: { message: 'no such flow call' } });
      }
    } catch (e) {
      return json(500, { error: { message: e instanceof Error ? e.message : String(e) } });
    }
  }
}

/** Options of {@link createDurableFlowStore}. */
export interface DurableFlowStoreOptions {
  /** The flow object's name in the namespace (default {@link DEFAULT_FLOW_OBJECT}). */
  name?: string | undefined;
}

/** A request to the flow object that did not reach it (the platform refused or lost it): retryable. */
class FlowObjectUnreachable extends Error {}

/** The flow driver's calls, each one request to the flow object behind `stub`. */
export function durableFlowDriver(stub: DurableStub): FlowDriver {
  const call = async <T>(path: string, body: unknown): Promise<T> => {
    const request = new Request(`https://flow${path}`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    const res = await stub.fetch(request).catch((e: unknown) => {
      throw new FlowObjectUnreachable(
        `flow object unreachable: ${e instanceof Error ? e.message : String(e)}`,
        {
          cause: e,
        },
      );
    });
    const out = (await res.json()) as T | { error: { message: string } };
    if (!res.ok) throw new Error(`flow object: ${(out as { error: { message: string } }).error.message}`);
    return out as T;
  };
  return {
    acquire: (holder, instance, needs, now, until) =>
      call('/acquire', { holder, instance, needs, now, until }),
    release: (holders, now) => call('/release', { holders, now }),
    renew: async (holders, until) => {
      await call('/renew', { holders, until });
    },
    list: (args) => call('/list', args),
  };
}

/**
 * The flow counts of a deployment, each call one request to its flow object (`namespace` is the
 * binding of the {@link FlowObject} class). Give it to the workflow objects as their `flow` option.
 */
export function createDurableFlowStore(
  namespace: DurableNamespace,
  options: DurableFlowStoreOptions = {},
): FlowStore {
  const stub = namespace.get(namespace.idFromName(options.name ?? DEFAULT_FLOW_OBJECT));
  return checkedFlow(durableFlowDriver(stub));
}

/**
 * The engine's checks around a flow driver: the `flow` of a store made by `defineStore` whose only
 * database calls are the flow object's (it holds no instances, so the others are never made).
 */
function checkedFlow(driver: FlowDriver): FlowStore {
  const none = async (): Promise<never> => {
    throw new Error('the flow object holds no instances');
  };
  const calls: StoreDriver = {
    setup: async () => {},
    insert: none,
    select: none,
    update: none,
    version: none,
    due: none,
    page: none,
    remove: none,
    flow: driver,
  };
  const definition = {
    name: 'durable-object-flow',
    isUnavailable: (e: unknown) => e instanceof FlowObjectUnreachable,
    sizes: { asked: undefined, fallback: 1 },
  };
  return defineStore(definition, calls).flow!;
}
