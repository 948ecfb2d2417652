import { createHash } from 'node:crypto';
import {
  type FlowCounterRef,
  type FlowDriver,
  type FlowGrant,
  type FlowKeyState,
  type FlowListArgs,
  type FlowNeed,
  type FlowWaiter,
  flowCounterOf,
  instancesToWake,
} from '@stepfold/engine';
import type { Cluster, Redis } from 'ioredis';
import {
  ACQUIRE,
  ACQUIRE_ONE,
  GIVE_BACK,
  LIST_FLOW,
  READ_ONE,
  RELEASE,
  RELEASE_ONE,
  RENEW,
  RENEW_ONE,
} from './flow-scripts.js';
import type { Keys } from './keys.js';
import { runScript } from './scripts.js';

/**
 * The prefix of a store's flow counters: the store prefix with its hash tag's braces made brackets,
 * so each counter's own `{tag}` is the one a Cluster hashes. No valid prefix holds brackets: no
 * other store's keys can start with it.
 */
export function flowPrefixOf(prefix: string): string {
  return prefix.replace('{', '[').replace('}', ']');
}

/** A counter's member of the counters index: NUL (in no scope or key) sorts below every other character. */
const memberOf = (c: FlowCounterRef) => `${c.scope}\0${c.key}\0${String(c.period).padStart(16, '0')}`;

/** The counter F of a member: its own hash tag, the SHA-1 of the member (as the list script computes it). */
const counterKeyOf = (flowPrefix: string, member: string) =>
  `${flowPrefix}{${createHash('sha1').update(member).digest('hex')}}`;

const partsOf = (F: string) => [`${F}:h`, `${F}:s`, `${F}:w`, `${F}:m`];

type StateReply = [string, string, string, string, string[], string[]];

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function stateOf(r: StateReply): FlowKeyState {
  const [scope, key, limit, period, holds, waits] = r;
  const holders: FlowKeyState['holders'] = [];
  for (let i = 0; i + 1 < holds.length; i += 2)
    holders.push({ holder: holds[i]!, until: Number(holds[i + 1]) });
  holders.sort((a, b) => a.until - b.until || byText(a.holder, b.holder));
  return {
    scope,
    key,
    limit: Number(limit),
    ...(period === '' ? {} : { periodMs: Number(period) }),
    holders,
    waiting: waitersOf(waits),
  };
}

/** Waiters `{holder, instance, since}` from a script's flat answer, read from index `from`. */
export function waitersOf(flat: readonly string[], from = 0): FlowWaiter[] {
  const out: FlowWaiter[] = [];
  for (let i = from; i + 2 < flat.length; i += 3)
    out.push({ holder: flat[i]!, instance: flat[i + 1]!, since: Number(flat[i + 2]) });
  return out;
}

/** A store's flow key names: a holder's set, the counters index, a need's counter and its script arguments. */
export function flowNames(keys: Keys) {
  const flowPrefix = flowPrefixOf(keys.prefix);
  const counter = (n: FlowNeed) => {
    const member = memberOf(flowCounterOf(n));
    return { member, F: counterKeyOf(flowPrefix, member) };
  };
  return {
    flowPrefix,
    holderIndex: (holder: string) => `${keys.prefix}flow-holder:${holder}`,
    index: `${keys.prefix}flow-counters`,
    counter,
    needArgs(n: FlowNeed): Array<string | number> {
      const { F, member } = counter(n);
      return [F, member, n.scope, n.key, n.limit, n.periodMs ?? ''];
    },
  };
}

/**
 * The flow capability on Redis. On one server each call is one script over every counter it
 * touches, so an acquire of several needs is atomic, and a save or a create does its flow work in
 * its own script (`inUpdate`, `inInsert`). On a Cluster each counter is in its own slot, apart from
 * the instance's (so neither is offered there):
 * an acquire takes its needs one counter at a time in (scope, key, period) order and gives back
 * what it took when a later one is denied; release and renew run one script per counter. Release
 * and renew find a holder's counters in its holder index, so they ignore the counters a caller names.
 */
export function redisFlow(client: Redis | Cluster, keys: Keys): FlowDriver {
  const { holderIndex, index, counter, needArgs, flowPrefix } = flowNames(keys);

  /** Takes `member` out of the index unless its counter is back (an acquire between the two). */
  async function unindex(member: string, F: string): Promise<void> {
    await client.zrem(index, member);
    if (await client.exists(`${F}:m`)) await client.zadd(index, 0, member);
  }

  /** Up to `limit + 1` listed counters, reading `read(min, max, count)` pages of the index. */
  async function listWith(
    args: FlowListArgs,
    read: (min: string, max: string, count: number) => Promise<{ states: FlowKeyState[]; last: string }>,
  ): Promise<FlowKeyState[]> {
    const { scope, after } = args;
    if (scope !== undefined && after && after.scope > scope) return [];
    // A scope's members lie in [scope NUL, scope \x01).
    let min = scope === undefined ? '-' : `[${scope}\0`;
    const max = scope === undefined ? '+' : `(${scope}\x01`;
    if (after && (scope === undefined || after.scope === scope)) min = `(${memberOf(after)}`;
    const items: FlowKeyState[] = [];
    const count = Math.max(args.limit + 1, 16);
    for (;;) {
      const { states, last } = await read(min, max, count);
      for (const s of states) {
        items.push(s);
        if (items.length > args.limit) return items;
      }
      if (!last) return items;
      min = `(${last}`;
    }
  }

  const standalone: FlowDriver = {
    // One server: the save and create scripts do the flow work too (save-flow.ts, create-flow.ts).
    inUpdate: true,
    inInsert: true,
    async acquire(holder, instance, needs, now, until) {
      const keyList = [holderIndex(holder), index, ...needs.flatMap((n) => partsOf(counter(n).F))];
      const args = [holder, instance, now, until, ...needs.flatMap(needArgs)];
      const r = (await runScript(client, ACQUIRE, keyList, args)) as number[];
      if (r[0] === 1) return { granted: true };
      return { granted: false, need: needs[r[1]! - 1]!, until: r[2]!, count: r[3]! };
    },
    async release(holders, now) {
      const r = (await runScript(
        client,
        RELEASE,
        [index, ...holders.map(holderIndex)],
        [now, ...holders],
      )) as string[];
      return instancesToWake(waitersOf(r));
    },
    async renew(holders, until) {
      await runScript(client, RENEW, holders.map(holderIndex), [until, ...holders]);
    },
    list: (args) =>
      listWith(args, async (min, max, count) => {
        const reply = (await runScript(
          client,
          LIST_FLOW,
          [index],
          [args.now, min, max, count, flowPrefix],
        )) as [string, ...StateReply[]];
        const [last, ...states] = reply;
        return { states: states.map(stateOf), last };
      }),
  };
  if (!client.isCluster) return standalone;

  /** The counters the holders' sets name. */
  const countersOf = async (holders: readonly string[]) => client.sunion(...holders.map(holderIndex));

  return {
    async acquire(holder, instance, needs, now, until) {
      const ordered = [...needs].sort((a, b) => byText(counter(a).member, counter(b).member));
      // Noted first: a holder that stops between the two is released from a counter it may not be on.
      await client.sadd(holderIndex(holder), ...ordered.map((n) => counter(n).F));
      const taken: Array<{ need: FlowNeed; prior: string }> = [];
      let grant: FlowGrant = { granted: true };
      for (const need of ordered) {
        const { F, member } = counter(need);
        const r = (await runScript(client, ACQUIRE_ONE, partsOf(F), [
          holder,
          instance,
          now,
          until,
          ...needArgs(need),
        ])) as [number, number | string, number, number?];
        if (r[r.length - 1] === 1) await client.zadd(index, 0, member);
        if (r[0] === 0) {
          grant = { granted: false, need, until: Number(r[1]), count: r[2] };
          break;
        }
        taken.push({ need, prior: String(r[1]) });
      }
      // Denied after taking earlier counters: give them back, newest first.
      if (!grant.granted) {
        for (const { need, prior } of taken.reverse()) {
          const { F, member } = counter(need);
          const set = need.periodMs === undefined ? 'h' : 's';
          if ((await runScript(client, GIVE_BACK, partsOf(F), [holder, F, set, prior])) === 1)
            await unindex(member, F);
        }
      }
      return grant;
    },
    async release(holders, now) {
      const wake: FlowWaiter[] = [];
      for (const F of await countersOf(holders)) {
        const r = (await runScript(client, RELEASE_ONE, partsOf(F), [now, F, ...holders])) as string[];
        wake.push(...waitersOf(r, 1));
        if (r[0]) await unindex(r[0], F);
      }
      await client.del(...holders.map(holderIndex));
      return instancesToWake(wake);
    },
    async renew(holders, until) {
      for (const F of await countersOf(holders)) {
        await runScript(client, RENEW_ONE, partsOf(F), [until, F, ...holders]);
      }
    },
    list: (args) =>
      listWith(args, async (min, max, count) => {
        const members = await client.zrangebylex(index, min, max, 'LIMIT', 0, count);
        const states: FlowKeyState[] = [];
        for (const member of members) {
          const F = counterKeyOf(flowPrefix, member);
          const r = (await runScript(client, READ_ONE, partsOf(F), [args.now, F])) as StateReply | null;
          if (r) states.push(stateOf(r));
          else await unindex(member, F);
        }
        return { states, last: members.length === count ? members[members.length - 1]! : '' };
      }),
  };
}
