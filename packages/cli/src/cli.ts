import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import * as commands from './commands/index.js';
import { EXIT, exitCodeOf, UsageError } from './exit-codes.js';
import { printError } from './output.js';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** The `stepfold` program with every command registered; errors are thrown, never printed or exited on. */
export function createProgram(): Command {
  const program = new Command('stepfold')
    .description('run stepfold workflows locally, and inspect and steer instances in a store')
    .version(pkg.version)
    .showSuggestionAfterError()
    .exitOverride()
    // main() prints every error itself as `error CODE: message`.
    .configureOutput({ outputError: () => {} });
  for (const command of Object.values(commands)) command.register(program);
  return program;
}

/** Runs the CLI on `argv` (node, script, args…) and resolves with the exit code; prints, never exits. */
export async function main(argv: readonly string[] = process.argv): Promise<number> {
  const json = argv.includes('--json');
  process.exitCode = undefined;
  try {
    await createProgram().parseAsync([...argv]);
    const code = Number(process.exitCode ?? EXIT.ok);
    return Number.isInteger(code) ? code : EXIT.other;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.exitCode === 0) return EXIT.ok; // --help, --version
      // No command given: commander printed the help already.
      if (e.code === 'commander.help') return EXIT.usage;
      printError(new UsageError(e.message.replace(/^error: /, '')), EXIT.usage, json);
      return EXIT.usage;
    }
    const code = exitCodeOf(e);
    printError(e, code, json);
    return code;
  }
}
