import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT, RUN_EXIT } from '../src/exit-codes.js';
import { cli, EXAMPLES, parsed } from './cli.js';

const order = ['run', EXAMPLES.orderSaga, '--handlers', EXAMPLES.orderHandlers];

describe('stepfold run', () => {
  it('runs the order saga to completion: two failed charges, retries and a sleep on the simulated clock', async () => {
    const r = await cli([...order, '--input', '{"sku":"BOOK-7","amount":25,"email":"ada@example.com"}']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(EXIT.ok);
    const lines = r.stdout.split('\n');
    const events = (event: string, step: string) =>
      lines.filter((l) => l.includes(` ${event} `) && l.includes(` ${step}`)).length;
    expect(events('step.started', 'reserve-stock')).toBe(1);
    expect(events('step.completed', 'reserve-stock')).toBe(1);
    expect(events('task.failed', 'charge-payment')).toBe(2);
    expect(events('task.retry-scheduled', 'charge-payment')).toBe(2);
    expect(events('step.completed', 'charge-payment')).toBe(1);
    expect(events('step.completed', 'send-receipt')).toBe(1);
    // Two retry backoffs and the one-hour settlement window: three jumps of the simulated clock.
    expect(lines.filter((l) => l.startsWith('clock: ')).length).toBe(3);
    expect(r.stdout).toContain('simulated');
    expect(r.stdout).toContain('status: completed');
    expect(r.stdout).toContain('receipt for P-BOOK-7-3 to ada@example.com');
    // Progress comes in order: the step starts before its attempts fail, and completes after.
    const at = (text: string) => lines.findIndex((l) => l.includes(text));
    expect(at('step.started             charge-payment')).toBeLessThan(at('task.failed'));
    expect(at('step.completed           charge-payment')).toBeGreaterThan(at('task.failed'));
  });

  it('prints one JSON document with --json: status, output, clock jumps and progress', async () => {
    const r = await cli([
      ...order,
      '--input',
      '{"sku":"PEN-1","email":"bo@example.com"}',
      '--json',
      '--id',
      'o-9',
    ]);
    expect(r.code).toBe(EXIT.ok);
    const out = parsed<{
      id: string;
      status: string;
      exitCode: number;
      output: { sent: string };
      simulatedMs: number;
      clockJumps: { from: number; to: number }[];
      progress: { event: string; step?: string; attempt?: number }[];
    }>(r);
    expect(out).toMatchObject({ id: 'o-9', status: 'completed', exitCode: 0 });
    expect(out.output.sent).toBe('receipt for P-PEN-1-3 to bo@example.com');
    expect(out.clockJumps).toHaveLength(3);
    expect(out.simulatedMs).toBe(1000 + 2000 + 3_600_000);
    expect(out.progress.filter((p) => p.event === 'task.failed').map((p) => p.attempt)).toEqual([1, 2]);
  });

  it('exits 10 when the workflow fails, after compensating', async () => {
    const r = await cli([...order, '--input', '{"sku":"BOOK-7","decline":true}']);
    expect(r.code).toBe(RUN_EXIT.failed);
    expect(r.stdout).toMatch(/compensation\.completed\s+reserve-stock/);
    expect(r.stdout).toContain('status: failed');
    expect(r.stdout).toContain('DECLINED');
  });

  it('exits 13 for a workflow parked in dlq (the human step times out on the simulated clock)', async () => {
    const r = await cli([
      'run',
      EXAMPLES.expense,
      '--handlers',
      EXAMPLES.expenseHandlers,
      '--input',
      '{"amount":5}',
    ]);
    expect(r.code).toBe(RUN_EXIT.dlq);
    expect(r.stdout).toMatch(/step\.dlq\s+manager/);
  });

  it('takes --input from a file, and a default-export handlers object', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stepfold-cli-'));
    writeFileSync(join(dir, 'input.json'), '{"amount":7}');
    writeFileSync(
      join(dir, 'handlers.mjs'),
      'export default { checkClaim: () => ({ ok: true }), payClaim: ({ input }) => ({ paid: input.amount }) };\n',
    );
    writeFileSync(
      join(dir, 'pay.yml'),
      'name: pay\nversion: 1\nstart: pay\nsteps:\n  pay: { kind: task, handler: payClaim, input: { amount: input.amount } }\n',
    );
    const r = await cli([
      'run',
      join(dir, 'pay.yml'),
      '--handlers',
      join(dir, 'handlers.mjs'),
      '--input',
      `@${join(dir, 'input.json')}`,
      '--json',
    ]);
    expect(r.code).toBe(EXIT.ok);
    expect(parsed(r).output).toEqual({ paid: 7 });
  });

  it('refuses TypeScript handlers, bad input and unknown files as usage errors (exit 2)', async () => {
    const ts = await cli(['run', EXAMPLES.orderSaga, '--handlers', 'handlers.ts']);
    expect(ts.code).toBe(EXIT.usage);
    expect(ts.stderr).toMatch(/^error USAGE: .*TypeScript are not supported/);
    const input = await cli([...order, '--input', '{not json']);
    expect(input.code).toBe(EXIT.usage);
    const missing = await cli(['run', 'nope.yaml', '--handlers', EXAMPLES.orderHandlers, '--json']);
    expect(missing.code).toBe(EXIT.usage);
    expect(parsed<{ error: { code: string; exitCode: number } }>(missing).error).toMatchObject({
      code: 'USAGE',
      exitCode: EXIT.usage,
    });
    const noHandlers = await cli(['run', EXAMPLES.orderSaga]);
    expect(noHandlers.code).toBe(EXIT.usage);
    expect(noHandlers.stderr).toContain("required option '--handlers <module>'");
  });

  it('reports an invalid definition (exit 5) and missing handlers (exit 7)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stepfold-cli-'));
    writeFileSync(
      join(dir, 'bad.json'),
      '{"name":"bad","version":1,"start":"a","steps":{"a":{"kind":"task"}}}',
    );
    const bad = await cli(['run', join(dir, 'bad.json'), '--handlers', EXAMPLES.orderHandlers]);
    expect(bad.code).toBe(EXIT.invalid);
    expect(bad.stderr).toMatch(/^error INVALID_DEFINITION: /);
    const unknown = await cli(['run', EXAMPLES.expense, '--handlers', EXAMPLES.orderHandlers]);
    expect(unknown.code).toBe(EXIT.definition);
    expect(unknown.stderr).toMatch(/^error UNKNOWN_HANDLER: .*checkClaim/s);
  });
});

describe('stepfold replay and diagram (no store)', () => {
  it('folds an NDJSON event file through the reducer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stepfold-cli-'));
    const events = [
      { type: 'start', at: 0, id: 'e-1', input: { amount: 3 } },
      { type: 'task.completed', at: 1, step: 'check', attempt: 1, output: { ok: true } },
      { type: 'signal', at: 2, name: 'manager', payload: { decision: 'approve' } },
    ];
    writeFileSync(join(dir, 'events.ndjson'), `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
    writeFileSync(join(dir, 'events.json'), JSON.stringify(events));
    for (const file of ['events.ndjson', 'events.json']) {
      const r = await cli(['replay', EXAMPLES.expense, join(dir, file), '--json']);
      expect(r.code).toBe(EXIT.ok);
      const s = parsed<{ id: string; version: number; status: string; tasks: Record<string, unknown> }>(r);
      expect(s).toMatchObject({ id: 'e-1', version: 3, status: 'running' });
      expect(Object.keys(s.tasks)).toEqual(['pay']);
    }
    const human = await cli(['replay', EXAMPLES.expense, join(dir, 'events.ndjson')]);
    expect(human.stdout).toContain('replayed 3 events');
    expect(human.stdout).toMatch(/manager\s+completed/);
  });

  it('refuses an event that contradicts the snapshot (exit 5)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stepfold-cli-'));
    const events = [
      { type: 'start', at: 0, id: 'e-1' },
      { type: 'signal', at: 2, name: 'manager', payload: { ok: true } },
      { type: 'task.completed', at: 1, step: 'pay', attempt: 1 },
    ];
    writeFileSync(join(dir, 'events.json'), JSON.stringify(events));
    const r = await cli(['replay', EXAMPLES.expense, join(dir, 'events.json')]);
    expect(r.code).toBe(EXIT.invalid);
    expect(r.stderr).toMatch(/^error INVALID_EVENT: /);
  });

  it('prints a definition as a Mermaid flowchart', async () => {
    const r = await cli(['diagram', EXAMPLES.orderSaga]);
    expect(r.code).toBe(EXIT.ok);
    expect(r.stdout.startsWith('flowchart')).toBe(true);
    expect(r.stdout).toContain('chargePayment');
    const json = parsed<{ diagram: string }>(await cli(['diagram', EXAMPLES.expense, '--json']));
    expect(json.diagram.startsWith('flowchart')).toBe(true);
  });

  it('exits 2 for usage mistakes: unknown command, missing store', async () => {
    expect((await cli(['frobnicate'])).code).toBe(EXIT.usage);
    const noStore = await cli(['list']);
    expect(noStore.code).toBe(EXIT.usage);
    expect(noStore.stderr).toContain('error USAGE: no store');
    expect((await cli(['--version'])).code).toBe(EXIT.ok);
  });
});
