//! Logs and traces: structured logs to stderr (text or JSON), and OTLP span export when
//! OTEL_EXPORTER_OTLP_ENDPOINT is set (the exporter reads the standard OTEL_* variables).
//! An RPC whose metadata names a W3C trace (`traceparent`, `tracestate`) continues it:
//! its span is a child of the client's.
use std::io::IsTerminal as _;

use opentelemetry::propagation::Extractor;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tonic::metadata::{KeyRef, MetadataMap};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::config::LogFormat;

/// Keeps the trace exporter alive; flushes it on drop.
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(error) = provider.shutdown()
        {
            eprintln!("ctxd: flushing traces failed: {error}");
        }
    }
}

pub fn init(
    format: LogFormat,
    filter: &str,
) -> Result<Telemetry, Box<dyn std::error::Error + Send + Sync>> {
    let filter = EnvFilter::try_new(filter)?;
    // Colour codes only for a terminal: piped into a file or a log collector they are
    // noise.
    let ansi = std::io::stderr().is_terminal();
    let fmt = match format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_ansi(ansi)
            .with_writer(std::io::stderr)
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .with_ansi(false)
            .with_current_span(true)
            .with_writer(std::io::stderr)
            .boxed(),
    };
    let provider = match std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT") {
        Ok(endpoint) if !endpoint.is_empty() => {
            let exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .build()?;
            Some(
                SdkTracerProvider::builder()
                    .with_batch_exporter(exporter)
                    .with_resource(Resource::builder().with_service_name("ctxd").build())
                    .build(),
            )
        }
        _ => None,
    };
    let otel = provider
        .as_ref()
        .map(|provider| tracing_opentelemetry::layer().with_tracer(provider.tracer("ctxd")));
    tracing_subscriber::registry()
        .with(filter)
        .with(fmt)
        .with(otel)
        .try_init()?;
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    Ok(Telemetry { provider })
}

/// Makes `span` a child of the trace the request's `traceparent` (and `tracestate`)
/// metadata names; nothing when it names none or names it badly (the propagator ignores
/// what does not parse).
pub fn continue_trace(span: &tracing::Span, metadata: &MetadataMap) {
    if !metadata.contains_key("traceparent") {
        return;
    }
    let parent = opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.extract(&Carrier(metadata))
    });
    // Without an exporter there is no OpenTelemetry layer to join: nothing to do.
    let _ = span.set_parent(parent);
}

/// gRPC metadata as W3C trace context's carrier.
struct Carrier<'a>(&'a MetadataMap);

impl Extractor for Carrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0
            .keys()
            .filter_map(|key| match key {
                KeyRef::Ascii(key) => Some(key.as_str()),
                KeyRef::Binary(_) => None,
            })
            .collect()
    }
}
