import type { Command } from 'commander';
import * as abort from './abort.js';
import * as approve from './approve.js';
import * as cancel from './cancel.js';
import * as diagram from './diagram.js';
import * as list from './list.js';
import * as reject from './reject.js';
import * as replay from './replay.js';
import * as requeue from './requeue.js';
import * as run from './run.js';
import * as show from './show.js';
import * as signal from './signal.js';

/** Every command, in the order `stepfold --help` lists them; a new command is one line here. */
export const COMMANDS: readonly { register(program: Command): void }[] = [
  run,
  list,
  show,
  signal,
  approve,
  reject,
  cancel,
  abort,
  requeue,
  replay,
  diagram,
];
