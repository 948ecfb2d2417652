// The `stream` capability of a store: chunks (model tokens, progress) a step attempt appends to its
// instance's stream, for readers that resume from an offset and tail live. Chunks never enter the
// snapshot; the step's output stays the result. Each instance has one stream; every entry takes
// the next offset (0, 1, 2, …), so a reader that kept its offset resumes exactly there.

/** A chunk an attempt appended: its offset in the instance's stream, who wrote it, and its data (JSON). */
export interface StreamChunk {
  type: 'chunk';
  offset: number;
  step: string;
  attempt: number;
  data: unknown;
}

/**
 * Attempt `attempt` (above 1) of `step` began: a reader drops what it holds of `step` from older
 * attempts. Their chunks are no longer part of the stream.
 */
export interface StreamReset {
  type: 'reset';
  offset: number;
  step: string;
  attempt: number;
}

/** One entry of an instance's stream. */
export type StreamEntry = StreamChunk | StreamReset;

/** A page of {@link StreamStore.read}: entries in offset order, and the offset to read on from. */
export interface StreamPage {
  entries: StreamEntry[];
  /** Pass it as the next read's (or tail's) `from`: past every entry this page looked at. */
  next: number;
  /** Whether the page reached the end of what the stream held when it was read. */
  end: boolean;
}

/** What {@link StreamStore.append} wrote: the offset of its first chunk and the offset after its last. */
export interface StreamAppended {
  first: number;
  next: number;
}

/** Options of {@link StreamStore.read}. */
export interface StreamReadQuery {
  /** The first offset to read (default 0). */
  from?: number | undefined;
  /** At most this many entries (default and most: `MAX_STREAM_PAGE`). */
  limit?: number | undefined;
}

/** Options of {@link StreamStore.tail}. */
export interface StreamTailOptions {
  /** The first offset to deliver (default 0): a reader that reconnects passes the `next` of what it has. */
  from?: number | undefined;
  /** Ends the tail (the iteration returns) once aborted. */
  signal?: AbortSignal | undefined;
  /**
   * How often a store without notices reads again once the tail has caught up (ms, default 200).
   * A store with notices (PostgreSQL, Redis, memory) is woken by each append instead.
   */
  pollMs?: number | undefined;
}

/** Options of {@link StreamStore.writer}. */
export interface StreamWriterOptions {
  /** A chunk waits at most this long (ms) for others to share its write (default 50; 0: written at once). */
  delayMs?: number | undefined;
  /** A write goes as soon as this many chunks wait (default and most: `MAX_STREAM_BATCH`). */
  maxChunks?: number | undefined;
}

/**
 * Batched appends for one attempt: `write` queues a chunk, and the queue goes in one append once
 * `delayMs` passed or `maxChunks` wait, in order, one append at a time. `flush` writes the queue at
 * once and resolves when it is stored (a settled tool result, say, that a reader must see now).
 */
export interface StreamWriter {
  /**
   * Queues a chunk. Throws `INVALID_INPUT` for data that is not JSON or is over the chunk size
   * limit, and the error of an earlier append that failed (`STREAM_FENCED`, `STORE_UNAVAILABLE`):
   * nothing queued after a failure is written.
   */
  write(data: unknown): void;
  /** Writes what is queued now; resolves once stored (rejects with the failure of any append of this writer). */
  flush(): Promise<void>;
  /** Flushes and ends the writer: later writes throw. */
  close(): Promise<void>;
  /** The offset after the last chunk this writer stored (-1 before its first append). */
  readonly next: number;
}

/**
 * One step attempt's side of an instance's stream, as a runner hands it to its handler
 * (`ctx.stream`): {@link StreamStore.attempt} makes it.
 */
export interface StreamAttempt {
  /**
   * Queues a chunk (a JSON value) for the attempt's batched appends. Throws `INVALID_INPUT` for a
   * value that is not JSON or is too large, and `STREAM_FENCED` once a newer attempt of the step began.
   */
  write(chunk: unknown): void;
  /** Writes what is queued now; resolves once it is stored. */
  flush(): Promise<void>;
  /** Whether the attempt began or wrote anything: only then is there something to {@link close}. */
  readonly used: boolean;
  /** Stores what is queued and ends the attempt's writer; never rejects (a failure loses chunks, never the result). */
  close(): Promise<void>;
}

/**
 * An instance's stream, per step attempt. Fencing: the newest attempt of a step that began (by
 * `begin` or its first append) is the only one that may append for that step; an older one gets
 * `STREAM_FENCED` and writes nothing. When a newer attempt begins, a reset entry is appended and
 * the chunks of older attempts of that step leave the stream (readers skip them). The stream is
 * deleted with its instance (`store.delete`).
 */
export interface StreamStore {
  /**
   * Begins `attempt` of `step` (idempotent): from now on older attempts of the step are fenced,
   * and an attempt above 1 appends a reset entry (once). Resolves with the offset after the
   * stream's last entry. `STREAM_FENCED` when a newer attempt already began.
   */
  begin(instance: string, step: string, attempt: number): Promise<number>;
  /**
   * Appends `chunks` (JSON values) in one write, at consecutive offsets, beginning the attempt
   * first if it had not begun. At most `MAX_STREAM_BATCH` chunks of at most `MAX_STREAM_CHUNK_BYTES`
   * each (UTF-8 of their JSON), `MAX_STREAM_BATCH_BYTES` in all (`INVALID_INPUT` otherwise; a
   * {@link writer} splits its batches by these itself). `STREAM_FENCED` when a newer attempt began.
   */
  append(
    instance: string,
    step: string,
    attempt: number,
    chunks: readonly unknown[],
  ): Promise<StreamAppended>;
  /** Entries from `query.from` on, in offset order, without the chunks of superseded attempts. */
  read(instance: string, query?: StreamReadQuery): Promise<StreamPage>;
  /**
   * Every entry from `options.from` on, then each one appended later, as it arrives, until
   * `options.signal` aborts or the caller stops iterating. A failed read ends it with the error
   * (`STORE_UNAVAILABLE`): reconnect from the `offset + 1` of the last entry received.
   */
  tail(instance: string, options?: StreamTailOptions): AsyncIterable<StreamEntry>;
  /** A batching writer for one attempt (see {@link StreamWriter}). */
  writer(instance: string, step: string, attempt: number, options?: StreamWriterOptions): StreamWriter;
  /**
   * The side of attempt `attempt` of `step` a runner hands its handler (`ctx.stream`): an attempt
   * above 1 begins at once (its reset entry, and older attempts fenced, even if it never writes);
   * chunks go through a {@link writer}. A stream `defineStore` makes has it; a runner over a
   * stream without it refuses `ctx.stream` writes with `STREAM_UNSUPPORTED`.
   */
  attempt?(instance: string, step: string, attempt: number): StreamAttempt;
  /** Deletes the instance's stream (a `store.delete` of the instance does it too). */
  remove(instance: string): Promise<void>;
}
