import { type Snapshot, step, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { instanceRow, renderRows, renderSnapshot, summarize } from '../src/snapshot-view.js';

// `stepfold show` and `list` mark an attempt running past its lease (or deadline) as overdue: its
// runner stopped renewing it, most likely it died, and the next due poll retries it.

const job = workflow('job', 1).task('work', { handler: 'work' }).build();
const T = Date.UTC(2026, 0, 1);
const running: Snapshot = step(job, null, { type: 'start', at: T, id: 'j-1', input: {} });

describe('overdue attempts in the CLI views', () => {
  it('show: a running attempt past its lease is OVERDUE, with its lease; before it, not', () => {
    const late = renderSnapshot(running, [], T + 10_000).join('\n');
    expect(late).toContain('lease until 2026-01-01T00:00:10.000Z OVERDUE');
    const fine = renderSnapshot(running, [], T + 9_999).join('\n');
    expect(fine).toContain('lease until 2026-01-01T00:00:10.000Z');
    expect(fine).not.toContain('OVERDUE');
    // Without a time (a replayed snapshot), nothing is judged.
    expect(renderSnapshot(running).join('\n')).not.toContain('OVERDUE');
    expect(summarize(running, T + 10_000).tasks).toEqual([{ ...running.tasks.work, overdue: true }]);
    expect(summarize(running, T + 1).tasks).toEqual([running.tasks.work]);
  });

  it('list: the row counts the overdue attempts, and the status says so', () => {
    expect(instanceRow(running, T + 1).overdue).toBeUndefined();
    const row = instanceRow(running, T + 10_000);
    expect(row.overdue).toBe(1);
    expect(renderRows([row]).join('\n')).toContain('running (1 overdue)');
  });
});
