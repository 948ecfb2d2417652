import { type DynamoDBClient, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { isValidId, type StoreKit } from '@stepfold/engine';
import { dueBound, dueKey, dueShard, laneShard } from './encode.js';
import { isConditionFailed } from './map-error.js';
import { queryItems } from './query.js';
import { DUE_INDEX, LANE_INDEX } from './setup.js';

/** Default lease of an id returned by `listDue`, in ms against its `now`. */
export const DEFAULT_CLAIM_MS = 30_000;

// Losing a race sends another round for the next candidates; bounded, so a caller that keeps
// losing returns a short batch instead of looping.
const CLAIM_ROUNDS = 3;
// Conditional writes in flight at once per call (the SDK's socket pool queues the rest anyway).
const CONCURRENCY = 25;

/** What the due-index calls need. */
export interface DueContext {
  client: DynamoDBClient;
  guard: StoreKit['guard'];
  table: string;
  shards: number;
}

/** Checks the `claimMs` option: a positive finite number of milliseconds. */
export function claimMsOf(value: number | undefined): number {
  const ms = value ?? DEFAULT_CLAIM_MS;
  if (!(typeof ms === 'number' && Number.isFinite(ms) && ms > 0)) {
    throw new RangeError('claimMs must be a positive number of milliseconds');
  }
  return ms;
}

interface Candidate {
  id: string;
  key: string;
}

// Runs `fn` over `items`, at most CONCURRENCY at a time, keeping the order of the results.
async function pooled<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += CONCURRENCY) {
    out.push(...(await Promise.all(items.slice(i, i + CONCURRENCY).map(fn))));
  }
  return out;
}

/**
 * The earliest `per` due entries of every shard (of the due index, or of one workflow's lane index),
 * queried in parallel and merged by sort key: wake time, then id.
 */
async function candidates(ctx: DueContext, bound: string, per: number, workflow?: string) {
  const shards = Array.from({ length: ctx.shards }, (_, n) => n);
  const pages = await Promise.all(
    shards.map((n) =>
      queryItems(
        ctx.client,
        ctx.guard,
        {
          TableName: ctx.table,
          IndexName: workflow === undefined ? DUE_INDEX : LANE_INDEX,
          KeyConditionExpression: '#pk = :pk AND #key < :bound',
          ExpressionAttributeNames: {
            '#pk': workflow === undefined ? 'dueShard' : 'laneShard',
            '#key': 'dueKey',
          },
          ExpressionAttributeValues: {
            ':pk': { S: workflow === undefined ? dueShard(n) : laneShard(workflow, n) },
            ':bound': { S: bound },
          },
          ScanIndexForward: true,
        },
        per,
        'listDue',
      ),
    ),
  );
  const found: Candidate[] = [];
  for (const item of pages.flat()) {
    const id = item['id']?.S;
    const key = item['dueKey']?.S;
    if (id !== undefined && key !== undefined) found.push({ id, key });
  }
  // Keys are ASCII (hex, '#', valid ids): JS string order is DynamoDB's byte order.
  return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * Claims an entry by moving its sort key to the claim's expiry: while claimed it is out of every
 * `listDue` range, and it is due again exactly when the lease lapses. The condition is the key the
 * index showed, so of two racing callers one wins and the other skips the id.
 */
async function claimOne(ctx: DueContext, c: Candidate, until: number): Promise<boolean> {
  try {
    await ctx.guard('listDue', () =>
      ctx.client.send(
        new UpdateItemCommand({
          TableName: ctx.table,
          Key: { id: { S: c.id } },
          UpdateExpression: 'SET #key = :claim, #until = :until',
          ConditionExpression: '#key = :seen',
          ExpressionAttributeNames: { '#key': 'dueKey', '#until': 'claimedUntil' },
          ExpressionAttributeValues: {
            ':claim': { S: dueKey(until, c.id) },
            ':until': { N: String(until) },
            ':seen': { S: c.key },
          },
        }),
      ),
    );
    return true;
  } catch (e) {
    if (isConditionFailed(e)) return false; // another worker won, or the instance changed
    throw e;
  }
}

/** Finds and claims up to `limit` due ids, earliest first; see the README ("Claims"). */
export async function claimDue(
  ctx: DueContext,
  args: { now: number; limit: number; workflow: string | undefined; leaseMs: number },
): Promise<string[]> {
  const { now, limit, workflow } = args;
  const bound = dueBound(now);
  const until = now + args.leaseMs;
  const tried = new Set<string>();
  const won: Candidate[] = [];
  for (let round = 0; round < CLAIM_ROUNDS && won.length < limit; round++) {
    const want = limit - won.length;
    // A lost id may still show on an (eventually consistent) index: read past the ones tried.
    const found = await candidates(ctx, bound, want + tried.size, workflow);
    const next = found.filter((c) => !tried.has(c.id)).slice(0, want);
    if (next.length === 0) break;
    const results = await pooled(next, (c) => claimOne(ctx, c, until));
    let lost = 0;
    next.forEach((c, i) => {
      tried.add(c.id);
      if (results[i]) won.push(c);
      else lost++;
    });
    if (lost === 0) break; // every candidate claimed: the batch is full or nothing more is due
  }
  won.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return won.map((c) => c.id);
}

/**
 * Gives back claims: puts each claimed item's sort key back at its wake time. One consistent read
 * per id for that wake time, then a write conditional on the same version still being claimed.
 */
export async function releaseClaims(ctx: DueContext, ids: readonly string[]): Promise<void> {
  const valid = [...new Set(ids.filter((id) => isValidId(id)))];
  await pooled(valid, async (id) => {
    const out = await ctx.guard('releaseDue', () =>
      ctx.client.send(
        new GetItemCommand({
          TableName: ctx.table,
          Key: { id: { S: id } },
          ConsistentRead: true,
          ProjectionExpression: '#v, #w, #until',
          ExpressionAttributeNames: { '#v': 'version', '#w': 'wakeAt', '#until': 'claimedUntil' },
        }),
      ),
    );
    const version = out.Item?.['version']?.N;
    const wakeAt = out.Item?.['wakeAt']?.N;
    if (version === undefined || wakeAt === undefined || out.Item?.['claimedUntil'] === undefined) return;
    try {
      await ctx.guard('releaseDue', () =>
        ctx.client.send(
          new UpdateItemCommand({
            TableName: ctx.table,
            Key: { id: { S: id } },
            UpdateExpression: 'SET #key = :key REMOVE #until',
            ConditionExpression: '#v = :v AND attribute_exists(#until)',
            ExpressionAttributeNames: { '#key': 'dueKey', '#until': 'claimedUntil', '#v': 'version' },
            ExpressionAttributeValues: { ':key': { S: dueKey(Number(wakeAt), id) }, ':v': { N: version } },
          }),
        ),
      );
    } catch (e) {
      if (!isConditionFailed(e)) throw e; // saved or released meanwhile: the claim is gone already
    }
  });
}
