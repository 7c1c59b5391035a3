//! Prometheus text-format metrics: requests by route and status, latency
//! histograms by route.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

/// Latency histogram bucket bounds, in seconds.
const BUCKETS: [f64; 12] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0];

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// Request counters and latency histograms.
#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, u16), u64>>,
    latency: Mutex<BTreeMap<String, Histogram>>,
}

impl Metrics {
    /// Records one request.
    pub fn record(&self, route: &str, status: u16, seconds: f64) {
        *self.requests.lock().expect("lock").entry((route.to_owned(), status)).or_default() += 1;
        let mut l = self.latency.lock().expect("lock");
        let h = l.entry(route.to_owned()).or_default();
        for (i, b) in BUCKETS.iter().enumerate() {
            if seconds <= *b {
                h.counts[i] += 1;
            }
        }
        h.count += 1;
        h.sum += seconds;
    }

    /// The metrics in Prometheus text format, with the gauges given.
    pub fn render(&self, gauges: &[(&str, &str, f64)]) -> String {
        let mut out = String::new();
        out.push_str("# HELP neardup_http_requests_total HTTP requests by route and status.\n");
        out.push_str("# TYPE neardup_http_requests_total counter\n");
        for ((route, status), n) in self.requests.lock().expect("lock").iter() {
            let _ = writeln!(out, "neardup_http_requests_total{{route=\"{route}\",status=\"{status}\"}} {n}");
        }
        out.push_str("# HELP neardup_http_request_duration_seconds HTTP request latency by route.\n");
        out.push_str("# TYPE neardup_http_request_duration_seconds histogram\n");
        for (route, h) in self.latency.lock().expect("lock").iter() {
            for (b, c) in BUCKETS.iter().zip(h.counts) {
                let _ = writeln!(
                    out,
                    "neardup_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"{b}\"}} {c}"
                );
            }
            let _ = writeln!(
                out,
                "neardup_http_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(out, "neardup_http_request_duration_seconds_sum{{route=\"{route}\"}} {}", h.sum);
            let _ =
                writeln!(out, "neardup_http_request_duration_seconds_count{{route=\"{route}\"}} {}", h.count);
        }
        for (name, help, v) in gauges {
            let kind = if name.ends_with("_total") { "counter" } else { "gauge" };
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}");
        }
        out
    }
}
