import { type ClaimsDriver, type ClaimWindow, textDigest } from '@stepfold/engine/store-kit';
import {
  byKey,
  type Candidate,
  candidatesOf,
  claimRounds,
  dueEntries,
  type ShardedIndex,
} from './claim-rounds.js';
import { dueBound, dueKey, dueShard, jsonOf, laneShard } from './encode.js';
import { Expr } from './expression.js';
import { isItemTooLarge } from './map-error.js';
import { batchGet, pooled, type Table, updateItem } from './query.js';
import { DUE_INDEX, LANE_INDEX } from './setup.js';

/** What a claim stores as its owner: the token, or its SHA-256 when longer than 64 characters (an item has little room to spare). */
export async function storedToken(token: string): Promise<string> {
  return token.length <= 64 ? token : `sha256:${await textDigest(token, 'SHA-256')}`;
}

/** The due index, or one workflow's lane index, with its shards. */
function dueIndex(table: Table, workflow: string | undefined): ShardedIndex {
  const shards = Array.from({ length: table.shards }, (_, n) => n);
  return workflow === undefined
    ? { index: DUE_INDEX, partition: 'dueShard', parts: shards.map(dueShard), key: 'dueKey' }
    : {
        index: LANE_INDEX,
        partition: 'laneShard',
        parts: shards.map((n) => laneShard(workflow, n)),
        key: 'dueKey',
      };
}

/**
 * Claims an entry by moving its sort key to the claim's expiry, with the owner's token: while
 * claimed it is out of every due range, and it is due again exactly when the lease lapses. The
 * condition is the key the index showed, so of two racing callers one wins and the other skips the
 * id. Resolves the snapshot JSON (`load`) or the id; null when lost.
 */
async function claimOne(table: Table, c: Candidate, until: number, token: string, load: boolean) {
  const x = new Expr();
  const set = [
    `${x.n('dueKey')} = ${x.s(dueKey(until, c.id))}`,
    `${x.n('claimedUntil')} = ${x.num(until)}`,
    `${x.n('claimToken')} = ${x.s(token)}`,
  ];
  // Lost: another worker won, or the instance changed. An item its waiting signals filled is left
  // to the inbox, whose consuming save empties it.
  const out = await updateItem(
    table,
    c.id,
    x,
    { set, condition: `#dueKey = ${x.s(c.key)}`, all: load },
    isItemTooLarge,
  );
  return out === null ? null : load ? jsonOf(out.Attributes ?? {}) : c.id;
}

/** Claims up to `w.limit` due instances (of a lane, of `w.ids`), earliest first; see the README ("Claims"). */
async function claimWindow(table: Table, w: ClaimWindow, load: boolean): Promise<string[]> {
  const bound = dueBound(w.now);
  const token = await storedToken(w.token);
  let find: (n: number) => Promise<Candidate[]>;
  if (w.ids) {
    // Named instances: their keys from the items themselves, then the same conditional claims.
    const items = [...(await batchGet(table, w.ids, ['dueKey', 'workflow'])).values()];
    const lane = items.filter((i) => w.workflow === undefined || i['workflow']?.S === w.workflow);
    const found = candidatesOf(lane, 'dueKey')
      .filter((c) => c.key < bound)
      .sort(byKey);
    find = async () => found;
  } else {
    const ix = dueIndex(table, w.workflow);
    find = (n) => dueEntries(table, ix, bound, n);
  }
  return claimRounds(w.limit, find, (c) => claimOne(table, c, w.until, token, load));
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
