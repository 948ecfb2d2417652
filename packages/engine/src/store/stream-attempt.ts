import type { StreamAttempt, StreamStore, StreamWriter } from './stream.js';

// One step attempt's side of an instance's stream, as a runner hands it to the handler
// (`ctx.stream`). Here, with the stream it writes to, so a runner over a store without a stream
// carries none of it.

/**
 * The {@link StreamAttempt} of attempt `attempt` of `step` on `stream`. A retry (attempt 2 on)
 * begins at once, before the handler writes anything: readers drop what the superseded attempt
 * streamed (a reset entry), and a zombie of that attempt is fenced even if this one never streams.
 * A first attempt begins with its first append.
 */
export function attemptStream(
  stream: StreamStore,
  instance: string,
  step: string,
  attempt: number,
): StreamAttempt {
  let failure: unknown;
  let writer: StreamWriter | undefined;
  // Kept, never thrown here: a fenced begin ends this attempt's writes, not the process.
  const begun =
    attempt > 1
      ? stream.begin(instance, step, attempt).catch((e: unknown) => {
          failure = e;
        })
      : undefined;
  return {
    write(chunk) {
      if (failure !== undefined) throw failure;
      writer ??= stream.writer(instance, step, attempt);
      writer.write(chunk);
    },
    async flush() {
      await begun;
      if (failure !== undefined) throw failure;
      await writer?.flush();
    },
    get used() {
      return begun !== undefined || writer !== undefined;
    },
    async close() {
      await begun;
      await writer?.close().catch(() => {});
    },
  };
}
