import type { EncodedSnapshot } from '@stepfold/engine';
import { isValidId, type Snapshot, type WakeNotice } from '@stepfold/engine';

/**
 * The attribute that tells a stream reader what the write that made a record announces: `t` a
 * timer, `b` a timer while a task runs (busy), `h` a task handed to any worker, `p` a signal sent
 * to the inbox. Set only by the write that announces; every other write (claims, releases, drops,
 * a save that announces nothing) removes it, so its record announces nothing.
 */
export const NOTE_ATTRIBUTE = 'note';

/** What {@link NOTE_ATTRIBUTE} holds. */
export type Note = 't' | 'b' | 'h' | 'p';

/**
 * Longest snapshot JSON (with its signals, for a send), in UTF-16 units, a notice built from a
 * stream record carries: a larger one is left out and the worker claims the instance by id, so a
 * subscriber does not parse large snapshots it will most likely not take.
 */
export const NOTICE_SNAPSHOT_MAX_CHARS = 64 * 1024;

/** The note a create or save stores for its record, or undefined when it announces nothing. */
export function noteOf(row: EncodedSnapshot): Note | undefined {
  if (row.notice === null) return undefined;
  return row.handoff ? 'h' : row.busy ? 'b' : 't';
}

/**
 * An attribute value as a stream record carries it: the SDK's and Lambda's event shapes alike
 * (only what a notice reads).
 */
export interface ImageValue {
  S?: string | undefined;
  N?: string | undefined;
  L?: ImageValue[] | undefined;
  M?: Record<string, ImageValue> | undefined;
}

/** A record's new image: the item as the write left it. */
export type StreamImage = Record<string, ImageValue>;

/**
 * The snapshot a record's image carries, when it parses and names the instance `id` (the runner
 * checks the rest as it checks a load). Never throws: the image is untrusted input.
 */
export function snapshotOfImage(image: StreamImage | undefined, id: string): Snapshot | undefined {
  return parsed(image?.['snapshot']?.S, id);
}

function parsed(json: string | undefined, id: string): Snapshot | undefined {
  if (json === undefined) return undefined;
  try {
    const s = JSON.parse(json) as unknown;
    // Kept only when it names the instance the record is about; the runner checks the rest as a load.
    return typeof s === 'object' && s !== null && (s as { id?: unknown }).id === id
      ? (s as Snapshot)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The wake notice of a stream record's new image, as the other stores' writes announce it: a
 * timer or a hand-off at the item's `wakeAt` (`busy`, or the snapshot of a hand-off when it is at
 * most {@link NOTICE_SNAPSHOT_MAX_CHARS}), or a send at `sentAt` with the snapshot and every
 * signal waiting (`sent: []` without them when too long). Null when the write announced nothing
 * or the image is not one of an instance. Never throws: the image is untrusted input.
 *
 * @example
 * const notice = noticeOfImage(record.dynamodb?.NewImage, Date.now());
 * if (notice) listener.wake(notice);
 */
export function noticeOfImage(image: StreamImage | undefined, sentAt: number): WakeNotice | null {
  const note = image?.[NOTE_ATTRIBUTE]?.S;
  const id = image?.['id']?.S;
  if (!image || note === undefined || id === undefined || !isValidId(id)) return null;
  const workflow = image['workflow']?.S;
  const json = image['snapshot']?.S;
  if (note === 'p') {
    const notice: WakeNotice = { at: sentAt, ...(workflow === undefined ? {} : { workflow }), id };
    const waiting = image['sent']?.L ?? [];
    const texts = waiting.map((el) => el.M?.['e']?.S);
    const chars = texts.reduce((n, t) => n + (t?.length ?? 0), json?.length ?? 0);
    const base = Number(image['sentBase']?.N ?? 0);
    const snapshot = chars <= NOTICE_SNAPSHOT_MAX_CHARS ? parsed(json, id) : undefined;
    if (snapshot && Number.isSafeInteger(base) && texts.every((t) => t !== undefined)) {
      try {
        notice.sent = texts.map((t, i) => ({ seq: base + i, event: JSON.parse(t!) }));
        notice.snapshot = snapshot;
        return notice;
      } catch {
        // A signal that is not JSON: claim them by id, where the inbox reads them itself.
      }
    }
    notice.sent = [];
    return notice;
  }
  const at = Number(image['wakeAt']?.N);
  if (!Number.isFinite(at) || !(note === 't' || note === 'b' || note === 'h')) return null;
  const notice: WakeNotice = { at, ...(workflow === undefined ? {} : { workflow }), id };
  if (note === 'b') notice.busy = true;
  if (note === 'h' && json !== undefined && json.length <= NOTICE_SNAPSHOT_MAX_CHARS) {
    const snapshot = parsed(json, id);
    if (snapshot) notice.snapshot = snapshot;
  }
  return notice;
}
