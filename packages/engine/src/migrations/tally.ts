/** One distinct reason instances were refused: how many, and a few of their ids. */
export interface ReasonCount {
  reason: string;
  count: number;
  samples: string[];
}

// Reasons are stable strings (step ids, kinds, versions), so there are few; a recipe's messages
// could vary per instance, so past this many the rest count under one line.
const MAX_REASONS = 200;
const OTHER = 'other reasons (more distinct reasons than a report keeps)';

/** Counts reasons with at most `samples` ids each: memory bounded whatever the number of instances. */
export class ReasonTally {
  private readonly byReason = new Map<string, ReasonCount>();

  constructor(private readonly samples: number) {}

  /** Counts `id` once under each of its reasons. */
  add(id: string, reasons: readonly string[]): void {
    for (const r of new Set(reasons)) {
      const key = this.byReason.has(r) || this.byReason.size < MAX_REASONS ? r : OTHER;
      let entry = this.byReason.get(key);
      if (!entry) {
        entry = { reason: key, count: 0, samples: [] };
        this.byReason.set(key, entry);
      }
      entry.count++;
      if (entry.samples.length < this.samples) entry.samples.push(id);
    }
  }

  /** The reasons, most frequent first. */
  list(): ReasonCount[] {
    return [...this.byReason.values()]
      .map((r) => ({ ...r, samples: [...r.samples] }))
      .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
  }
}
