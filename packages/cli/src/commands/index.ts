// Every command, one line each: a module exporting `register(program)`. `stepfold --help` lists
// them in the order of this namespace's keys, which is alphabetical.
export * as abort from './abort.js';
export * as approve from './approve.js';
export * as asl from './asl.js';
export * as cancel from './cancel.js';
export * as children from './children.js';
export * as diagram from './diagram.js';
export * as inspect from './inspect.js';
export * as limits from './limits.js';
export * as list from './list.js';
export * as migrate from './migrate.js';
export * as publish from './publish.js';
export * as reject from './reject.js';
export * as replay from './replay.js';
export * as requeue from './requeue.js';
export * as run from './run.js';
export * as schedule from './schedule.js';
export * as send from './send.js';
export * as show from './show.js';
export * as signal from './signal.js';
