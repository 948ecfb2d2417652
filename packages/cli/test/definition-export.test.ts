import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryStore, createRunner, type Store, type WorkflowDefinition } from '@stepfold/engine';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import { cli, parsed } from './cli.js';
import { runInProcess } from './in-process.js';

// `file.js#name`: every command that takes a definition takes one export of a module that exports
// several, as `migrate --migration` does. `run`, `replay` and `diagram` run the compiled CLI;
// `--definitions` runs in this process over a memory store (the store module replaced).

const held = vi.hoisted(() => ({ store: undefined as Store | undefined }));
vi.mock('../src/store-url.js', () => ({
  storeUrlOf: () => 'memory://test',
  withStore: async <T>(_url: string, body: (o: { store: Store }) => Promise<T>) =>
    body({ store: held.store! }),
}));
const { main } = await import('../src/cli.js');

const MODULE = `export const ship = {
  name: 'ship', version: 1, start: 'send',
  steps: { send: { kind: 'task', handler: 'send' } },
};
export const bill = {
  name: 'bill', version: 1, start: 'charge',
  steps: { charge: { kind: 'task', handler: 'charge' } },
};
export const helper = () => 1;
`;

let dir: string;
const mod = () => join(dir, 'workflows.mjs');

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'stepfold-export-'));
  writeFileSync(mod(), MODULE);
  writeFileSync(join(dir, 'handlers.mjs'), 'export const send = () => ({ tracking: "T-1" });\n');
  writeFileSync(join(dir, 'ship.json'), JSON.stringify({ name: 'ship', version: 1, start: 'a', steps: {} }));
  writeFileSync(
    join(dir, 'events.json'),
    JSON.stringify([
      { type: 'start', at: 0, id: 's-1' },
      { type: 'task.completed', at: 1, step: 'send', attempt: 1, output: { tracking: 'T-9' } },
    ]),
  );
});

describe('a definition named by file.js#export', () => {
  it('diagram draws the named export of a module that exports several', async () => {
    const r = await cli(['diagram', `${mod()}#bill`]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(EXIT.ok);
    expect(r.stdout).toContain('charge');
    expect(r.stdout).not.toContain('send');
  });

  it('run runs the named export', async () => {
    const r = await cli(['run', `${mod()}#ship`, '--handlers', join(dir, 'handlers.mjs'), '--json']);
    expect(r.code).toBe(EXIT.ok);
    expect(parsed(r)).toMatchObject({
      workflow: { name: 'ship' },
      status: 'completed',
      output: { tracking: 'T-1' },
    });
  });

  it('replay folds events through the named export', async () => {
    const r = await cli(['replay', `${mod()}#ship`, join(dir, 'events.json'), '--json']);
    expect(r.code).toBe(EXIT.ok);
    expect(parsed(r)).toMatchObject({ id: 's-1', workflow: { name: 'ship' }, status: 'completed' });
  });

  it('a module of several without #export is refused with the way to pick one (exit 2)', async () => {
    const r = await cli(['diagram', mod()]);
    expect(r.code).toBe(EXIT.usage);
    expect(r.stderr).toContain('holds 2 definitions (bill v1, ship v1)');
    expect(r.stderr).toContain(`pick one with ${mod()}#<export>`);
  });

  it('a missing export, one that is no definition, and #export on a JSON file are usage errors (exit 2)', async () => {
    const missing = await cli(['diagram', `${mod()}#shipp`]);
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.stderr).toContain('has no export named shipp (it exports bill, helper, ship)');
    const helper = await cli(['diagram', `${mod()}#helper`]);
    expect(helper.code).toBe(EXIT.usage);
    expect(helper.stderr).toContain(`${mod()}#helper is not a workflow definition`);
    const json = await cli(['diagram', `${join(dir, 'ship.json')}#ship`]);
    expect(json.code).toBe(EXIT.usage);
    expect(json.stderr).toContain('names an export of an ESM module');
  });

  it('--definitions takes file.js#export: only that export is registered', async () => {
    const store = createMemoryStore();
    held.store = store;
    const { ship, bill } = (await import(mod())) as Record<'ship' | 'bill', WorkflowDefinition>;
    const runner = createRunner({ store, workflows: [ship, bill], execute: false });
    await runner.start('ship', 's-1');
    await runner.start('bill', 'b-1');
    const capture = (...args: string[]) => runInProcess(main, args);
    const shown = await capture('show', 's-1', '--diagram', '--definitions', `${mod()}#ship`, '--json');
    expect(shown.code).toBe(EXIT.ok);
    expect((JSON.parse(shown.stdout) as { diagram: string }).diagram).toContain('send');
    const other = await capture('show', 'b-1', '--diagram', '--definitions', `${mod()}#ship`);
    expect(other.code).toBe(EXIT.usage);
    expect(other.stderr).toContain('no definition of bill v1 among --definitions');
  });
});
