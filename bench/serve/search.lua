-- POST /v1/search for fingerprints read from QUERIES (one 16-hex per line),
-- each a stored document's (so each finds at least itself), at radius K.
package.path = package.path .. ";" .. (os.getenv("BENCH_DIR") or ".") .. "/?.lua"
require "common"
local queries = {}
local k = os.getenv("K") or "3"
-- K=rule: no k (the server's radius rule); FEATURES: the queries' length.
local features = os.getenv("FEATURES")
local extra = (k == "rule" and "" or ', "k": ' .. k) .. (features and ', "features": ' .. features or "")

function init(args)
  for line in io.lines(os.getenv("QUERIES")) do
    table.insert(queries, line)
  end
  math.randomseed(tid * 7919 + 1)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  local fp = queries[math.random(#queries)]
  return wrk.format(nil, "/v1/search", nil, '{"fingerprint": "' .. fp .. '"' .. extra .. ', "limit": 100}')
end

function done(summary, latency, requests)
  summarize(summary, latency, 1)
end
