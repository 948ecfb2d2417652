import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { defineWorkflow, type Handler, type WorkflowDefinition } from '@stepfold/engine';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The compiled CLI the package's `bin` points at. */
export const BIN = fileURLToPath(new URL('../dist/bin.js', import.meta.url));

/** Paths of the examples the tests run (relative to {@link ROOT}, as a user would type them). */
export const EXAMPLES = {
  dir: 'examples/cli',
  orderSaga: 'examples/cli/order-saga.yaml',
  orderHandlers: 'examples/cli/handlers.mjs',
  expense: 'examples/cli/expense.json',
  expenseHandlers: 'examples/cli/expense-handlers.mjs',
};

/** What one CLI run printed and how it exited. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the compiled CLI as a child process in the repository root. */
export function cli(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`pnpm build\` first`);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      // STEPFOLD_* from the caller's shell must not leak into a test's command line.
      { cwd: ROOT, env: { ...process.env, STEPFOLD_STORE: '', STEPFOLD_DEFINITIONS: '', ...env } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The JSON a `--json` run printed on stdout. */
export function parsed<T = Record<string, unknown>>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
}

/** The expense example's definition, as the tests' own runners register it. */
export function expenseDefinition(): WorkflowDefinition {
  return defineWorkflow(JSON.parse(readFileSync(`${ROOT}${EXAMPLES.expense}`, 'utf8')));
}

/** The handlers of an example module (its named exports). */
export async function exampleHandlers(path: string): Promise<Record<string, Handler>> {
  const mod = (await import(pathToFileURL(`${ROOT}${path}`).href)) as Record<string, Handler>;
  return { ...mod };
}

/** A name no other test run uses: lowercase letters, digits and `_`, for schemas, prefixes and tables. */
export function uniqueName(tag: string): string {
  return `cli_${tag}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
}
