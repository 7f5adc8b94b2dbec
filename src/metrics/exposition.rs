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
