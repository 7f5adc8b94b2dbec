//! Prometheus' text exposition format (version 0.0.4) from what the SDK collected,
//! named the way OpenTelemetry's Prometheus compatibility specification maps names:
//! dots and other characters outside `[a-zA-Z0-9_:]` become `_`, the unit is appended
//! (`s` → `_seconds`, `By` → `_bytes`, `1` on a gauge → `_ratio`; `{annotations}` are
//! dropped), monotonic sums get `_total`, histograms `_bucket` / `_sum` / `_count`, and
//! the resource becomes a `target_info` sample.
use std::collections::HashSet;
use std::fmt::Write as _;

use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::data::{
    AggregatedMetrics, Gauge, Histogram, Metric, MetricData, ResourceMetrics, Sum,
};

/// The Content-Type of the text this module writes.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Renders one collection as Prometheus text.
pub fn render(collected: &ResourceMetrics) -> String {
    let mut out = String::with_capacity(16 * 1024);
    target_info(&mut out, collected.resource());
    let mut seen = HashSet::new();
    for scope in collected.scope_metrics() {
        for metric in scope.metrics() {
            family(&mut out, metric, &mut seen);
        }
    }
    out
}

/// A value the exposition format can hold: Go's float syntax for the specials.
trait Sample: Copy {
    fn write(self, out: &mut String);
}

impl Sample for f64 {
    fn write(self, out: &mut String) {
        if self.is_nan() {
            out.push_str("NaN");
        } else if self == f64::INFINITY {
            out.push_str("+Inf");
        } else if self == f64::NEG_INFINITY {
            out.push_str("-Inf");
        } else {
            let _ = write!(out, "{self}");
        }
    }
}

impl Sample for u64 {
    fn write(self, out: &mut String) {
        let _ = write!(out, "{self}");
    }
}

impl Sample for i64 {
    fn write(self, out: &mut String) {
        let _ = write!(out, "{self}");
    }
}

fn target_info(out: &mut String, resource: &Resource) {
    if resource.is_empty() {
        return;
    }
    out.push_str("# HELP target_info Target metadata\n# TYPE target_info gauge\ntarget_info");
    let labels: Vec<KeyValue> = resource
        .iter()
        .map(|(key, value)| KeyValue::new(key.clone(), value.clone()))
        .collect();
    labels_of(out, labels.iter(), None);
    out.push_str(" 1\n");
}

fn family(out: &mut String, metric: &Metric, seen: &mut HashSet<String>) {
    match metric.data() {
        AggregatedMetrics::F64(data) => typed(out, metric, data, seen),
        AggregatedMetrics::U64(data) => typed(out, metric, data, seen),
        AggregatedMetrics::I64(data) => typed(out, metric, data, seen),
    }
}

fn typed<T: Sample>(
    out: &mut String,
    metric: &Metric,
    data: &MetricData<T>,
    seen: &mut HashSet<String>,
) {
    let (kind, suffix_total) = match data {
        MetricData::Gauge(_) => ("gauge", false),
        MetricData::Sum(sum) if sum.is_monotonic() => ("counter", true),
        MetricData::Sum(_) => ("gauge", false),
        MetricData::Histogram(_) => ("histogram", false),
        // Never configured here: no view asks for exponential buckets.
        MetricData::ExponentialHistogram(_) => return,
    };
    let mut name = metric_name(metric.name(), metric.unit(), kind == "gauge");
    if suffix_total {
        name.push_str("_total");
    }
    // One family per name: a second scope's instrument of the same name would make the
    // text invalid.
    if !seen.insert(name.clone()) {
        return;
    }
    let _ = writeln!(out, "# HELP {name} {}", help(metric.description()));
    let _ = writeln!(out, "# TYPE {name} {kind}");
    match data {
        MetricData::Gauge(gauge) => gauge_points(out, &name, gauge),
        MetricData::Sum(sum) => sum_points(out, &name, sum),
        MetricData::Histogram(histogram) => histogram_points(out, &name, histogram),
        MetricData::ExponentialHistogram(_) => {}
    }
}

fn gauge_points<T: Sample>(out: &mut String, name: &str, gauge: &Gauge<T>) {
    for point in gauge.data_points() {
        out.push_str(name);
        labels_of(out, point.attributes(), None);
        out.push(' ');
        point.value().write(out);
        out.push('\n');
    }
}

fn sum_points<T: Sample>(out: &mut String, name: &str, sum: &Sum<T>) {
    for point in sum.data_points() {
        out.push_str(name);
        labels_of(out, point.attributes(), None);
        out.push(' ');
        point.value().write(out);
        out.push('\n');
    }
}

fn histogram_points<T: Sample>(out: &mut String, name: &str, histogram: &Histogram<T>) {
    for point in histogram.data_points() {
        let mut cumulative = 0u64;
        let mut counts = point.bucket_counts();
        for bound in point.bounds() {
            cumulative += counts.next().unwrap_or(0);
            let mut le = String::new();
            bound.write(&mut le);
            let _ = write!(out, "{name}_bucket");
            labels_of(out, point.attributes(), Some(&le));
            let _ = writeln!(out, " {cumulative}");
        }
        let _ = write!(out, "{name}_bucket");
        labels_of(out, point.attributes(), Some("+Inf"));
        let _ = writeln!(out, " {}", point.count());
        let _ = write!(out, "{name}_sum");
        labels_of(out, point.attributes(), None);
        out.push(' ');
        point.sum().write(out);
        out.push('\n');
        let _ = write!(out, "{name}_count");
        labels_of(out, point.attributes(), None);
        let _ = writeln!(out, " {}", point.count());
    }
}

/// `{key="value",...}` (nothing without labels), with `le` last for buckets.
fn labels_of<'a>(
    out: &mut String,
    attributes: impl Iterator<Item = &'a KeyValue>,
    le: Option<&str>,
) {
    let mut first = true;
    let mut open = |out: &mut String| {
        out.push(if first { '{' } else { ',' });
        first = false;
    };
    for attribute in attributes {
        open(out);
        out.push_str(&label_name(attribute.key.as_str()));
        out.push_str("=\"");
        escape_value(out, &attribute_text(&attribute.value));
        out.push('"');
    }
    if let Some(le) = le {
        open(out);
        let _ = write!(out, "le=\"{le}\"");
    }
    if !first {
        out.push('}');
    }
}

fn attribute_text(value: &Value) -> std::borrow::Cow<'_, str> {
    value.as_str()
}

/// The metric name with its unit suffix, sanitized.
pub(super) fn metric_name(name: &str, unit: &str, gauge: bool) -> String {
    let mut out = sanitize(name, true);
    let suffix = match unit {
        "s" => "seconds",
        "ms" => "milliseconds",
        "By" => "bytes",
        "1" if gauge => "ratio",
        _ => "",
    };
    // A `{count}`-style annotation or an unknown unit adds nothing.
    if !suffix.is_empty() && !out.ends_with(suffix) {
        out.push('_');
        out.push_str(suffix);
    }
    out
}

/// A label name: `[a-zA-Z_][a-zA-Z0-9_]*`, never starting with `__` (reserved).
fn label_name(key: &str) -> String {
    let mut name = sanitize(key, false);
    if name.starts_with("__") {
        name.replace_range(0..2, "key__");
    }
    name
}

/// Replaces every character a name cannot hold with `_` and prefixes `_` to a leading
/// digit (or an empty name); `colons`: metric names may hold `:`.
fn sanitize(raw: &str, colons: bool) -> String {
    let mut out = String::with_capacity(raw.len() + 1);
    if raw.is_empty() || raw.starts_with(|c: char| c.is_ascii_digit()) {
        out.push('_');
    }
    for c in raw.chars() {
        let keep = c.is_ascii_alphanumeric() || c == '_' || (colons && c == ':');
        out.push(if keep { c } else { '_' });
    }
    out
}

/// A label value: backslash, double quote and line feed escaped.
fn escape_value(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// HELP text: backslash and line feed escaped.
fn help(description: &str) -> String {
    description.replace('\\', "\\\\").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::{
        BuildFigures, BuildKind, CompactionMetric, JobQueueSample, Metrics, MetricsPipeline,
        ModelAttributes, PoolFigures, PoolSample, ViewLookup,
    };

    /// A pipeline with a pull reader and every instrument recorded at least once,
    /// attribute values with characters the format must escape included.
    fn scraped() -> String {
        let pipeline = MetricsPipeline::new(false, true).unwrap().unwrap();
        let metrics = Metrics::new(&pipeline.meter());
        metrics.rpc_finished("BuildMessages", tonic::Code::Ok, Duration::from_millis(3));
        metrics.rpc_finished(
            "AppendTurn",
            tonic::Code::NotFound,
            Duration::from_micros(40),
        );
        let figures = BuildFigures {
            system_tokens: 120,
            tool_tokens: 300,
            summary_tokens: 0,
            history_tokens: 5_000,
            estimate_tokens: 5_420,
            window_tokens: 8_000,
        };
        metrics.build_finished(&figures, BuildKind::Extends);
        metrics.build_finished(&figures, BuildKind::Repeats);
        metrics.compaction_committed(CompactionMetric::Clearing, 0, 2_000, 3);
        metrics.compaction_committed(CompactionMetric::Summarize, 2, 4_000, 8);
        let model = ModelAttributes::new("openai", "gpt \"mini\"\\\nv2");
        metrics.model_call(&model, Duration::from_millis(800), None, Some((900, 120)));
        metrics.model_call(&model, Duration::from_secs(30), Some("timeout"), None);
        metrics.job_started();
        metrics.job_ended("completed");
        metrics.jobs_rescued(2);
        metrics.session_expired();
        metrics.event_written(2);
        metrics.event_written(99);
        metrics.event_delivered(Duration::from_millis(12));
        metrics.view_cache_lookup(ViewLookup::Hit);
        metrics.view_cache_lookup(ViewLookup::Miss);
        metrics.quota_rejected("max_session_bytes");
        metrics.append_batch_written(13, Duration::from_millis(4));
        metrics.set_job_queue(JobQueueSample {
            available: 3,
            running: 1,
            retryable: 0,
            due: 2,
            oldest_due_secs: 1.5,
        });
        metrics.observe_pool(|| PoolSample {
            main: PoolFigures {
                size: 5,
                idle: 3,
                max: 32,
                pending: 0,
            },
            append: None,
            listen: Some(PoolFigures {
                size: 2,
                idle: 0,
                max: 4,
                pending: 7,
            }),
            view_cache_bytes: 4096,
            view_cache_entries: 2,
        });
        pipeline.reader().unwrap().scrape().unwrap()
    }

    #[test]
    fn every_line_is_a_valid_exposition_line() {
        let text = scraped();
        let families = check_exposition(&text);
        for family in [
            "rpc_server_duration_seconds",
            "ctxd_build_tokens",
            "ctxd_build_window_utilization",
            "ctxd_builds_total",
            "ctxd_compactions_total",
            "ctxd_compaction_tokens_removed_total",
            "ctxd_compaction_messages_removed_total",
            "gen_ai_client_operation_duration_seconds",
            "gen_ai_client_token_usage",
            "ctxd_summarizer_calls_total",
            "ctxd_job_attempts_total",
            "ctxd_job_ends_total",
            "ctxd_sessions_expired_total",
            "ctxd_job_rescues_total",
            "ctxd_jobs",
            "ctxd_jobs_queue_depth",
            "ctxd_jobs_oldest_due_age_seconds",
            "ctxd_events_written_total",
            "ctxd_events_deliveries_total",
            "ctxd_events_subscriber_lag_seconds",
            "ctxd_view_cache_lookups_total",
            "ctxd_view_cache_size_bytes",
            "ctxd_view_cache_entries",
            "db_client_connection_count",
            "db_client_connection_max",
            "db_client_connection_pending_requests",
            "ctxd_quota_rejections_total",
            "ctxd_append_batch_size",
            "ctxd_append_batch_duration_seconds",
            "target_info",
        ] {
            assert!(
                families.contains(&family.to_string()),
                "{family} missing:\n{text}"
            );
        }
    }

    #[test]
    fn values_and_labels_come_out_as_recorded() {
        let text = scraped();
        // The same sample whatever order its labels come in (the SDK does not fix one).
        let normalized = |line: &str| -> String {
            match (line.find('{'), line.rfind("} ")) {
                (Some(open), Some(close)) => {
                    let mut labels: Vec<&str> = line[open + 1..close].split(",").collect();
                    labels.sort_unstable();
                    format!(
                        "{}{{{}}}{}",
                        &line[..open],
                        labels.join(","),
                        &line[close + 1..]
                    )
                }
                _ => line.to_string(),
            }
        };
        let has = |line: &str| text.lines().any(|l| normalized(l) == normalized(line));
        assert!(
            has(
                "rpc_server_duration_seconds_count{rpc_system=\"grpc\",rpc_service=\"ctxd.v1.ContextService\",rpc_method=\"BuildMessages\",rpc_grpc_status_code=\"0\"} 1"
            ),
            "{text}"
        );
        assert!(
            has(
                "ctxd_compactions_total{ctxd_compaction_kind=\"summarize\",ctxd_compaction_level=\"2\"} 1"
            ),
            "{text}"
        );
        assert!(
            has(
                "ctxd_compaction_tokens_removed_total{ctxd_compaction_kind=\"clearing\",ctxd_compaction_level=\"0\"} 2000"
            ),
            "{text}"
        );
        assert!(
            has("ctxd_builds_total{ctxd_build_kind=\"extends\"} 1"),
            "{text}"
        );
        assert!(has("ctxd_jobs{ctxd_job_state=\"available\"} 3"), "{text}");
        assert!(has("ctxd_jobs_oldest_due_age_seconds 1.5"), "{text}");
        assert!(
            has(
                "db_client_connection_count{db_client_connection_pool_name=\"main\",db_client_connection_state=\"used\"} 2"
            ),
            "{text}"
        );
        // A pool with no request waiting has its series (0), not none.
        assert!(
            has("db_client_connection_pending_requests{db_client_connection_pool_name=\"main\"} 0"),
            "{text}"
        );
        assert!(
            has(
                "db_client_connection_pending_requests{db_client_connection_pool_name=\"listen\"} 7"
            ),
            "{text}"
        );
        assert!(
            has("ctxd_events_written_total{ctxd_event_kind=\"unknown\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("gen_ai_request_model=\"gpt \\\"mini\\\"\\\\\\nv2\""),
            "the model name escaped: {text}"
        );
        assert!(
            has("ctxd_build_tokens_bucket{ctxd_build_region=\"history\",le=\"+Inf\"} 2"),
            "{text}"
        );
    }

    #[test]
    fn names_follow_the_prometheus_compatibility_rules() {
        assert_eq!(
            super::metric_name("rpc.server.duration", "s", false),
            "rpc_server_duration_seconds"
        );
        assert_eq!(
            super::metric_name("ctxd.view_cache.size", "By", true),
            "ctxd_view_cache_size_bytes"
        );
        assert_eq!(
            super::metric_name("ctxd.build.tokens", "{token}", false),
            "ctxd_build_tokens"
        );
        assert_eq!(super::metric_name("x.ratio", "1", true), "x_ratio");
        assert_eq!(super::metric_name("9lives", "", true), "_9lives");
        assert_eq!(super::label_name("__name"), "key__name");
    }

    /// Checks every line against the text format (0.0.4) and each family's samples
    /// against its TYPE; returns the families.
    fn check_exposition(text: &str) -> Vec<String> {
        let mut families: Vec<String> = Vec::new();
        let mut kind = String::new();
        assert!(text.ends_with('\n'), "the text ends with a line feed");
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                let (name, _) = rest.split_once(' ').unwrap_or((rest, ""));
                assert!(is_metric_name(name), "HELP name: {line}");
                continue;
            }
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, family_kind) = rest.split_once(' ').expect(line);
                assert!(is_metric_name(name), "TYPE name: {line}");
                assert!(
                    ["counter", "gauge", "histogram", "summary", "untyped"].contains(&family_kind),
                    "TYPE: {line}"
                );
                assert!(
                    !families.contains(&name.to_string()),
                    "family twice: {line}"
                );
                families.push(name.to_string());
                kind = family_kind.to_string();
                continue;
            }
            assert!(
                !line.starts_with('#') && !line.is_empty(),
                "stray line: {line:?}"
            );
            let family = families.last().expect("a sample before any TYPE");
            let name_end = line.find(['{', ' ']).expect(line);
            let name = &line[..name_end];
            assert!(is_metric_name(name), "sample name: {line}");
            let allowed: Vec<String> = match kind.as_str() {
                "histogram" => ["_bucket", "_sum", "_count"]
                    .iter()
                    .map(|suffix| format!("{family}{suffix}"))
                    .collect(),
                _ => vec![family.clone()],
            };
            assert!(
                allowed.iter().any(|a| a == name),
                "{name} outside its family {family}: {line}"
            );
            let mut rest = &line[name_end..];
            if let Some(labels) = rest.strip_prefix('{') {
                rest = check_labels(labels, line);
            }
            let rest = rest.strip_prefix(' ').expect(line);
            let mut fields = rest.split(' ');
            let value = fields.next().expect(line);
            assert!(
                ["+Inf", "-Inf", "NaN"].contains(&value) || value.parse::<f64>().is_ok(),
                "value: {line}"
            );
            if let Some(timestamp) = fields.next() {
                assert!(timestamp.parse::<i64>().is_ok(), "timestamp: {line}");
            }
            assert!(fields.next().is_none(), "trailing fields: {line}");
        }
        families
    }

    /// Reads `name="value",...}` and returns what follows the closing brace.
    fn check_labels<'a>(mut rest: &'a str, line: &str) -> &'a str {
        loop {
            let eq = rest.find('=').expect(line);
            let name = &rest[..eq];
            assert!(
                !name.is_empty()
                    && !name.starts_with(|c: char| c.is_ascii_digit())
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "label name {name:?}: {line}"
            );
            rest = rest[eq + 1..].strip_prefix('"').expect(line);
            let mut chars = rest.char_indices();
            let end = loop {
                match chars.next().expect(line) {
                    (_, '\\') => {
                        let (_, escaped) = chars.next().expect(line);
                        assert!(['\\', '"', 'n'].contains(&escaped), "escape: {line}");
                    }
                    (_, '\n') => panic!("raw line feed: {line}"),
                    (at, '"') => break at,
                    _ => {}
                }
            };
            rest = &rest[end + 1..];
            if let Some(after) = rest.strip_prefix('}') {
                return after;
            }
            rest = rest.strip_prefix(',').expect(line);
        }
    }

    fn is_metric_name(name: &str) -> bool {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
    }
}
