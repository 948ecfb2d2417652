import { FAIR_DUE, FAIR_KEYS, FAIR_KEYS_LANE, FAIR_LANE, FAIR_SERVED } from './keys.js';

// The Lua the scripts share for the fair due order. An instance with a fairness key is indexed in
// its key's sorted set (`fair-due:<key>`) and its lane's (`fair-lane:<workflow>#<key>`), scored as
// `due` is (its wake time, or while claimed the claim's expiry), and not in `due` or the lanes,
// which keep the instances without a key: the group `''`. `fair-keys` (and `fair-keys-lane:<workflow>`)
// score each key by its set's lowest score, so a poll finds the keys with due work, earliest head
// first, without reading any key's backlog. Every key is built from the prefix, whose hash tag
// keeps it in the store's cluster slot.

/**
 * `fair_put(p, workflow, key, id, score)`: sets the instance's score in its key's two sets (nil:
 * takes it out of them) and the two heads that follow from it. `fair_turn(p, key, head)`: a key's
 * turn, the later of its head's score and when it was last served (`fair-served`).
 * `fair_order(entries, limit, p, now, compete)`: entries `{id, score, key}` in the due order of
 * `Store.listDue` (round-robin over the keys, each by score then id; a round's keys by their turn,
 * then key), at most `limit`; where keys compete (`compete`, default: the entries are of more than
 * one key) the keys handed out are served at `now`.
 */
export const FAIR_LUA = `
local function fair_head(keys, member, set)
  local h = redis.call('ZRANGE', set, 0, 0, 'WITHSCORES')
  if h[1] then redis.call('ZADD', keys, h[2], member) else redis.call('ZREM', keys, member) end
end
local function fair_put(p, workflow, key, id, score)
  local all, lane = p .. '${FAIR_DUE}' .. key, p .. '${FAIR_LANE}' .. workflow .. '#' .. key
  if score then
    redis.call('ZADD', all, score, id)
    redis.call('ZADD', lane, score, id)
  else
    redis.call('ZREM', all, id)
    redis.call('ZREM', lane, id)
  end
  fair_head(p .. '${FAIR_KEYS}', key, all)
  fair_head(p .. '${FAIR_KEYS_LANE}' .. workflow, key, lane)
end
local function fair_turn(p, key, head)
  local s = redis.call('ZSCORE', p .. '${FAIR_SERVED}', key)
  if s and tonumber(s) > head then return tonumber(s) end
  return head
end
local function fair_order(entries, limit, p, now, compete)
  table.sort(entries, function(a, b)
    local x, y = tonumber(a[2]), tonumber(b[2])
    if x ~= y then return x < y end
    return a[1] < b[1]
  end)
  local groups, order = {}, {}
  for _, e in ipairs(entries) do
    local g = groups[e[3]]
    if not g then
      g = {key = e[3], list = {}}
      g.turn = fair_turn(p, e[3], tonumber(e[2]))
      groups[e[3]] = g
      order[#order + 1] = g
    end
    g.list[#g.list + 1] = e
  end
  table.sort(order, function(a, b)
    if a.turn ~= b.turn then return a.turn < b.turn end
    return a.key < b.key
  end)
  local out = {}
  local round = 1
  while #out < limit do
    local any = false
    for _, g in ipairs(order) do
      local e = g.list[round]
      if e then
        any = true
        out[#out + 1] = e
        if #out >= limit then break end
      end
    end
    if not any then break end
    round = round + 1
  end
  -- Served now: only where groups compete (one group alone keeps no record).
  local t = tonumber(now)
  if compete == nil then compete = #order > 1 end
  if compete and t and t > -math.huge and t < math.huge then
    local done = {}
    for _, e in ipairs(out) do
      if not done[e[3]] then
        done[e[3]] = true
        local s = redis.call('ZSCORE', p .. '${FAIR_SERVED}', e[3])
        if not s or tonumber(s) < t then redis.call('ZADD', p .. '${FAIR_SERVED}', now, e[3]) end
      end
    end
  end
  return out
end
`;
