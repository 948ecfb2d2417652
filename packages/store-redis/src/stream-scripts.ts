import { script } from './script.js';

// The stream scripts, over an instance's two keys (see stream.ts): KEYS[1] the Redis stream of its
// entries (ids `0-<offset + 1>`), KEYS[2] the hash of its fences (step -> attempt) and its next
// offset (field ''; no step is empty). Numbers stay far below 2^53; '%d' prints them whole.

/**
 * An append. ARGV: step, attempt, then the chunks' JSON texts. Returns {1, next offset}, or {0,
 * the fence} when a newer attempt of the step began (nothing written). A reset entry (no `d`
 * field) goes first when the attempt is newer than the fence and than 1.
 */
export const APPEND_STREAM = script(
  'stream-append',
  `local a = tonumber(ARGV[2])
local fence = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
if fence > a then return {0, fence} end
local n = tonumber(redis.call('HGET', KEYS[2], '') or '0')
local wrote = false
if a > math.max(fence, 1) then
  n = n + 1
  redis.call('XADD', KEYS[1], string.format('0-%d', n), 's', ARGV[1], 'a', ARGV[2])
  wrote = true
end
for i = 3, #ARGV do
  n = n + 1
  redis.call('XADD', KEYS[1], string.format('0-%d', n), 's', ARGV[1], 'a', ARGV[2], 'd', ARGV[i])
  wrote = true
end
if wrote then redis.call('HSET', KEYS[2], ARGV[1], ARGV[2], '', string.format('%d', n)) end
return {1, n}`,
);

/** A read. ARGV: from (an offset), limit. Returns {entries from the offset on, the fence hash's fields and values}. */
export const READ_STREAM = script(
  'stream-read',
  `local entries = redis.call('XRANGE', KEYS[1], string.format('0-%d', tonumber(ARGV[1]) + 1), '+', 'COUNT', ARGV[2])
return {entries, redis.call('HGETALL', KEYS[2])}`,
);

/** Every stream script, for `setup` to load. */
export const STREAM_SCRIPTS = [APPEND_STREAM, READ_STREAM];
