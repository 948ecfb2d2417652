/** Default key prefix: the `{sf}` hash tag puts every key of the store in one Redis Cluster slot. */
export const DEFAULT_PREFIX = 'stepfold:{sf}:';

/** Longest accepted key prefix. */
export const MAX_PREFIX_LENGTH = 256;

// Printable ASCII without the glob characters of SCAN MATCH (* ? [ ] \), so `prefix*` matches exactly.
const PREFIX_CHARS = /^[!-)+->@-Z^-~]+$/;

/** Throws unless `prefix` is 1-256 printable ASCII characters, no whitespace or glob characters, at most one `{tag}`. */
export function assertPrefix(prefix: unknown): asserts prefix is string {
  const fail = (why: string): never => {
    throw new TypeError(`invalid redis key prefix ${JSON.stringify(prefix)}: ${why}`);
  };
  if (typeof prefix !== 'string' || prefix.length === 0) fail('must be a non-empty string');
  const p = prefix as string;
  if (p.length > MAX_PREFIX_LENGTH) fail(`longer than ${MAX_PREFIX_LENGTH} characters`);
  if (!PREFIX_CHARS.test(p)) fail('only printable ASCII, no whitespace and none of * ? [ ] \\');
  const open = p.indexOf('{');
  const close = p.indexOf('}');
  if (open === -1 && close === -1) return;
  const single = p.lastIndexOf('{') === open && p.lastIndexOf('}') === close;
  if (!single || open === -1 || close < open + 2) {
    fail('braces must form one non-empty hash tag, e.g. "app:{sf}:"');
  }
}

/** True when `prefix` holds a Redis Cluster hash tag (`{...}` with something inside). */
export function hasHashTag(prefix: string): boolean {
  const open = prefix.indexOf('{');
  return open !== -1 && prefix.indexOf('}', open + 2) !== -1;
}

// Key segments after the prefix; the Lua scripts build the old index keys from the same strings.
/** Hash per instance: `json`, `version`, `status`, `workflow`, and while claimed {@link CLAIM_WAKE}, {@link CLAIM_VERSION} and {@link CLAIM_TOKEN}. */
export const INSTANCE = 'instance:';
/** Instance hash field, while claimed: the wake time the claim moved its due entries from. */
export const CLAIM_WAKE = 'claimWake';
/** Instance hash field, while claimed: the version {@link CLAIM_WAKE} belongs to (a save of another version made it stale). */
export const CLAIM_VERSION = 'claimVersion';
/** Instance hash field, while claimed: whose claim it is (absent on claims an older adapter took: those lapse). */
export const CLAIM_TOKEN = 'claimToken';
/** Sorted set, member id: score wakeAt, or while claimed the claim's expiry. */
export const DUE = 'due';
/** Sorted set, score 0: every id. */
export const ALL = 'all';
/** Sorted set per status, score 0. */
export const STATUS = 'status:';
/** Sorted set per workflow name, score 0. */
export const WORKFLOW = 'workflow:';
/** Sorted set per (status, workflow name), score 0; `#` separates the two (no id or name holds it). */
export const STATUS_WORKFLOW = 'status-workflow:';
/** Sorted set per workflow name, scored as `due` (the lane `listDue(now, n, { workflow })` reads). */
export const DUE_WORKFLOW = 'due-workflow:';
/** Instance hash field of an instance with a fairness key: the key (see {@link FAIR_DUE}). */
export const FAIR_KEY = 'fairKey';
/**
 * Sorted set per fairness key, scored as `due`: the instances with that `fairKey`, which are in
 * neither `due` nor the lanes (those hold the instances without a key, the group `''`).
 */
export const FAIR_DUE = 'fair-due:';
/** Sorted set per (workflow name, fairness key), `#` between them: {@link FAIR_DUE} for one lane. */
export const FAIR_LANE = 'fair-lane:';
/** Sorted set, member a fairness key, score the lowest score in its {@link FAIR_DUE} set (its head). */
export const FAIR_KEYS = 'fair-keys';
/** Sorted set per workflow name: {@link FAIR_KEYS} for that lane's {@link FAIR_LANE} sets. */
export const FAIR_KEYS_LANE = 'fair-keys-lane:';
/** Sorted set, member a fairness key, score the `now` of the last due read that handed out one of its instances. */
export const FAIR_SERVED = 'fair-served';
/**
 * Sorted set of the claims made by versions before claims moved due entries: score claim expiry,
 * member id. Read and emptied, no longer written (see due-scripts.ts).
 */
export const CLAIMS = 'claims';
/**
 * Sorted set per search attribute name, score 0, member `<kind><value>\x01<id>` (see
 * search-entries.ts): its lexicographic order is the listing order of that attribute.
 */
export const SEARCH = 'search:';
/** Instance hash field: the instance's search entries (see search-entries.ts), absent for none. */
export const SEARCH_FIELD = 'sa';
/** Pub/sub channel (not a key) of the wake hints; under the prefix, so in the store's slot. */
export const WAKE = 'wake';
/** Hash per instance of the signals `runner.send` wrote and no write applied yet: field seq, value the event JSON. */
export const SENT = 'sent:';
/** Counter of the seqs sent signals get. */
export const SENT_SEQ = 'sent-seq';
/** Sorted set: score when the polls may claim an instance's sent signals (the first's send time plus a second; while leased, the lease's expiry), member id. */
export const SENT_DUE = 'sent-due';
/**
 * Sorted set of the inbox leases made by versions before leases moved sent-due entries: score
 * lease expiry, member id. Read and emptied, no longer written (see inbox-scripts.ts).
 */
export const SENT_CLAIMS = 'sent-claims';

/** The names of every key a store with this prefix uses. */
export interface Keys {
  prefix: string;
  instance(id: string): string;
  due: string;
  all: string;
  status(status: string): string;
  workflow(name: string): string;
  statusWorkflow(status: string, name: string): string;
  dueWorkflow(name: string): string;
  /** {@link SEARCH} of an attribute name. */
  search(name: string): string;
  /** {@link FAIR_DUE} of a fairness key. */
  fairDue(key: string): string;
  /** {@link FAIR_LANE} of a workflow and a fairness key. */
  fairLane(name: string, key: string): string;
  fairKeys: string;
  /** {@link FAIR_KEYS_LANE} of a workflow. */
  fairKeysLane(name: string): string;
  fairServed: string;
  claims: string;
  /** The wake channel (a channel name, not a key). */
  wake: string;
  sent(id: string): string;
  sentSeq: string;
  sentDue: string;
  sentClaims: string;
}

/** Key names under `prefix` (validated by the caller). */
export function keysFor(prefix: string): Keys {
  return {
    prefix,
    instance: (id) => `${prefix}${INSTANCE}${id}`,
    due: `${prefix}${DUE}`,
    all: `${prefix}${ALL}`,
    status: (status) => `${prefix}${STATUS}${status}`,
    workflow: (name) => `${prefix}${WORKFLOW}${name}`,
    statusWorkflow: (status, name) => `${prefix}${STATUS_WORKFLOW}${status}#${name}`,
    dueWorkflow: (name) => `${prefix}${DUE_WORKFLOW}${name}`,
    search: (name) => `${prefix}${SEARCH}${name}`,
    fairDue: (key) => `${prefix}${FAIR_DUE}${key}`,
    fairLane: (name, key) => `${prefix}${FAIR_LANE}${name}#${key}`,
    fairKeys: `${prefix}${FAIR_KEYS}`,
    fairKeysLane: (name) => `${prefix}${FAIR_KEYS_LANE}${name}`,
    fairServed: `${prefix}${FAIR_SERVED}`,
    claims: `${prefix}${CLAIMS}`,
    wake: `${prefix}${WAKE}`,
    sent: (id) => `${prefix}${SENT}${id}`,
    sentSeq: `${prefix}${SENT_SEQ}`,
    sentDue: `${prefix}${SENT_DUE}`,
    sentClaims: `${prefix}${SENT_CLAIMS}`,
  };
}
