import { extname } from 'node:path';
import { replay, ValidationError, type WorkflowEvent } from '@stepfold/engine';
import type { Command } from 'commander';
import { loadDefinition, readUserFile } from '../definitions.js';
import { CLI_KINDS } from '../kinds.js';
import { type CommonOptions, jsonOption } from '../options.js';
import { createOutput } from '../output.js';
import { renderSnapshot } from '../snapshot-view.js';

/** The events of a file: a JSON array, or NDJSON (one event per line; `.ndjson`/`.jsonl`, or any file that is not one array). */
export function parseEvents(path: string, text: string): unknown[] {
  const bad = (line: number | null, message: string) =>
    new ValidationError('INVALID_EVENT', `${path} holds no valid events`, [
      { path: line === null ? '' : `line ${line}`, message },
    ]);
  const ext = extname(path).toLowerCase();
  if (ext !== '.ndjson' && ext !== '.jsonl' && text.trimStart().startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw bad(null, (e as Error).message);
    }
    if (!Array.isArray(parsed)) throw bad(null, 'expected a JSON array of events');
    return parsed;
  }
  const events: unknown[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    try {
      events.push(JSON.parse(line));
    } catch (e) {
      throw bad(i + 1, (e as Error).message);
    }
  });
  return events;
}

/** `stepfold replay <definition> <events>`: folds events through the reducer and prints the snapshot. */
export function register(program: Command): void {
  jsonOption(
    program
      .command('replay')
      .description("fold a list of events through the engine's reducer (no store) and print the snapshot")
      .argument(
        '<definition>',
        'workflow definition: .json, .yaml, .yml, or an ESM module (.js, .mjs) exporting one built workflow (file.js#name picks the export name)',
      )
      .argument('<events>', 'events: a JSON array, or NDJSON (one per line)'),
  ).action(async (definitionPath: string, eventsPath: string, options: CommonOptions) => {
    const out = createOutput(options.json === true);
    const def = await loadDefinition(definitionPath);
    const events = parseEvents(eventsPath, readUserFile(eventsPath, 'events'));
    // The reducer checks every event (INVALID_EVENT names the bad one).
    const snapshot = replay(def, events as WorkflowEvent[], { kinds: CLI_KINDS });
    out.result(snapshot, () =>
      snapshot
        ? [`replayed ${events.length} events`, ...renderSnapshot(snapshot)]
        : ['no events: no instance'],
    );
  });
}
