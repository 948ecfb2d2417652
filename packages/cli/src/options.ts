import { type Command, InvalidArgumentError, Option } from 'commander';
import { useKeyFile } from './codec-keys.js';
import { readUserFile } from './definitions.js';
import { UsageError } from './exit-codes.js';

/** Options every command takes. */
export interface CommonOptions {
  json?: boolean | undefined;
}

/** Options of a command that reads a store. */
export interface StoreOptions extends CommonOptions {
  store?: string | undefined;
  /** `--key-file`: the codec's keys (read by `openStore` through `codec-keys.ts`). */
  keyFile?: string | undefined;
}

/** Options of a command that writes events: it needs the definitions to build a runner. */
export interface ActingOptions extends StoreOptions {
  definitions?: string[] | undefined;
}

/** Adds `--json`. */
export function jsonOption(cmd: Command): Command {
  return cmd.option('--json', 'print machine-readable JSON only');
}

/** Adds `--store <url>` (default: `STEPFOLD_STORE`). */
export function storeOption(cmd: Command): Command {
  return cmd
    .option(
      '--store <url>',
      'postgres://…, redis://…, mongodb://…/db or dynamodb://host:port/table (default: $STEPFOLD_STORE)',
    )
    .option(
      '--key-file <path>',
      'JSON keys of the runners\' codec, {"current": "k2", "keys": {"k2": "<base64>"}}, to decrypt data (default: $STEPFOLD_KEY_FILE)',
    )
    .hook('preAction', (_, action) => useKeyFile(action.opts()['keyFile']));
}

/** Adds `--definitions <paths>` (repeatable, comma-separated; default: `STEPFOLD_DEFINITIONS`). */
export function definitionsOption(cmd: Command, required = true): Command {
  return cmd.addOption(
    new Option(
      '--definitions <paths>',
      `definitions: JSON/YAML files, directories of them, or ESM modules (.js, .mjs) exporting built workflows (schemas kept); comma-separated or repeated${
        required ? '' : '; needed for --diagram'
      } (default: $STEPFOLD_DEFINITIONS)`,
    )
      // No commander default: the flag replaces the environment variable rather than adding to it.
      .argParser((value: string, previous: string[] | undefined) => [
        ...(previous ?? []),
        ...splitList(value),
      ]),
  );
}

function splitList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Parses a positive integer option (`--limit`). */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

/** A JSON argument given inline or as `@file`; `what` names it in the error. */
export function jsonArgument(value: string, what: string): unknown {
  const text = value.startsWith('@') ? readUserFile(value.slice(1), what) : value;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${what} is not valid JSON: ${(e as Error).message}`);
  }
}

/** A JSON object argument (`--patch`); anything else is a usage error. */
export function jsonObjectArgument(value: string, what: string): Record<string, unknown> {
  const parsed = jsonArgument(value, what);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`${what} must be a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

/** `--definitions`, else `STEPFOLD_DEFINITIONS`, else none. */
export function definitionPaths(options: { definitions?: string[] | undefined }): string[] {
  return options.definitions ?? splitList(process.env['STEPFOLD_DEFINITIONS'] ?? '');
}

/** The definition paths, or a usage error naming the command when there are none. */
export function requireDefinitions(
  options: { definitions?: string[] | undefined },
  command: string,
): string[] {
  const paths = definitionPaths(options);
  if (!paths.length) {
    throw new UsageError(
      `${command} needs the workflow definitions to build a runner: pass --definitions <dir or files> or set STEPFOLD_DEFINITIONS`,
    );
  }
  return paths;
}
