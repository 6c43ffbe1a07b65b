import { createHash } from "node:crypto";

/**
 * The Lua scripts of the Redis writer (writer.ts). Every write is one script over keys that share the
 * `{cluster}` hash tag: the fence check and the write are one atomic step, a reader never sees a record
 * without its change entry (or a route without its host index members), and the script stays in one slot on
 * Redis Cluster. KEYS[1] is the fence and KEYS[2] the claim in each; ARGV[1] the holder ('' = unfenced) and
 * ARGV[2] the fence's TTL. A refused write returns {0, holder}; a done one {1 or 2, claimant or ''}.
 */
const FENCE = `
local function fence()
  if ARGV[1] == '' then return false end
  local holder = redis.call('GET', KEYS[1])
  if holder and holder ~= ARGV[1] then return holder end
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return false
end
local function claimant()
  local claim = redis.call('GET', KEYS[2])
  if claim and claim ~= ARGV[1] then return claim end
  return ''
end
local refused = fence()
if refused then return {0, refused} end
`;

/** Version 1. KEYS: fence, claim, services, routes, changes; ARGV: holder, ttl, service, record, route, maxlen. */
const PUT = `${FENCE}
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
redis.call('HSET', KEYS[4], ARGV[3], ARGV[5])
redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[6], '*', 'service', ARGV[3], 'op', 'put')
return {1, claimant()}`;

/** Version 1. KEYS: fence, claim, services, routes, changes; ARGV: holder, ttl, service, maxlen. */
const REMOVE = `${FENCE}
redis.call('HDEL', KEYS[3], ARGV[3])
redis.call('HDEL', KEYS[4], ARGV[3])
redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[4], '*', 'service', ARGV[3], 'op', 'delete')
return {1, claimant()}`;

/** Sets ARGV[3] to ARGV[4] in the hash KEYS[3], or deletes it when ARGV[4] is ''; `op` names which. */
const PUT_OR_DELETE = `local op = 'put'
if ARGV[4] == '' then
  op = 'delete'
  redis.call('HDEL', KEYS[3], ARGV[3])
else
  redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
end`;

/**
 * Version 2 service record. KEYS: fence, claim, services, routes, changes; ARGV: holder, ttl, service,
 * record ('' = remove), maxlen. A version 1 sync's route under the service's name goes either way.
 */
const SERVICE = `${FENCE}
${PUT_OR_DELETE}
redis.call('HDEL', KEYS[4], ARGV[3])
redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[5], '*', 'kind', 'service', 'id', ARGV[3], 'op', op, 'v', '2')
return {1, claimant()}`;

/**
 * Version 2 route record with its host index members (store/keys.ts hostIndexMembers, derived here the same
 * way from the stored JSON: the previous record's members out, the new one's in). KEYS: fence, claim,
 * routes, hosts, changes; ARGV: holder, ttl, id, record ('' = remove), maxlen.
 */
const ROUTE = `${FENCE}
local function members(raw)
  local out = {}
  if not raw then return out end
  local ok, route = pcall(cjson.decode, raw)
  if not ok or type(route) ~= 'table' or type(route.hostnames) ~= 'table' or type(route.rules) ~= 'table' then
    return out
  end
  local seen, services = {}, {}
  for _, rule in ipairs(route.rules) do
    if type(rule) == 'table' and type(rule.backends) == 'table' then
      for _, backend in ipairs(rule.backends) do
        local service = type(backend) == 'table' and backend.service
        if type(service) == 'string' and not seen[service] then
          seen[service] = true
          services[#services + 1] = service
        end
      end
    end
  end
  table.sort(services)
  local tail = '\\31' .. ARGV[3] .. '\\31' .. table.concat(services, ',')
  if #route.hostnames == 0 then return {'*' .. tail} end
  local hosts = {}
  for _, host in ipairs(route.hostnames) do
    if type(host) == 'string' and not hosts[host] then
      hosts[host] = true
      out[#out + 1] = host .. tail
    end
  end
  return out
end
local before = members(redis.call('HGET', KEYS[3], ARGV[3]))
local after = members(ARGV[4] ~= '' and ARGV[4] or nil)
local kept = {}
for _, member in ipairs(after) do kept[member] = true end
for _, member in ipairs(before) do
  if not kept[member] then redis.call('ZREM', KEYS[4], member) end
end
for _, member in ipairs(after) do redis.call('ZADD', KEYS[4], 0, member) end
${PUT_OR_DELETE}
redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[5], '*', 'kind', 'route', 'id', ARGV[3], 'op', op, 'v', '2')
return {1, claimant()}`;

/**
 * KEYS: fence, claim, heartbeat, lease; ARGV: holder, ttl, record, lease holder, lease ms, '1' = only replace.
 * No TTL on the heartbeat record: routers discover clusters by it. Staleness comes from the lease key alone,
 * expired by Redis itself, so writer and reader clocks never have to agree. XX makes the check for a lost
 * record and the beat one atomic step: a beat can never recreate it on an empty store. Returns 2 for that.
 */
const HEARTBEAT = `${FENCE}
local written
if ARGV[6] == '1' then written = redis.call('SET', KEYS[3], ARGV[3], 'XX')
else written = redis.call('SET', KEYS[3], ARGV[3]) end
redis.call('SET', KEYS[4], ARGV[4], 'PX', ARGV[5])
if written then return {1, claimant()} end
return {2, claimant()}`;

/**
 * A record of a hash polled by its version counter (certificates, backend TLS). KEYS: fence, claim, the hash,
 * its version counter; ARGV: holder, ttl, field, record ('' = remove).
 */
const CERTIFICATE = `${FENCE}
${PUT_OR_DELETE}
redis.call('INCR', KEYS[4])
return {1, claimant()}`;

/** KEYS: fence, claim; ARGV: holder, ttl, claim ms. Takes or renews the fence, else claims it. */
const ACQUIRE = `
local holder = redis.call('GET', KEYS[1])
if (not holder) or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  local claim = redis.call('GET', KEYS[2])
  if claim == ARGV[1] then redis.call('DEL', KEYS[2]) return {1, ''} end
  if claim then return {1, claim} end
  return {1, ''}
end
if tonumber(ARGV[3]) > 0 then redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3]) end
return {0, holder}`;

/** KEYS: fence; ARGV: holder. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0`;

export interface Script {
  readonly text: string;
  readonly sha: string;
}

const script = (text: string): Script => ({ text, sha: createHash("sha1").update(text).digest("hex") });

export const SCRIPTS = {
  put: script(PUT),
  remove: script(REMOVE),
  service: script(SERVICE),
  route: script(ROUTE),
  certificate: script(CERTIFICATE),
  heartbeat: script(HEARTBEAT),
  acquire: script(ACQUIRE),
  release: script(RELEASE),
};
