// @ts-check
// The oracle log: one append-only file per process (each worker process and the driver) in a
// temporary folder. Chosen over a database table because it depends on none of the servers under
// test (any of them may be the one restarted) and survives SIGKILL: every record is one write(2)
// made before the handler returns or right after the store write, so once it returned the bytes
// are in the kernel, whatever happens to the process next. A process killed between a store write
// and its record only misses a record, which the oracle tolerates (it never counts absences).
import { appendFileSync, closeSync, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';

/**
 * @typedef {import('@stepfold/engine').Snapshot} Snapshot
 * @typedef {import('./workflows.mjs').Call} Call
 */

/**
 * Opens `<dir>/<name>.log` for appending; returns the handler call recorder, the runner hooks
 * that record every step completion (S), completed compensation (K), map item completed (I) and
 * undone (U), task given back (R) and end of an instance (T), the recorder of a process's counters
 * (W), that of a crash window it is about to die in (X), the flow workload's runs (F) and
 * grants (G), and the agent workload's ledger of tool runs (L).
 * @param {string} dir
 * @param {string} name
 */
export function openOracleLog(dir, name) {
  const fd = openSync(join(dir, `${name}.log`), 'a');
  /** @param {Array<string | number>} fields */
  const write = (fields) => appendFileSync(fd, `${fields.join('\t')}\n`);
  /** @type {import('@stepfold/engine').RunnerHooks} */
  const hooks = {
    onTransition(entry, s) {
      // A map item's end applied (a child's `child.ended`, for a workflow map) or its undo.
      if (entry.type === 'item.completed' || entry.type === 'item.compensated') {
        const item = entry.detail?.replace('item ', '') ?? '';
        write([
          entry.type === 'item.completed' ? 'I' : 'U',
          s.id,
          s.run,
          entry.step ?? '',
          item,
          s.version,
          name,
        ]);
        return;
      }
      if (entry.type !== 'task.released') return;
      // The entry names step and attempt; the task it queued again gives its phase and key.
      const t = Object.values(s.tasks).find((x) => x.step === entry.step && x.attempt === entry.attempt);
      write([
        'R',
        s.id,
        t?.idempotencyKey ?? `${s.id}/${s.run}/${entry.step}`,
        t?.phase ?? '',
        entry.attempt ?? 0,
        name,
      ]);
    },
    onStepCompleted(step, s) {
      write(['S', s.id, s.run, step, s.steps[step]?.iteration ?? 0, s.version, name]);
    },
    onCompensation(entry, s) {
      if (entry.type === 'compensation.completed') write(['K', s.id, s.run, entry.step ?? '', entry.v, name]);
    },
    onWorkflowCompleted: (s) => write(['T', s.id, s.status]),
    onWorkflowFailed: (s) => write(['T', s.id, s.status]),
  };
  return {
    /** @param {Call} c */
    call: (c) => write(['H', c.instance, c.step, c.phase, c.attempt, c.key, c.outcome, name]),
    /** A flow workload run's start or end (flow-workload.mjs). @param {Array<string | number>} fields */
    flow: (fields) => write(['F', ...fields]),
    /** The store's flow granted `holder` at `at`. @param {string} holder @param {number} at */
    grant: (holder, at) => write(['G', holder, at]),
    /** The agent workload's ledger: a non-idempotent tool ran (agent-workload.mjs). @param {Array<string | number>} fields */
    ledger: (fields) => write(['L', ...fields]),
    hooks,
    /**
     * The process's counters so far (a later line replaces an earlier one of the same process).
     * @param {{ conflicts: number, lostTakes: number, released: number, polls: number, ticks: number, writes: number, lostRaces: Readonly<Record<string, number>> }} c
     */
    stats: (c) =>
      write([
        'W',
        name,
        c.conflicts,
        c.lostTakes,
        c.released,
        c.polls,
        c.ticks,
        c.writes,
        JSON.stringify(c.lostRaces),
      ]),
    /**
     * A crash window this process hit and dies in right after (see crash-windows.mjs).
     * @param {string} id @param {string} window @param {string} key
     */
    crash: (id, window, key) => write(['X', id, window, key, process.pid, name]),
    close: () => closeSync(fd),
  };
}

/** Reads the complete lines added to every log file of `dir` since the previous `read()`. */
export class LogTail {
  /** @param {string} dir */
  constructor(dir) {
    this.dir = dir;
    /** @type {Map<string, { offset: number, rest: string }>} */
    this.files = new Map();
  }

  /** @returns {string[][]} the new records, split into their fields */
  read() {
    /** @type {string[][]} */
    const out = [];
    for (const file of readdirSync(this.dir).filter((f) => f.endsWith('.log'))) {
      const state = this.files.get(file) ?? { offset: 0, rest: '' };
      this.files.set(file, state);
      const fd = openSync(join(this.dir, file), 'r');
      try {
        const size = fstatSync(fd).size;
        if (size <= state.offset) continue;
        const buf = Buffer.alloc(size - state.offset);
        const n = readSync(fd, buf, 0, buf.length, state.offset);
        state.offset += n;
        const text = state.rest + buf.subarray(0, n).toString('utf8');
        const lines = text.split('\n');
        // A record is one write, but a read may still land mid-way through it: keep the tail.
        state.rest = lines.pop() ?? '';
        for (const line of lines) if (line) out.push(line.split('\t'));
      } finally {
        closeSync(fd);
      }
    }
    return out;
  }
}
