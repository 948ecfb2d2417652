import { readFile } from 'node:fs/promises';
import { aesGcmCodec, type SealingCodec } from '@stepfold/engine';
import { UsageError } from './exit-codes.js';

// The keys the CLI decrypts with: a JSON file named by `--key-file` or `STEPFOLD_KEY_FILE`,
// `{ "current": "k2", "keys": { "k2": "<base64 of 32 bytes>", "k1": "…" } }`. Without one,
// encrypted values show as `[encrypted k2]` and commands that write refuse an instance holding them.

let flag: string | undefined;

/** Records the `--key-file` of the command about to run (its `preAction` hook). */
export function useKeyFile(path: string | undefined): void {
  flag = path;
}

/** The codec of the key file given, or undefined when none is; a usage error for a file it cannot use. */
export async function keyFileCodec(): Promise<SealingCodec | undefined> {
  const path = flag ?? (process.env['STEPFOLD_KEY_FILE'] || undefined);
  if (path === undefined) return undefined;
  let parsed: { keys?: Record<string, string>; current?: string };
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (e) {
    throw new UsageError(`cannot read the key file ${path}: ${(e as Error).message}`);
  }
  try {
    return aesGcmCodec({ keys: parsed.keys ?? {}, current: parsed.current });
  } catch (e) {
    throw new UsageError(`key file ${path}: ${(e as Error).message}`);
  }
}
