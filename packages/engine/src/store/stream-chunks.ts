import { ValidationError } from '../errors.js';
import { snapshotBytes } from './store.js';

// The limits of the stream capability and the encoding of a chunk, shared by its calls and writer.

/** Largest chunk: the UTF-8 bytes of its JSON. */
export const MAX_STREAM_CHUNK_BYTES = 64 * 1024;

/** Most chunks one append writes. */
export const MAX_STREAM_BATCH = 256;

/** Most bytes (UTF-8 of the chunks' JSON) one append writes: one DynamoDB item holds it. */
export const MAX_STREAM_BATCH_BYTES = 256 * 1024;

/** Largest page of `stream.read`; a larger `limit` gets pages of this size. */
export const MAX_STREAM_PAGE = 1000;

/** Longest step name of a stream address, in UTF-16 units. */
export const MAX_STREAM_STEP_LENGTH = 512;

/** A chunk checked and encoded: its JSON and the UTF-8 bytes of it. */
export interface EncodedChunk {
  json: string;
  bytes: number;
}

function invalid(path: string, message: string): never {
  throw new ValidationError('INVALID_INPUT', `stream: invalid ${path}`, [{ path, message }]);
}

/** A chunk as JSON within {@link MAX_STREAM_CHUNK_BYTES}, or `INVALID_INPUT`. */
export function encodeChunk(data: unknown, path = 'chunk'): EncodedChunk {
  let json: string | undefined;
  try {
    json = JSON.stringify(data);
  } catch (e) {
    invalid(path, `must be JSON: ${(e as Error).message}`);
  }
  if (typeof json !== 'string') invalid(path, 'must be a JSON value (not undefined or a function)');
  const bytes = snapshotBytes(json);
  if (bytes > MAX_STREAM_CHUNK_BYTES)
    invalid(path, `is ${bytes} bytes of JSON, over the limit of ${MAX_STREAM_CHUNK_BYTES}`);
  return { json, bytes };
}

/** The fence of `step` in `fences` (own keys only: a step may be named `__proto__`), 0 when none. */
export function fenceOf(fences: Record<string, number>, step: string): number {
  return Object.hasOwn(fences, step) ? fences[step]! : 0;
}
