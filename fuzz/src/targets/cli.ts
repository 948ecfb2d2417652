import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRunner, defineWorkflow } from '@stepfold/engine';
import fc from 'fast-check';
// The CLI's build, by path: the fuzzer calls its `main` in process and needs no `stepfold` bin
// (a dependency on the package would link one, which fails before the CLI is built).
import { main } from '../../../packages/cli/dist/cli.js';
import { EXIT, RUN_EXIT } from '../../../packages/cli/dist/exit-codes.js';
import type { Target } from '../driver.js';
import { expect } from '../guard.js';
import { deep, PROTO_JSON } from '../hostile.js';
import { openPg, type PgFixture } from '../pg.js';

// CLI arguments: `main(argv)` in process, with argv built from the real commands and options and
// hostile values, against a PostgreSQL store. The answer is an exit code of the CLI's own set, never
// an uncaught exception, and 1 ("other") only for a driver's own coded error passed through.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const EXAMPLES = join(ROOT, 'examples/cli');

/** Every exit code the CLI documents. */
const KNOWN = new Set<number>([...Object.values(EXIT), ...Object.values(RUN_EXIT)]);

interface CliContext {
  pg: PgFixture;
  dir: string;
  files: Record<string, string>;
}

const IDS = ['exp-1', 'exp-2', 'exp-3', 'exp-4', 'exp-5'];

/** A hostile text argument: ids, names, JSON that is not an object, files that are not JSON. */
const text = (files: Record<string, string>) =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        ...IDS,
        'missing',
        'manager',
        'receipt',
        'pay',
        'waiting',
        'dlq',
        '5',
        '{"n":1}',
      ),
    },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '',
        ' ',
        '-',
        '--',
        '--json',
        '__proto__',
        'constructor',
        'a b',
        'x'.repeat(300),
        '\u0000',
        '💥',
        '{}',
        '[]',
        'null',
        '1e308',
        '{"decision":"approve"}',
        PROTO_JSON,
        '{"amount":"x"}',
        '{',
        JSON.stringify(deep(600, 'object')),
        '@',
        '@/nonexistent/file.json',
        `@${files['proto']}`,
        `@${files['torn']}`,
        `@${EXAMPLES}/expense.json`,
        `@${EXAMPLES}`,
      ),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
  );

const definitionsValue = (files: Record<string, string>) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(EXAMPLES) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        `${EXAMPLES}/expense.json`,
        `${EXAMPLES}/expense.json,${EXAMPLES}/expense.json`,
        `${EXAMPLES}/handlers.mjs`,
        '/nonexistent',
        files['torn']!,
        files['proto']!,
        files['mutated']!,
        '',
        ',',
      ),
    },
  );

type Argv = string[];

/** Exit codes seen per command (FUZZ_DEBUG): whether inputs get past the argument checks. */
const codes = new Map<string, number>();

function argvArb(c: CliContext): fc.Arbitrary<Argv> {
  const t = text(c.files);
  const store = fc.oneof(
    { weight: 12, arbitrary: fc.constant(c.pg.url) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'not a url',
        'mysql://127.0.0.1/db',
        `${c.pg.url}&table=Bad-Name`,
        `${c.pg.url}&table=${'x'.repeat(60)}`,
        'postgres://stepfold:wrong@127.0.0.1:5432/stepfold',
        'postgres://127.0.0.1:1/stepfold',
        'postgres://',
        'mongodb://127.0.0.1:27017',
      ),
    },
  );
  const opt = (name: string, value: fc.Arbitrary<string>) => fc.tuple(fc.constant(name), value);
  const per: Record<string, { positional: number; options: Array<fc.Arbitrary<[string, string]>> }> = {
    list: {
      positional: 0,
      options: [
        opt('--status', t),
        opt('--workflow', t),
        opt('--prefix', t),
        opt('--limit', t),
        opt('--cursor', t),
      ],
    },
    show: { positional: 1, options: [opt('--diagram', fc.constant(''))] },
    signal: { positional: 2, options: [opt('--payload', t), opt('--signal-id', t)] },
    send: { positional: 2, options: [opt('--payload', t), opt('--signal-id', t)] },
    approve: {
      positional: 1,
      options: [opt('--step', t), opt('--reason', t), opt('--by', t), opt('--payload', t)],
    },
    reject: {
      positional: 1,
      options: [opt('--step', t), opt('--reason', t), opt('--by', t), opt('--payload', t)],
    },
    cancel: { positional: 1, options: [opt('--reason', t)] },
    abort: { positional: 1, options: [opt('--reason', t)] },
    requeue: { positional: 1, options: [opt('--step', t), opt('--patch', t)] },
    children: {
      positional: 1,
      options: [opt('--step', t), opt('--status', t), opt('--limit', t), opt('--batch', t)],
    },
    diagram: { positional: 1, options: [opt('--id', t)] },
    replay: { positional: 2, options: [] },
    run: {
      positional: 1,
      options: [
        opt('--input', t),
        opt('--id', t),
        opt(
          '--handlers',
          fc.constantFrom(
            `${EXAMPLES}/expense-handlers.mjs`,
            `${EXAMPLES}/handlers.mjs`,
            '/nonexistent.mjs',
            c.files['torn']!,
          ),
        ),
      ],
    },
  };
  const fileArg = fc.constantFrom(
    `${EXAMPLES}/expense.json`,
    c.files['torn']!,
    c.files['proto']!,
    c.files['mutated']!,
    c.files['events']!,
    '/nonexistent',
  );
  const local = new Set(['run', 'replay', 'diagram']);
  return fc.constantFrom(...Object.keys(per)).chain((cmd) => {
    const spec = per[cmd]!;
    const positionalArb = local.has(cmd)
      ? fc.oneof({ weight: 3, arbitrary: fileArg }, { weight: 1, arbitrary: t })
      : t;
    // Mostly well-formed calls (the right arguments, the store and definitions given), so inputs
    // reach the store and the engine; now and then a count or a flag is off.
    const positionals = fc.oneof(
      {
        weight: 5,
        arbitrary: fc.array(positionalArb, { minLength: spec.positional, maxLength: spec.positional }),
      },
      { weight: 1, arbitrary: fc.array(positionalArb, { maxLength: spec.positional + 1 }) },
    );
    const required = local.has(cmd)
      ? []
      : [opt('--store', store), opt('--definitions', definitionsValue(c.files))];
    return fc
      .tuple(
        positionals,
        fc.subarray(spec.options).chain((os) => fc.tuple(...os)),
        fc.tuple(...required),
        fc.subarray([...required.keys()]),
        fc.boolean(),
        fc.boolean(),
      )
      .map(([positionals, options, needed, dropped, json, optionsFirst]) => {
        // One in a few calls loses a required option.
        const kept = (needed as Array<[string, string]>).filter(
          (_, i) => !dropped.includes(i) || dropped.length > 1,
        );
        const all = [
          ...(options as Array<[string, string]>),
          ...kept,
          ...(json ? [['--json', ''] as [string, string]] : []),
        ];
        const flat = all.flatMap(([n, v]) => (n === '--json' || n === '--diagram' ? [n] : [n, v]));
        return optionsFirst ? [cmd, ...flat, ...positionals] : [cmd, ...positionals, ...flat];
      });
  });
}

/** Runs main with stdout and stderr captured. */
async function runCli(args: Argv): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const writes = { out: process.stdout.write, err: process.stderr.write };
  process.stdout.write = ((chunk: string | Uint8Array) =>
    out.push(String(chunk)) > 0) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) =>
    err.push(String(chunk)) > 0) as typeof process.stderr.write;
  try {
    const code = await main(['node', 'stepfold', ...args]);
    return { code, out: out.join(''), err: err.join('') };
  } finally {
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
    process.exitCode = undefined;
  }
}

export const cli: Target<Argv, CliContext> = {
  name: 'cli',
  runs: 1_000,
  servers: true,
  budgetMs: 10_000,
  async open() {
    delete process.env['STEPFOLD_STORE'];
    delete process.env['STEPFOLD_DEFINITIONS'];
    const pg = await openPg('cli');
    const dir = mkdtempSync(join(tmpdir(), 'stepfold-fuzz-cli-'));
    const expense = JSON.parse((await import('node:fs')).readFileSync(`${EXAMPLES}/expense.json`, 'utf8'));
    const files = {
      torn: join(dir, 'torn.json'),
      proto: join(dir, 'proto.json'),
      mutated: join(dir, 'mutated.json'),
      events: join(dir, 'events.json'),
    };
    writeFileSync(files.torn, JSON.stringify(expense).slice(0, 50));
    writeFileSync(files.proto, PROTO_JSON);
    writeFileSync(
      files.mutated,
      JSON.stringify({ ...expense, steps: { ...expense.steps, __proto__: { kind: 'succeed' } } }).replace(
        '"__proto__"',
        '"__proto__"',
      ),
    );
    writeFileSync(
      files.events,
      JSON.stringify([
        { type: 'start', at: 1, id: 'r-1', input: { amount: 1 } },
        { type: 'task.completed', at: 2, step: 'check', attempt: 1 },
        JSON.parse(PROTO_JSON),
        { type: 'tick', at: 1e308 },
      ]),
    );
    const handlers = (await import(`${EXAMPLES}/expense-handlers.mjs`)) as Record<string, never>;
    const runner = createRunner({
      store: pg.store,
      workflows: [defineWorkflow(expense)],
      handlers: { ...handlers },
    });
    for (const id of IDS) await runner.start('expense', id, { amount: id === 'exp-5' ? 5000 : 40 });
    await runner.idle();
    return { pg, dir, files };
  },
  async close(c) {
    if (process.env['FUZZ_DEBUG']) console.log([...codes].sort().join('  '));
    rmSync(c.dir, { recursive: true, force: true });
    await c.pg.drop();
  },
  arbitrary: argvArb,
  async check(args) {
    let r: Awaited<ReturnType<typeof runCli>>;
    try {
      r = await runCli(args);
    } catch (e) {
      throw new Error(`main threw instead of answering an exit code: ${String(e)}`);
    }
    if (process.env['FUZZ_DEBUG'])
      codes.set(`${args[0]} ${r.code}`, (codes.get(`${args[0]} ${r.code}`) ?? 0) + 1);
    // "other" (1) is for a driver's own error passed through (it prints the driver's code, e.g.
    // 28P01 for a wrong password); an error with no code at all (a TypeError) is a bug.
    if (r.code === EXIT.other)
      expect(
        !/error ERROR:|"code":"ERROR"/.test(r.err + r.out),
        () => `exit 1 on an untyped error: ${(r.err || r.out).slice(0, 400)}`,
      );
    expect(
      KNOWN.has(r.code),
      () => `exit ${r.code} (not one of the CLI's codes): ${(r.err || r.out).slice(0, 400)}`,
    );
    if (args.includes('--json') && r.out) {
      let ok = true;
      try {
        JSON.parse(r.out);
      } catch {
        ok = false;
      }
      expect(ok, () => `--json printed what is not JSON: ${r.out.slice(0, 200)}`);
    }
  },
};
