import type { InboxDriver, SentRow } from '@stepfold/engine';
import { finishedStatus, TERMINAL_STATUSES } from '@stepfold/engine';
import { claimRounds, dueEntries, type ShardedIndex } from './claim-rounds.js';
import { dueBound, sentShard, shardOf, sortableNumber } from './encode.js';
import { Expr } from './expression.js';
import { isItemTooLarge } from './map-error.js';
import { batchGet, getItem, type Item, type Table, updateItem } from './requests.js';
import { SENT_INDEX } from './setup.js';

/**
 * Most signals waiting per instance; a send beyond it is refused (`runner.send` then applies the
 * signal itself). A consuming save removes them in one UpdateItem: this keeps it within DynamoDB's
 * 300 operators and 4 KB per expression.
 */
export const MAX_WAITING = 100;

/** `sentKey` of an instance with nothing waiting: above every time key, so no claim reads it. */
export const IDLE_KEY = '~';

/**
 * The clauses that take the `k` oldest signals (seqs `first`…`first + k - 1`) off the inbox: the
 * list's head removed, its base moved on, and the instance's inbox key set to the next signal's
 * own time (or idle), read from the list as it was before this write.
 */
export function consumeClauses(x: Expr, first: number, k: number) {
  const q = x.n('sent');
  const base = x.n('sentBase');
  return {
    set: [
      `${base} = ${base} + ${x.num(k)}`,
      `${x.n('sentKey')} = if_not_exists(${q}[${k}].${x.n('d')}, ${x.s(IDLE_KEY)})`,
    ],
    remove: Array.from({ length: k }, (_, i) => `${q}[${i}]`),
    condition: `${base} = ${x.num(first)} AND size(${q}) >= ${x.num(k)}`,
  };
}

/** The instance's JSON and its waiting signals, seq `sentBase + i` for `sent[i]`. */
function rowOf(item: Item): SentRow {
  const base = Number(item['sentBase']?.N ?? 0);
  const sent = (item['sent']?.L ?? []).map((el, i) => ({
    seq: base + i,
    // Left as text for the store kit to parse: a corrupt one fails its own row, not the claim.
    event: el.M?.['e']?.S ?? '',
  }));
  // A missing snapshot is the kit's to report (INVALID_SNAPSHOT), for this row only.
  return { json: item['snapshot']?.S ?? '', sent };
}

/** The inbox on the instance's own item: see the README ("Inbox"). */
export function inbox(table: Table): InboxDriver {
  const shards = Array.from({ length: table.readShards }, (_, n) => sentShard(n));
  const sentIndex: ShardedIndex = {
    index: SENT_INDEX,
    partition: 'sentShard',
    parts: shards,
    key: 'sentKey',
  };

  /** Claims the instance's inbox by moving its key, and its oldest signal's time, to `until`. */
  const claimOne = async (id: string, seen: string, until: string): Promise<SentRow | null> => {
    const x = new Expr();
    const q = x.n('sent');
    const key = x.n('sentKey');
    const out = await updateItem(table, id, x, {
      set: [`${q}[0].${x.n('d')} = ${x.s(until)}`, `${key} = ${x.s(until)}`],
      condition: `${key} = ${x.s(seen)} AND attribute_exists(${q}[0])`,
      returns: 'ALL_NEW',
    });
    return out && rowOf(out.Attributes ?? {});
  };

  return {
    async append(id, entry, accept) {
      if (!accept.length) return false;
      const x = new Expr();
      const q = x.n('sent');
      const due = sortableNumber(entry.dueAt);
      const one = { L: [{ M: { e: { S: entry.json }, d: { S: due } } }] };
      const set = [
        `${q} = list_append(if_not_exists(${q}, ${x.v({ L: [] })}), ${x.v(one)})`,
        `${x.n('sentBase')} = if_not_exists(#sentBase, ${x.num(1)})`,
        // The oldest waiting signal's time (a claim's end, when claimed), else this one's.
        `${x.n('sentKey')} = if_not_exists(${q}[0].${x.n('d')}, ${x.s(due)})`,
        `${x.n('sentShard')} = ${x.s(sentShard(shardOf(id, table.shards)))}`,
      ];
      const condition = [
        `attribute_exists(${x.n('id')})`,
        `NOT ${x.oneOf('status', TERMINAL_STATUSES)}`,
        x.oneOf('definition', accept),
        `(attribute_not_exists(${q}) OR size(${q}) < ${x.num(MAX_WAITING)})`,
      ];
      // Refused, or no room left in the item: nothing written, the runner applies it itself, unless
      // the item DynamoDB returns with the refusal shows it finished on an accepted definition.
      let seen: Item | undefined;
      const onRefused = (item: Item | undefined) => {
        seen = item;
      };
      const send = { set, condition: condition.join(' AND '), note: 'p' as const, onRefused };
      const out = await updateItem(table, id, x, send, isItemTooLarge);
      if (out !== null) return true;
      const found = seen as Item | undefined;
      const definition = found?.['definition']?.S;
      return (
        (definition !== undefined && accept.includes(definition) && finishedStatus(found?.['status']?.S)) ||
        false
      );
    },

    async claim(w) {
      const until = sortableNumber(w.until);
      const bound = dueBound(w.now);
      return claimRounds(
        w.limit,
        (n) => dueEntries(table, sentIndex, bound, n),
        (c) => claimOne(c.id, c.key, until),
      );
    },

    async claimIds(ids) {
      const items = await batchGet(table, ids, ['snapshot', 'sent', 'sentBase']);
      return ids.flatMap((id) => {
        const item = items.get(id);
        return item?.['sent']?.L?.length ? [rowOf(item)] : [];
      });
    },

    /**
     * Removes the leading run of `seqs` still waiting (the engine drops what one claim returned:
     * the oldest signals), if the instance is still at `version`; retried when a racing drop moved
     * the list's head.
     */
    async drop(id, seqs, version) {
      const gone = new Set(seqs);
      for (let round = 0; round < 3; round++) {
        const item = await getItem(table, id, ['version', 'sentBase', 'sent']);
        if (item?.['version']?.N !== String(version)) return;
        const base = Number(item['sentBase']?.N ?? 0);
        const waiting = item['sent']?.L?.length ?? 0;
        let k = 0;
        while (k < waiting && gone.has(base + k)) k++;
        if (k === 0) return;
        const x = new Expr();
        const c = consumeClauses(x, base, k);
        const condition = `${x.n('version')} = ${x.num(version)} AND ${c.condition}`;
        if (await updateItem(table, id, x, { ...c, condition })) return;
      }
    },
  };
}
