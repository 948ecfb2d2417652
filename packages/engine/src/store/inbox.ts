import { ValidationError } from '../errors.js';
import { isTime } from '../event-time.js';
import type { WorkflowEvent } from '../events.js';
import {
  type Inbox,
  type InboxSendOutcome,
  SENT_CLAIM_AFTER_MS,
  type SentDue,
  type SentSignal,
  type Unreadable,
} from './store.js';
import type { InboxDriver, SentRow } from './store-driver.js';
import { decodeEach, type StoreParts, seqsOf } from './store-parts.js';

// The `inbox` capability of a store made by `defineStore`, over the driver's inbox calls.

/** The {@link Inbox} of a defined store whose driver has inbox calls. */
export function definedInbox(parts: StoreParts, calls: InboxDriver): Inbox {
  return {
    send: (id, event, accept) => send(parts, calls, id, event, accept),
    claim: (now, limit, ids, onUnreadable) => claim(parts, calls, now, limit, ids, onUnreadable),
    drop: (id, seqs, version) => drop(parts, calls, id, seqs, version),
  };
}

async function send(
  parts: StoreParts,
  calls: InboxDriver,
  id: string,
  event: WorkflowEvent,
  accept: readonly string[],
): Promise<InboxSendOutcome> {
  // The event is untrusted until the reducer checks it; its time only orders and announces the
  // row. One that is no event time (NaN poisoned the due order and the wake notice; 1e308 left
  // the row unclaimable, its refusal never dropped) counts as 0: due for the inbox lane at once.
  const at = isTime(event.at) ? event.at : 0;
  const entry = { json: JSON.stringify(event), at, dueAt: at + SENT_CLAIM_AFTER_MS };
  return parts.kit.guard('send', () => calls.append(parts.kit.id(id), entry, [...accept]));
}

async function claim(
  parts: StoreParts,
  calls: InboxDriver,
  now: number,
  limit: number,
  ids: readonly string[] | undefined,
  onUnreadable: Unreadable | undefined,
): Promise<SentDue[]> {
  const { kit } = parts;
  if (ids !== undefined) {
    const list = Array.from(ids, (x) => kit.id(x));
    return list.length
      ? sentDue(parts, await kit.guard('claimSent', () => calls.claimIds(list)), onUnreadable)
      : [];
  }
  const n = kit.dueLimit(now, limit);
  if (n === null) return [];
  const window = { now, until: now + parts.claimMs, limit: n, token: parts.ownToken };
  return sentDue(parts, await kit.guard('claimSent', () => calls.claim(window)), onUnreadable);
}

async function drop(
  parts: StoreParts,
  calls: InboxDriver,
  id: string,
  seqs: readonly number[],
  version: number,
): Promise<void> {
  const list = seqsOf(seqs);
  if (list.length) await parts.kit.guard('dropSent', () => calls.drop(parts.kit.id(id), list, version));
}

/** Claimed inbox rows decoded: those with signals waiting, each with its snapshot and its signals. */
const sentDue = (parts: StoreParts, rows: SentRow[], onUnreadable: Unreadable | undefined): SentDue[] =>
  decodeEach(
    rows,
    (r) => {
      if (!r.sent.length) return null;
      const snapshot = parts.kit.decode(r.json);
      return { snapshot, sent: r.sent.map((p) => sentSignal(snapshot.id, p)) };
    },
    onUnreadable,
  );

/** A signal as the inbox hands it out: its stored text parsed, or INVALID_SNAPSHOT for the row. */
function sentSignal(id: string, p: SentRow['sent'][number]): SentSignal {
  if (typeof p.event !== 'string') return p as SentSignal;
  try {
    return { seq: p.seq, event: JSON.parse(p.event) as WorkflowEvent };
  } catch (e) {
    const message = (e as Error).message;
    throw new ValidationError(
      'INVALID_SNAPSHOT',
      `stored signal ${p.seq} sent to instance ${JSON.stringify(id)} is not JSON`,
      [{ path: `sent.${p.seq}`, message }],
    );
  }
}
