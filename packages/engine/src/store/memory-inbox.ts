import { isTerminal } from '../snapshot.js';
import { announce, driverCall, type MemoryRows, type Row, sentOf } from './memory-rows.js';
import type { InboxSendOutcome } from './store.js';
import type { DueWindow, InboxDriver, SentEntry, SentRow } from './store-driver.js';

/** The in-memory store's inbox calls: signals kept on their instance's row, oldest first. */
export function memoryInbox(m: MemoryRows): InboxDriver {
  return {
    append: driverCall(m, append),
    claim: driverCall(m, claim),
    claimIds: driverCall(m, claimIds),
    drop: driverCall(m, drop),
  };
}

function append(m: MemoryRows, id: string, entry: SentEntry, accept: readonly string[]): InboxSendOutcome {
  const row = m.rows.get(id);
  if (!row || !accept.includes(row.encoded.definition)) return false;
  // Finished: say how, as a database's conditional write does where it returns the row it refused.
  if (isTerminal(row.encoded.status)) return row.encoded.status;
  row.sent.push({ seq: m.nextSeq++, json: entry.json, dueAt: entry.dueAt });
  const { encoded } = row;
  const sent = sentOf(row);
  announce(m, () => ({
    at: entry.at,
    workflow: encoded.workflow,
    id,
    snapshot: JSON.parse(encoded.json),
    sent: structuredClone(sent),
  }));
  return true;
}

function claim(m: MemoryRows, w: Omit<DueWindow, 'workflow'>): SentRow[] {
  // Signals past their grace and unclaimed, oldest first (a scan: a reference need not be fast);
  // each claimed, and its instance returned with every signal waiting for it.
  const ready = [...m.rows.values()]
    .flatMap((r) => r.sent.map((s) => ({ r, s })))
    .filter(({ s }) => s.dueAt <= w.now && (s.claimedUntil === undefined || s.claimedUntil <= w.now))
    .sort((a, b) => a.s.dueAt - b.s.dueAt || a.s.seq - b.s.seq)
    .slice(0, w.limit);
  const claimed = new Set<Row>();
  for (const { r, s } of ready) {
    s.claimedUntil = w.until;
    claimed.add(r);
  }
  return [...claimed].map((r) => ({ json: r.encoded.json, sent: storedSent(r) }));
}

function claimIds(m: MemoryRows, ids: readonly string[]): SentRow[] {
  return ids.flatMap((id) => {
    const r = m.rows.get(id);
    return r?.sent.length ? [{ json: r.encoded.json, sent: storedSent(r) }] : [];
  });
}

function drop(m: MemoryRows, id: string, seqs: readonly number[], version: number): void {
  const row = m.rows.get(id);
  if (!row || row.encoded.version !== version) return;
  const gone = new Set(seqs);
  row.sent = row.sent.filter((w) => !gone.has(w.seq));
}

/** A row's waiting signals as stored, their events as text: the store kit parses them, as a database's. */
const storedSent = (row: Row): SentRow['sent'] => row.sent.map((w) => ({ seq: w.seq, event: w.json }));
