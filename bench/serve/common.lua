-- Shared by the wrk scripts: thread numbering and a JSON summary line.
local threads = {}
local counter = 0

function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

function summarize(summary, latency, per_request)
  local secs = summary.duration / 1e6
  local errors = summary.errors.status + summary.errors.connect + summary.errors.read
    + summary.errors.write + summary.errors.timeout
  io.write(string.format(
    '{"requests": %d, "seconds": %.3f, "rps": %.1f, "docs_per_s": %.1f, "p50_ms": %.3f, "p90_ms": %.3f, "p99_ms": %.3f, "max_ms": %.3f, "errors": %d, "non_2xx": %d}\n',
    summary.requests, secs, summary.requests / secs, summary.requests * per_request / secs,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000, errors, summary.errors.status))
end

-- 16 random hex digits (LuaJIT numbers are doubles: build it 4 digits at a time).
function random_hex()
  return string.format("%04x%04x%04x%04x", math.random(0, 65535), math.random(0, 65535),
    math.random(0, 65535), math.random(0, 65535))
end

-- One insert-if-unique request: a single document from doc() (with `extra`,
-- JSON fields starting with a comma, added to it), or with batch > 1 a
-- /v1/documents:batch of that many (`extra` then the batch's fields).
function insert_request(doc, batch, extra)
  if batch == 1 then
    local d = doc()
    return wrk.format(nil, "/v1/documents", nil, d:sub(1, -2) .. ', "mode": "insert-if-unique"' .. extra .. '}')
  end
  local docs = {}
  for i = 1, batch do
    docs[i] = doc()
  end
  return wrk.format(nil, "/v1/documents:batch", nil,
    '{"mode": "insert-if-unique"' .. extra .. ', "documents": [' .. table.concat(docs, ",") .. ']}')
end
