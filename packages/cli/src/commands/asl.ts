import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { type CaseResult, runConformance } from '@stepfold/asl/conformance';
import type { Command } from 'commander';
import { UsageError } from '../exit-codes.js';
import { jsonOption } from '../options.js';
import { importAsl, runAsl } from './asl-run.js';

interface ConformanceOptions {
  json?: boolean | undefined;
  filter?: string | undefined;
}

/** A case's line for people: its levels, and why it failed. */
function line(r: CaseResult): string {
  const levels = `L1 ${r.l1.padEnd(4)} L2 ${r.l2.padEnd(4)} L3 ${r.l3.padEnd(4)}`;
  return `${levels} ${r.case}${r.reason ? `\n      ${r.reason}` : ''}`;
}

/** `stepfold asl …`: AWS Step Functions state machines. */
export function register(program: Command): void {
  const asl = program
    .command('asl')
    .description('AWS Step Functions state machines (Amazon States Language)');
  jsonOption(
    asl
      .command('import')
      .description(
        'import a state machine: print (or write) the stepfold definition and list what is not supported',
      )
      .argument('<file>', 'the state machine definition (.asl.json, .json)')
      .option('--name <name>', 'the workflow name (default: the file name)')
      .option('--out <file>', 'write the definition JSON here ({ definition, workflows })'),
  ).action(async (file: string, options: { json?: boolean; name?: string; out?: string }) => {
    process.exitCode = importAsl(file, options);
  });
  jsonOption(
    asl
      .command('run')
      .description(
        'run a state machine on the in-memory store with Lambda functions from a module, jumping a simulated clock to each timer',
      )
      .argument('<file>', 'the state machine definition (.asl.json, .json)')
      .requiredOption(
        '--handlers <module>',
        'ESM module (.js, .mjs) exporting the Lambda functions, named after the functions (or a default object by ARN or name)',
      )
      .option('--input <json>', 'execution input: JSON, or @file')
      .option('--name <name>', 'the workflow name (default: the file name)')
      .option('--history', "also print the execution's history as Step Functions records it"),
  ).action(
    async (
      file: string,
      options: { json?: boolean; name?: string; handlers: string; input?: string; history?: boolean },
    ) => {
      process.exitCode = await runAsl(file, options);
    },
  );
  jsonOption(
    asl
      .command('conformance')
      .description(
        'replay a directory of recorded Step Functions executions (corpus format) through the importer and report each case: L1 result, L2 events, L3 state I/O',
      )
      .argument('<dir>', 'the corpus directory (INDEX.json, or folders with case.json)')
      .option('--filter <text>', 'only the cases whose id contains this text'),
  ).action(async (dir: string, options: ConformanceOptions) => {
    const root = resolve(dir);
    if (!existsSync(root)) throw new UsageError(`no directory ${dir}`);
    const filter = options.filter;
    // One JSON object per line under --json (a case as soon as it is known, then the summary).
    const { summary } = await runConformance(root, {
      ...(filter ? { filter: (id: string) => id.includes(filter) } : {}),
      onCase: (r) => process.stdout.write(`${options.json ? JSON.stringify(r) : line(r)}\n`),
    });
    if (options.json) process.stdout.write(`${JSON.stringify({ summary })}\n`);
    else {
      const f = (l: Record<string, number>) => `${l['pass']} pass, ${l['fail']} fail, ${l['n/a']} n/a`;
      process.stdout.write(
        `\n${summary.cases} cases — L1: ${f(summary.l1)}; L2: ${f(summary.l2)}; L3: ${f(summary.l3)}\n`,
      );
    }
  });
}
