import type { ListArgs, ListSearch, SearchFilter, SearchRow, SearchValue } from '@stepfold/engine';
import { matchesSearch, searchRows } from '@stepfold/engine';
import type { Cluster, Redis } from 'ioredis';
import type { Keys } from './keys.js';
import { SEARCH_FIELD } from './keys.js';
import {
  afterBound,
  attributeRanges,
  type LexRange,
  parseMember,
  parseSearchField,
} from './search-entries.js';

// `list` with `where` or `orderBy` on the Redis store: one attribute's sorted set drives the
// listing (the ordered attribute, else an equality, an `in` or a range), so only the members its
// condition selects are read; each candidate's status, workflow and other attributes come from
// its hash (never its snapshot), every condition is checked on them, and only the page's
// snapshots are read. Without a condition on an attribute (only `status` or `workflow` lists),
// the plain indexes are read page by page.

/** Members read per ZRANGEBYLEX while a page fills in the set's order. */
const BATCH = 200;

type Client = Redis | Cluster;

/** A candidate with what every condition is checked on. */
type Candidate = SearchRow;

/** The attribute whose set drives a listing (the ordered one, else equality's, `in`'s, a range's) and its filters. */
function driving(search: ListSearch): { name: string; filters: SearchFilter[] } | undefined {
  const name =
    search.orderBy ??
    (
      search.filters.find((x) => x.op === 'eq') ??
      search.filters.find((x) => x.op === 'in') ??
      search.filters[0]
    )?.name;
  return name === undefined ? undefined : { name, filters: search.filters.filter((f) => f.name === name) };
}

/** The candidates among `ids`: their status, workflow and attributes, read from their hashes. */
async function candidates(client: Client, keys: Keys, ids: readonly string[]): Promise<Candidate[]> {
  if (ids.length === 0) return [];
  const pipe = client.pipeline();
  for (const id of ids) pipe.hmget(keys.instance(id), 'status', 'workflow', SEARCH_FIELD);
  const replies = (await pipe.exec()) ?? [];
  const out: Candidate[] = [];
  ids.forEach((id, i) => {
    const [error, fields] = replies[i] ?? [];
    if (error) throw error;
    const [status, workflow, sa] = fields as Array<string | null>;
    // Deleted since its member was read: not listed.
    if (status === null || status === undefined) return;
    out.push({ id, status, workflow: workflow ?? '', search: parseSearchField(sa ?? null) });
  });
  return out;
}

/** The snapshots of `ids`, in that order (one deleted meanwhile is left out). */
async function snapshots(client: Client, keys: Keys, ids: readonly string[]) {
  if (ids.length === 0) return [];
  const pipe = client.pipeline();
  for (const id of ids) pipe.hget(keys.instance(id), 'json');
  const replies = (await pipe.exec()) ?? [];
  const rows: Array<{ id: string; json: string }> = [];
  ids.forEach((id, i) => {
    const [error, json] = replies[i] ?? [];
    if (error) throw error;
    if (typeof json === 'string') rows.push({ id, json });
  });
  return rows;
}

/** Every member of `set` in `ranges`, as ids. */
async function membersIn(client: Client, set: string, ranges: readonly LexRange[]): Promise<string[]> {
  const ids = new Set<string>();
  for (const [min, max] of ranges)
    for (const m of await client.zrangebylex(set, min, max)) ids.add(parseMember(m).id);
  return [...ids];
}

/**
 * A page of a search: up to `args.limit + 1` rows `{ id, json }` in the search's order, reading
 * the members of the driving attribute's condition (see the module comment).
 */
export async function redisSearchPage(
  client: Client,
  keys: Keys,
  args: ListArgs,
  search: ListSearch,
  scan: (args: ListArgs) => Promise<Array<{ id: string; json: string }>>,
): Promise<Array<{ id: string; json: string }>> {
  const drive = driving(search);
  if (!drive) return scanned(args, search, scan);
  const set = keys.search(drive.name);
  const ranges: LexRange[] = drive.filters.length ? attributeRanges(drive.filters) : [['-', '+']];
  const eq = drive.filters.find((f) => f.op === 'eq') as { value: SearchValue } | undefined;
  // One range read in the listing's own order: filled batch by batch from the cursor on.
  const streamed = ranges.length === 1 && (search.orderBy !== undefined || eq !== undefined);
  if (!streamed) {
    const found = await candidates(client, keys, await membersIn(client, set, ranges));
    const page = searchRows(found, search, args.cursor, args.limit);
    return snapshots(
      client,
      keys,
      page.map((r) => r.id),
    );
  }
  let [min, max] = ranges[0]!;
  // The cursor: past the last member listed (an id alone: within the one value of an equality).
  const after = search.after
    ? afterBound(search.after.value, search.after.id)
    : args.cursor !== null && eq
      ? afterBound(eq.value, args.cursor)
      : undefined;
  if (after !== undefined) {
    if (search.desc) max = after;
    else min = after;
  }
  const want = args.limit + 1;
  const ids: string[] = [];
  for (let offset = 0; ids.length < want; offset += BATCH) {
    const members = search.desc
      ? await client.zrevrangebylex(set, max, min, 'LIMIT', offset, BATCH)
      : await client.zrangebylex(set, min, max, 'LIMIT', offset, BATCH);
    const found = await candidates(
      client,
      keys,
      members.map((m) => parseMember(m).id),
    );
    for (const c of found) if (ids.length < want && matchesSearch(c, search)) ids.push(c.id);
    if (members.length < BATCH) break;
  }
  return snapshots(client, keys, ids);
}

/** A search on built-ins only: the plain index's pages, each row checked. */
async function scanned(
  args: ListArgs,
  search: ListSearch,
  scan: (args: ListArgs) => Promise<Array<{ id: string; json: string }>>,
): Promise<Array<{ id: string; json: string }>> {
  const rows: Array<Candidate & { json: string }> = [];
  let cursor: string | null = null;
  for (;;) {
    const page = await scan({ status: args.status, workflow: args.workflow, cursor, limit: 500 });
    for (const r of page.slice(0, 500)) {
      const s = JSON.parse(r.json) as { status: string; workflow: { name: string }; search?: never };
      rows.push({
        id: r.id,
        json: r.json,
        status: s.status,
        workflow: s.workflow.name,
        search: s.search ?? null,
      });
    }
    if (page.length <= 500) break;
    cursor = page[499]!.id;
  }
  return searchRows(rows, search, args.cursor, args.limit).map((r) => ({ id: r.id, json: r.json }));
}
