import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// No module-level state decides what `step` does: a process that imports every entry of the
// package and one that imports only what it uses get the same results, refusals included.

const probe = fileURLToPath(new URL('./fixtures/purity-probe.mjs', import.meta.url));
const run = (mode: 'all' | 'none') =>
  JSON.parse(execFileSync(process.execPath, [probe, mode], { encoding: 'utf8' })) as Record<string, unknown>;

describe('importing an entry', () => {
  it('changes nothing about what step does: every entry imported or none, the same results', () => {
    const all = run('all');
    const none = run('none');
    expect(all).toEqual(none);
    // The probe covers both sides of the option: refused without the kinds, run with them.
    expect(none['fanWithout']).toEqual({ error: 'KIND_NOT_LOADED' });
    expect(none['childWithout']).toEqual({ error: 'KIND_NOT_LOADED' });
    expect(none['fanWith']).toHaveProperty('ok.status', 'running');
    expect(none['plain']).toHaveProperty('ok.version', 2);
    // Flow limits likewise: refused without flowControl, run with it; a program without limits
    // reduces to the very same snapshots whether flowControl is passed or not.
    expect(none['limitedWithout']).toEqual({ error: 'KIND_NOT_LOADED' });
    expect(none['limitedWith']).toHaveProperty('ok.tasks.a.needs', [
      { scope: 'limited/a', key: '1', limit: 1 },
    ]);
    expect(none['plainWithFlow']).toEqual(none['plain']);
  });
});
