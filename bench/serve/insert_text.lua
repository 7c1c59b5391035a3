-- POST /v1/documents (mode insert-if-unique) with a new random text of
-- WORDS words (default 60) drawn from 50,000 made-up words, under a unique
-- id per request; BATCH > 1 sends /v1/documents:batch with BATCH documents
-- per request instead. For data directories of either method (the server
-- fingerprints or signs the text); no k or threshold: the pipeline's rule.
package.path = package.path .. ";" .. (os.getenv("BENCH_DIR") or ".") .. "/?.lua"
require "common"
local n = 0
local batch = tonumber(os.getenv("BATCH") or "1")
local words = tonumber(os.getenv("WORDS") or "60")
local run = os.getenv("RUN") or "t"

local vocab = {}

function init(args)
  math.randomseed(os.time() * 100 + tid)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  for i = 1, 50000 do
    vocab[i] = string.format("w%x", i - 1)
  end
end

local function text()
  local w = {}
  for i = 1, words do
    w[i] = vocab[math.random(1, 50000)]
  end
  return table.concat(w, " ")
end

local function doc()
  n = n + 1
  return '{"id": "' .. run .. '-' .. tid .. '-' .. n .. '", "text": "' .. text() .. '"}'
end

function request()
  return insert_request(doc, batch, "")
end

function done(summary, latency, requests)
  summarize(summary, latency, batch)
end
