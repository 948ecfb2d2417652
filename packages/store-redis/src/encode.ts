import type { EncodedSnapshot } from '@stepfold/engine';

/** The hash fields and index values of one snapshot, as the create and save scripts take them first. */
export function rowArgs(e: EncodedSnapshot): string[] {
  const wakeAt = e.wakeAt === null ? '' : String(e.wakeAt); // '' when the instance has no wake time
  return [e.id, e.json, String(e.version), e.status, e.workflow, wakeAt, e.fairKey ?? ''];
}

/** How a store sends wake hints: where they go and with which command. */
export interface HintRoute {
  /** `PUBLISH` on one server; `SPUBLISH` on a cluster, so the hint stays in the store's shard. */
  command: 'PUBLISH' | 'SPUBLISH';
  channel: string;
}

/**
 * Longest snapshot JSON, in UTF-16 units, a hand-off's hint carries: every subscriber receives it,
 * so a larger one goes without and the worker claims the instance by id.
 */
export const HANDOFF_MAX_CHARS = 8000;

/**
 * The wake-hint arguments the create and save scripts take after their own: an empty payload when
 * the write announces nothing (none is built), else the payload `{"at":..,"w":"..","i":".."}` (due time,
 * workflow, instance), command and channel. A write that hands a task to any worker adds
 * `"s":<snapshot JSON>`, so a worker can take the task with no claim and no load.
 */
export function hintArgs(e: EncodedSnapshot, route: HintRoute): string[] {
  if (e.notice === null) return ['', '', ''];
  const bare = JSON.stringify(
    e.busy ? { at: e.notice, w: e.workflow, i: e.id, b: 1 } : { at: e.notice, w: e.workflow, i: e.id },
  );
  const payload =
    e.handoff && e.json.length <= HANDOFF_MAX_CHARS ? `${bare.slice(0, -1)},"s":${e.json}}` : bare;
  return [payload, route.command, route.channel];
}

/** A `ZRANGEBYSCORE` bound for `now` (a number, checked by the kit). */
export function scoreBound(now: number): string {
  if (now === Number.POSITIVE_INFINITY) return '+inf';
  if (now === Number.NEGATIVE_INFINITY) return '-inf';
  return String(now);
}
