//! Logs and traces: structured logs to stderr (text or JSON), and OTLP span export when
//! OTEL_EXPORTER_OTLP_ENDPOINT is set (the exporter reads the standard OTEL_* variables).
use std::io::IsTerminal as _;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
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
    Ok(Telemetry { provider })
}
