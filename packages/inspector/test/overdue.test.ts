import { type Snapshot, step, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { tasksTable } from '../src/views/instance-sections.js';

// The inspector marks an attempt running past its lease (or deadline) as overdue: its runner
// stopped renewing it, most likely it died, and the next due poll retries it.

const job = workflow('job', 1).task('work', { handler: 'work' }).build();
const T = Date.UTC(2026, 0, 1);
const running: Snapshot = step(job, null, { type: 'start', at: T, id: 'j-1', input: {} });

describe('the tasks table', () => {
  it('shows each lease and marks an attempt past it overdue', async () => {
    const fine = String(await tasksTable(running, T + 9_999));
    expect(fine).toContain('<th>lease until</th>');
    expect(fine).toContain('s-running');
    expect(fine).not.toContain('overdue');
    const late = String(await tasksTable(running, T + 10_000));
    expect(late).toContain('<tr class="overdue">');
    expect(late).toContain('s-overdue');
  });
});
