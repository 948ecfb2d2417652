import { ValidationError } from '../errors.js';
import type { StreamAppended, StreamWriter, StreamWriterOptions } from './stream.js';
import { type EncodedChunk, encodeChunk, MAX_STREAM_BATCH, MAX_STREAM_BATCH_BYTES } from './stream-chunks.js';

// The batching writer of one attempt: chunks queue, and go in one append per batch (by time, by
// count, or on flush), one append at a time so the stream holds them in the order written.

const DEFAULT_DELAY_MS = 50;

function invalidOption(path: string, message: string): never {
  throw new ValidationError('INVALID_OPTIONS', 'stream writer: invalid options', [{ path, message }]);
}

/** A {@link StreamWriter} over `append`, which writes one batch (already checked) for its attempt. */
export function streamWriter(
  append: (chunks: readonly EncodedChunk[]) => Promise<StreamAppended>,
  options: StreamWriterOptions,
): StreamWriter {
  const delayMs = options.delayMs ?? DEFAULT_DELAY_MS;
  const maxChunks = options.maxChunks ?? MAX_STREAM_BATCH;
  if (!(Number.isSafeInteger(delayMs) && delayMs >= 0))
    invalidOption('delayMs', 'must be a non-negative integer');
  if (!(Number.isSafeInteger(maxChunks) && maxChunks >= 1 && maxChunks <= MAX_STREAM_BATCH))
    invalidOption('maxChunks', `must be an integer in 1..${MAX_STREAM_BATCH}`);

  let queue: EncodedChunk[] = [];
  let queuedBytes = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The appends in flight, chained: each starts when the one before it is stored.
  let chain: Promise<void> = Promise.resolve();
  let failure: unknown;
  let failed = false;
  let closed = false;
  let next = -1;

  /** Takes the queue and chains its appends, in batches within the limits; resolves when they are stored. */
  const send = (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    const batches: EncodedChunk[][] = [];
    let batch: EncodedChunk[] = [];
    let bytes = 0;
    for (const c of queue) {
      if (batch.length && (batch.length >= maxChunks || bytes + c.bytes > MAX_STREAM_BATCH_BYTES)) {
        batches.push(batch);
        batch = [];
        bytes = 0;
      }
      batch.push(c);
      bytes += c.bytes;
    }
    if (batch.length) batches.push(batch);
    queue = [];
    queuedBytes = 0;
    for (const b of batches)
      chain = chain.then(async () => {
        if (failed) return;
        try {
          next = (await append(b)).next;
        } catch (e) {
          failed = true;
          failure = e;
        }
      });
    return chain.then(() => {
      if (failed) throw failure;
    });
  };

  /** A send nobody awaits: its failure is kept for the next write or flush. */
  const sendInBackground = () => {
    send().catch(() => {});
  };

  return {
    write(data) {
      if (failed) throw failure;
      if (closed) throw new ValidationError('INVALID_INPUT', 'stream writer: written after close', []);
      const chunk = encodeChunk(data);
      queue.push(chunk);
      queuedBytes += chunk.bytes;
      if (queue.length >= maxChunks || queuedBytes >= MAX_STREAM_BATCH_BYTES || delayMs === 0)
        sendInBackground();
      else timer ??= setTimeout(sendInBackground, delayMs);
    },
    flush: () => send(),
    async close() {
      closed = true;
      await send();
    },
    get next() {
      return next;
    },
  };
}
