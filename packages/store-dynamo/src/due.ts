import { type ClaimsDriver, type ClaimWindow, textDigest } from '@stepfold/engine';
import {
  byKey,
  type Candidate,
  candidatesOf,
  claimRounds,
  dueEntries,
  type ShardedIndex,
} from './claim-rounds.js';
import { dueBound, dueKey, dueShard, laneShard } from './encode.js';
import { Expr } from './expression.js';
import { isItemTooLarge } from './map-error.js';
import { batchGet, pooled, type Table, updateItem } from './requests.js';
import { DUE_INDEX, LANE_INDEX } from './setup.js';

/** What a claim stores as its owner: the token, or its SHA-256 when longer than 64 characters (an item has little room to spare). */
export async function storedToken(token: string): Promise<string> {
  return token.length <= 64 ? token : `sha256:${await textDigest(token, 'SHA-256')}`;
}

/** The due index, or one workflow's lane index, with its shards. */
function dueIndex(table: Table, workflow: string | undefined): ShardedIndex {
  const shards = Array.from({ length: table.readShards }, (_, n) => n);
  return workflow === undefined
    ? { index: DUE_INDEX, partition: 'dueShard', parts: shards.map(dueShard), key: 'dueKey' }
    : {
        index: LANE_INDEX,
        partition: 'laneShard',
        parts: shards.map((n) => laneShard(workflow, n)),
        key: 'dueKey',
      };
}

/** A claim won: the id, the key it replaced (the claims' order) and the snapshot JSON or the id. */
interface Won extends Candidate {
  value: string;
}

/**
 * Claims an entry by moving its sort key to the claim's expiry, with the owner's token: while
 * claimed it is out of every due range, and it is due again exactly when the lease lapses. The
 * condition is the key the index showed (`seen`), so of two racing callers one wins and the other
 * skips the id; or, for a named instance, that its key is due (`below` the bound, so unclaimed too)
 * and in the lane. Null when lost.
 */
async function claimOne(
  table: Table,
  id: string,
  seen: string | { below: string; workflow: string | undefined },
  w: { until: number; token: string; load: boolean },
): Promise<Won | null> {
  const x = new Expr();
  const key = x.n('dueKey');
  const set = [
    `${key} = ${x.s(dueKey(w.until, id))}`,
    `${x.n('claimedUntil')} = ${x.num(w.until)}`,
    `${x.n('claimToken')} = ${x.s(w.token)}`,
  ];
  const condition =
    typeof seen === 'string'
      ? `${key} = ${x.s(seen)}`
      : `${key} < ${x.s(seen.below)}` +
        (seen.workflow === undefined ? '' : ` AND ${x.n('workflow')} = ${x.s(seen.workflow)}`);
  // Lost: another worker won, or the instance changed. An item its waiting signals filled is left
  // to the inbox, whose consuming save empties it.
  const returns = w.load ? 'ALL_OLD' : 'UPDATED_OLD';
  const out = await updateItem(table, id, x, { set, condition, returns }, isItemTooLarge);
  const old = out?.Attributes ?? {};
  // A missing snapshot is the store kit's to report (INVALID_SNAPSHOT), for this item only.
  return out && { id, key: old['dueKey']?.S ?? '', value: w.load ? (old['snapshot']?.S ?? '') : id };
}

/** Claims up to `w.limit` due instances (of a lane, of `w.ids`), earliest first; see the README ("Claims"). */
async function claimWindow(table: Table, w: ClaimWindow, load: boolean): Promise<string[]> {
  const bound = dueBound(w.now);
  const claim = { until: w.until, token: await storedToken(w.token), load };
  const ids = w.ids && [...new Set(w.ids)];
  if (ids && ids.length <= w.limit) {
    // As many named as asked for (a worker's one instance): one conditional write each, no read.
    const seen = { below: bound, workflow: w.workflow };
    const won = await pooled(ids, (id) => claimOne(table, id, seen, claim));
    return won
      .flatMap((c) => (c ? [c] : []))
      .sort(byKey)
      .map((c) => c.value);
  }
  let find: (n: number) => Promise<Candidate[]>;
  if (ids) {
    // More named than asked for: their keys from the items, the earliest claimed as from the index.
    const items = [...(await batchGet(table, ids, ['dueKey', 'workflow'])).values()];
    const lane = items.filter((i) => w.workflow === undefined || i['workflow']?.S === w.workflow);
    const found = candidatesOf(lane, 'dueKey')
      .filter((c) => c.key < bound)
      .sort(byKey);
    find = async () => found;
  } else {
    const ix = dueIndex(table, w.workflow);
    find = (n) => dueEntries(table, ix, bound, n);
  }
  const won = await claimRounds(w.limit, find, (c) => claimOne(table, c.id, c.key, claim));
  return won.map((c) => c.value);
}

/** The claims' calls, and `due` (which claims too). */
export function dueClaims(table: Table): ClaimsDriver & { due(w: ClaimWindow): Promise<string[]> } {
  return {
    due: (w) => claimWindow(table, w, false),
    claim: (w) => claimWindow(table, w, true),
    /**
     * Puts each item claimed with `token` back at its wake time: one consistent batch read for the
     * tokens and wake times, then a write per id conditional on the same token and wake time.
     */
    async release(ids, token) {
      const stored = await storedToken(token);
      const items = [...(await batchGet(table, ids, ['wakeAt', 'claimToken'])).values()];
      const mine = items.filter((i) => i['claimToken']?.S === stored && i['wakeAt']?.N !== undefined);
      await pooled(mine, async (item) => {
        const id = item['id']!.S!;
        const wakeAt = item['wakeAt']!.N!;
        const x = new Expr();
        // Saved or released meanwhile: the claim is gone already.
        await updateItem(table, id, x, {
          set: [`${x.n('dueKey')} = ${x.s(dueKey(Number(wakeAt), id))}`],
          remove: [x.n('claimedUntil'), x.n('claimToken')],
          condition: `#claimToken = ${x.s(stored)} AND ${x.n('wakeAt')} = ${x.v({ N: wakeAt })}`,
        });
      });
    },
  };
}
