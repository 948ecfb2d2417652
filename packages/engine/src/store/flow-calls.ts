import { ValidationError } from '../errors.js';
import type { CreateFlow, FlowGrant, FlowKeyPage, FlowNeed, FlowStore, SaveFlow } from './flow.js';
import type { FlowCounterRef, FlowDriver, InsertFlow } from './store-driver.js';
import type { StoreParts } from './store-parts.js';

// The `flow` capability of a store made by `defineStore`, over the driver's flow calls: every
// argument checked here, so a driver sees only well-formed holders, needs and times.

/** Longest holder id: an attempt's holder is its idempotency key (ids and step names) plus `#phase#attempt`. */
export const MAX_FLOW_HOLDER_LENGTH = 1000;

/** Longest scope or key of a {@link FlowNeed}, in UTF-16 units. */
export const MAX_FLOW_TEXT_LENGTH = 512;

/** Most needs one acquire may name. */
export const MAX_FLOW_NEEDS = 64;

/** Largest page of `flow.list`; a larger `limit` gets pages of this size. */
export const MAX_FLOW_PAGE = 1000;

/** A lease that never lapses: the holder holds until it is released (as an instance's hold does). */
export const FLOW_HELD_UNTIL_RELEASED = Number.MAX_SAFE_INTEGER;

/**
 * Whether `value` can be a flow scope or key: a string of at most {@link MAX_FLOW_TEXT_LENGTH}
 * units every database can store (no NUL, which PostgreSQL's text refuses, and no lone surrogate,
 * which has no UTF-8 form); a scope must not be empty.
 */
export function isFlowText(value: unknown, what: 'scope' | 'key' = 'key'): value is string {
  if (typeof value !== 'string' || value.length > MAX_FLOW_TEXT_LENGTH) return false;
  if (what === 'scope' && value.length === 0) return false;
  // One pass over the units (asked for every counter of every flow call: a regex cost more).
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0) return false;
    if (c < 0xd800 || c > 0xdfff) continue;
    // A high surrogate must be followed by a low one, which is then skipped; a low one alone is lone.
    if (c > 0xdbff) return false;
    const d = value.charCodeAt(i + 1);
    if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
    i++;
  }
  return true;
}

/** The {@link FlowStore} of a defined store whose driver has flow calls. */
export function definedFlow(parts: StoreParts, calls: FlowDriver): FlowStore {
  const { guard } = parts.kit;
  // Async, so a refused argument rejects the call's promise as a failed driver call does.
  return {
    ...(calls.inUpdate ? { inSave: true } : {}),
    ...(calls.inInsert ? { inCreate: true } : {}),
    async acquire(holder, instance, needs, now, until) {
      const h = holderOf(holder, 'holder');
      const id = parts.kit.id(instance);
      const checked = needsOf(needs);
      time(now, 'now');
      time(until, 'until');
      // Nothing needed: granted, with nothing to write.
      if (!checked.length) return { granted: true };
      return grantOf(await guard('flow.acquire', () => calls.acquire(h, id, checked, now, until)));
    },
    async release(holders, now, counters) {
      const list = holdersOf(holders);
      time(now, 'now');
      const at = countersOf(counters);
      if (!list.length) return [];
      return guard('flow.release', () => (at ? calls.release(list, now, at) : calls.release(list, now)));
    },
    async renew(holders, until, counters) {
      const list = holdersOf(holders);
      time(until, 'until');
      const at = countersOf(counters);
      if (list.length)
        await guard('flow.renew', () => (at ? calls.renew(list, until, at) : calls.renew(list, until)));
    },
    async list(query) {
      if (typeof query !== 'object' || query === null) invalid('query', 'must be an object');
      const { scope, cursor, limit, now } = query;
      if (scope !== undefined && !isFlowText(scope, 'scope')) invalid('scope', 'must be a flow scope');
      if (!(Number.isSafeInteger(limit) && limit >= 1)) invalid('limit', 'must be a positive integer');
      time(now, 'now');
      const after = cursor === undefined || cursor === null || cursor === '' ? null : cursorOf(cursor);
      const n = Math.min(limit, MAX_FLOW_PAGE);
      const rows = await guard('flow.list', () =>
        calls.list({ ...(scope === undefined ? {} : { scope }), limit: n, after, now }),
      );
      const items = rows.slice(0, n);
      const last = items[items.length - 1];
      return {
        items,
        cursor: rows.length > n && last ? cursorText(last) : null,
      } satisfies FlowKeyPage;
    },
  };
}

/**
 * A save's flow work checked as `acquire` and `release` check their arguments (throws
 * `INVALID_ID`, `INVALID_INPUT`); undefined when there is nothing to do (no take, nothing released).
 */
export function saveFlowOf(flow: SaveFlow): Omit<SaveFlow, 'woken'> | undefined {
  if (typeof flow !== 'object' || flow === null) invalid('flow', 'must be an object');
  time(flow.now, 'now');
  const release = flow.release === undefined ? [] : holdersOf(flow.release);
  const counters = countersOf(flow.counters);
  let take: SaveFlow['take'];
  if (flow.take !== undefined) {
    const needs = needsOf(flow.take.needs);
    time(flow.take.until, 'until');
    // Nothing needed: granted, with nothing to write.
    if (needs.length) take = { holder: holderOf(flow.take.holder, 'holder'), needs, until: flow.take.until };
  }
  if (!take && !release.length) return undefined;
  const checked: Omit<SaveFlow, 'woken'> = { now: flow.now, take, release };
  if (counters && release.length) checked.counters = counters;
  return checked;
}

/**
 * A create's flow work checked as `acquire` checks its arguments (throws `INVALID_ID`,
 * `INVALID_INPUT`); undefined when it needs nothing (no need: nothing to take).
 */
export function createFlowOf(flow: CreateFlow): InsertFlow | undefined {
  if (typeof flow !== 'object' || flow === null) invalid('flow', 'must be an object');
  if (typeof flow.taken !== 'function') invalid('flow.taken', 'must be a function');
  time(flow.now, 'now');
  if (typeof flow.take !== 'object' || flow.take === null) invalid('flow.take', 'must be an object');
  const needs = needsOf(flow.take.needs);
  time(flow.take.until, 'until');
  const holder = holderOf(flow.take.holder, 'holder');
  return needs.length ? { now: flow.now, take: { holder, needs, until: flow.take.until } } : undefined;
}

/** A denial's `until` as the contract says it: a lease that never lapses gives no time. */
function grantOf(grant: FlowGrant): FlowGrant {
  if (grant.granted || grant.until === null || grant.until < FLOW_HELD_UNTIL_RELEASED) return grant;
  return { ...grant, until: null };
}

function invalid(
  path: string,
  message: string,
  code: 'INVALID_INPUT' | 'INVALID_ID' = 'INVALID_INPUT',
): never {
  throw new ValidationError(code, `flow: invalid ${path}`, [{ path, message }]);
}

function time(value: unknown, path: string): void {
  if (!Number.isSafeInteger(value)) invalid(path, `must be an integer (epoch ms), got ${String(value)}`);
}

function holderOf(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.length > MAX_FLOW_HOLDER_LENGTH || !printable(value))
    invalid(
      path,
      `must be 1-${MAX_FLOW_HOLDER_LENGTH} printable ASCII characters without spaces`,
      'INVALID_ID',
    );
  return value;
}

/**
 * Whether `value` is printable ASCII without spaces, at least one character: safe in every
 * database's keys (Redis keys, DynamoDB sort keys) as is.
 */
function printable(value: string): boolean {
  if (value.length === 0) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

function holdersOf(holders: readonly string[]): string[] {
  if (!Array.isArray(holders)) invalid('holders', 'must be an array of holder ids');
  // One holder (most calls): nothing to dedupe.
  if (holders.length === 1) return [holderOf(holders[0], 'holders[0]')];
  return [...new Set(holders.map((h, i) => holderOf(h, `holders[${i}]`)))];
}

/** Where holders are ({@link FlowStore.release}'s `counters`) checked, copied and each once; undefined when not given. */
function countersOf(counters: readonly FlowCounterRef[] | undefined): FlowCounterRef[] | undefined {
  if (counters === undefined) return undefined;
  if (!Array.isArray(counters)) invalid('counters', 'must be an array of counters');
  const out: FlowCounterRef[] = [];
  // Each counter once, where it stands first (a call names few: searched, not hashed, unless many).
  const seen = counters.length > 8 ? new Set<string>() : undefined;
  for (let i = 0; i < counters.length; i++) {
    const c = counters[i]!;
    const at = `counters[${i}]`;
    if (typeof c !== 'object' || c === null) invalid(at, 'must be an object');
    if (!isFlowText(c.scope, 'scope')) invalid(`${at}.scope`, 'must be a flow scope');
    if (!isFlowText(c.key)) invalid(`${at}.key`, 'must be a flow key');
    if (!(Number.isSafeInteger(c.period) && c.period >= 0))
      invalid(`${at}.period`, 'must be a non-negative integer (ms; 0 for a concurrency counter)');
    if (seen) {
      const id = `${c.scope}\0${c.key}\0${c.period}`;
      if (seen.has(id)) continue;
      seen.add(id);
    } else if (out.some((o) => o.scope === c.scope && o.key === c.key && o.period === c.period)) continue;
    out.push({ scope: c.scope, key: c.key, period: c.period });
  }
  return out;
}

/**
 * The needs checked and copied (only their own fields), with no counter twice: two limits that name
 * one counter (two key paths that resolved to one value) keep the lower limit, where it stands first.
 */
function needsOf(needs: readonly FlowNeed[]): FlowNeed[] {
  if (!Array.isArray(needs)) invalid('needs', 'must be an array of needs');
  if (needs.length > MAX_FLOW_NEEDS) invalid('needs', `must list at most ${MAX_FLOW_NEEDS} needs`);
  const out: FlowNeed[] = [];
  for (let i = 0; i < needs.length; i++) {
    const n = needs[i]!;
    const at = `needs[${i}]`;
    if (typeof n !== 'object' || n === null) invalid(at, 'must be an object');
    if (!isFlowText(n.scope, 'scope'))
      invalid(
        `${at}.scope`,
        `must be a non-empty string of at most ${MAX_FLOW_TEXT_LENGTH} characters, without NUL or lone surrogates`,
      );
    if (!isFlowText(n.key))
      invalid(
        `${at}.key`,
        `must be a string of at most ${MAX_FLOW_TEXT_LENGTH} characters, without NUL or lone surrogates`,
      );
    if (!(Number.isSafeInteger(n.limit) && n.limit >= 1))
      invalid(`${at}.limit`, 'must be a positive integer');
    const periodMs = n.periodMs;
    if (periodMs !== undefined && !(Number.isSafeInteger(periodMs) && periodMs >= 1))
      invalid(`${at}.periodMs`, 'must be a positive integer (ms) or absent');
    const need: FlowNeed = { scope: n.scope, key: n.key, limit: n.limit };
    if (periodMs !== undefined) need.periodMs = periodMs;
    // A counter named before (needs are at most MAX_FLOW_NEEDS: searched, not hashed).
    const first = out.findIndex(
      (o) => o.scope === need.scope && o.key === need.key && o.periodMs === need.periodMs,
    );
    if (first < 0) out.push(need);
    else if (need.limit < out[first]!.limit) out[first] = need;
  }
  return out;
}

/** The cursor of a page that ends at `last`: its counter as JSON `[scope, key, period]`. */
function cursorText(last: { scope: string; key: string; periodMs?: number | undefined }): string {
  return JSON.stringify([last.scope, last.key, last.periodMs ?? 0]);
}

function cursorOf(cursor: unknown): FlowCounterRef {
  let parsed: unknown;
  try {
    parsed = typeof cursor === 'string' ? JSON.parse(cursor) : undefined;
  } catch {
    parsed = undefined;
  }
  if (
    Array.isArray(parsed) &&
    parsed.length === 3 &&
    isFlowText(parsed[0], 'scope') &&
    isFlowText(parsed[1]) &&
    Number.isSafeInteger(parsed[2]) &&
    parsed[2] >= 0
  )
    return { scope: parsed[0], key: parsed[1], period: parsed[2] };
  return invalid('cursor', 'must be a cursor a previous page returned');
}
