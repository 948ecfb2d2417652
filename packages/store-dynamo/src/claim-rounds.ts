import { type Item, pooled, queryItems, type Table } from './requests.js';

/** An index entry a claim may take: the item's id and the sort key the index showed (the claim's condition). */
export interface Candidate {
  id: string;
  key: string;
}

/** Where a sharded index's due entries are: its name, partition attribute and values, sort key attribute. */
export interface ShardedIndex {
  index: string;
  partition: string;
  /** One partition value per shard. */
  parts: readonly string[];
  key: string;
}

// Losing a race sends another round for the next candidates; bounded, so a caller that keeps
// losing returns a short batch instead of looping.
const CLAIM_ROUNDS = 3;

/** Sort order of candidates: key, then id. Keys are ASCII, so JS string order is DynamoDB's byte order. */
export const byKey = (a: Candidate, b: Candidate): number =>
  a.key < b.key ? -1 : a.key > b.key ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/** Candidates read from items: those with an id and a sort key. */
export function candidatesOf(items: Iterable<Item>, key: string): Candidate[] {
  const out: Candidate[] = [];
  for (const item of items) {
    const id = item['id']?.S;
    const k = item[key]?.S;
    if (id !== undefined && k !== undefined) out.push({ id, key: k });
  }
  return out;
}

/**
 * The earliest `per` entries below `bound` of every shard of `ix`, queried in parallel and merged
 * by sort key: the order one partition would give.
 */
export async function dueEntries(
  table: Table,
  ix: ShardedIndex,
  bound: string,
  per: number,
): Promise<Candidate[]> {
  const pages = await Promise.all(
    ix.parts.map((part) =>
      queryItems(
        table.client,
        {
          TableName: table.name,
          IndexName: ix.index,
          KeyConditionExpression: '#pk = :pk AND #key < :bound',
          ExpressionAttributeNames: { '#pk': ix.partition, '#key': ix.key },
          ExpressionAttributeValues: { ':pk': { S: part }, ':bound': { S: bound } },
        },
        per,
      ),
    ),
  );
  return candidatesOf(pages.flat(), ix.key).sort(byKey);
}

/**
 * Claims up to `limit` of what `find(n)` offers (its earliest `n` candidates), earliest first:
 * `take` writes one claim conditional on the key seen and resolves null when another caller won.
 * When some are lost it reads past the ids tried (an eventually consistent index may still show
 * them) and takes more, at most 3 rounds.
 */
export async function claimRounds<R>(
  limit: number,
  find: (n: number) => Promise<Candidate[]>,
  take: (c: Candidate) => Promise<R | null>,
): Promise<R[]> {
  const tried = new Set<string>();
  const won: Array<{ c: Candidate; r: R }> = [];
  for (let round = 0; round < CLAIM_ROUNDS && won.length < limit; round++) {
    const want = limit - won.length;
    const next = (await find(want + tried.size)).filter((c) => !tried.has(c.id)).slice(0, want);
    if (next.length === 0) break;
    const results = await pooled(next, take);
    let lost = 0;
    next.forEach((c, i) => {
      tried.add(c.id);
      const r = results[i];
      if (r === null || r === undefined) lost++;
      else won.push({ c, r });
    });
    if (lost === 0) break; // every candidate claimed: the batch is full or nothing more is due
  }
  return won.sort((a, b) => byKey(a.c, b.c)).map((w) => w.r);
}
