import type { Snapshot } from '../snapshot.js';
import type { OnWrite } from './write-request.js';

/**
 * One runner call's share of the work: the handler runs its writes started (a set of their
 * promises, waited for before the call resolves), and what those writes reported.
 */
export class Work extends Set<Promise<unknown>> {
  /** The newest snapshot this call wrote, per instance. */
  readonly latest = new Map<string, Snapshot>();
  /** Wake time each instance had before this call's first write to it. */
  readonly dueAt = new Map<string, number | null>();
  /** Sent signals the reducer refused for good (skipped, consumed all the same). */
  readonly refused: unknown[] = [];
  /** The one `onWrite` of this call's writes (one function, so its handler results can share a write). */
  report: OnWrite | undefined;
}
