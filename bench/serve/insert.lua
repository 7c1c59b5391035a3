-- POST /v1/documents (mode insert-if-unique) with a new random fingerprint
-- and a unique id per request; BATCH > 1 sends /v1/documents:batch with
-- BATCH documents per request instead.
package.path = package.path .. ";" .. (os.getenv("BENCH_DIR") or ".") .. "/?.lua"
require "common"
local n = 0
local batch = tonumber(os.getenv("BATCH") or "1")
local run = os.getenv("RUN") or "r"
-- K=rule: no k (the server's radius rule); FEATURES: the documents' length.
local k = os.getenv("K") or "3"
local kfield = k == "rule" and "" or ', "k": ' .. k
local features = os.getenv("FEATURES")
local ffield = features and ', "features": ' .. features or ""

function init(args)
  math.randomseed(os.time() * 100 + tid)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

local function doc()
  n = n + 1
  return '{"id": "' .. run .. '-' .. tid .. '-' .. n .. '", "fingerprint": "' .. random_hex() .. '"' .. ffield .. '}'
end

function request()
  return insert_request(doc, batch, kfield)
end

function done(summary, latency, requests)
  summarize(summary, latency, batch)
end
