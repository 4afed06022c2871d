-- wrk script for Benchmarks/http-server.sh: optional request shape from the environment,
-- and a one-line JSON summary on stdout when the run ends.
--   WRK_METHOD (default GET), WRK_BODY (default none), WRK_CONTENT_TYPE (default none)
local method = os.getenv("WRK_METHOD")
local body = os.getenv("WRK_BODY")
local contentType = os.getenv("WRK_CONTENT_TYPE")
if method and method ~= "" then wrk.method = method end
if body and body ~= "" then wrk.body = body end
if contentType and contentType ~= "" then wrk.headers["Content-Type"] = contentType end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.status + summary.errors.timeout
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_s":%.3f,"requests_per_sec":%.1f,"bytes_per_sec":%.1f,'
      .. '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"total":%d},'
      .. '"latency_ms":{"mean":%.3f,"stdev":%.3f,"max":%.3f,"p50":%.3f,"p75":%.3f,"p90":%.3f,"p99":%.3f,"p99_9":%.3f}}\n',
    summary.requests, seconds, summary.requests / seconds, summary.bytes / seconds,
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status,
    summary.errors.timeout, errors,
    latency.mean / 1000, latency.stdev / 1000, latency.max / 1000,
    latency:percentile(50) / 1000, latency:percentile(75) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency:percentile(99.9) / 1000))
end
