//! The SDK's meter provider for `ctxd serve`: OTLP export (every 60 s, or
//! OTEL_METRIC_EXPORT_INTERVAL) when OTEL_EXPORTER_OTLP_ENDPOINT is set, and a pull
//! reader for `GET /metrics` when `--metrics-listen` is set. Both are cumulative, as
//! Prometheus expects.
use std::sync::{Arc, Weak};
use std::time::Duration;

use opentelemetry::metrics::MeterProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{
    InstrumentKind, ManualReader, Pipeline, SdkMeterProvider, Temporality,
};

#[derive(Debug, thiserror::Error)]
pub enum MetricsSetupError {
    #[error("cannot set up the OTLP metrics exporter: {0}")]
    Otlp(String),
}

/// The pull reader behind `GET /metrics`: collects on demand. Cloning shares it.
#[derive(Debug, Clone)]
pub struct PrometheusReader(Arc<ManualReader>);

impl PrometheusReader {
    fn new() -> PrometheusReader {
        PrometheusReader(Arc::new(
            ManualReader::builder()
                .with_temporality(Temporality::Cumulative)
                .build(),
        ))
    }

    /// Collects every instrument now (running the gauges' callbacks) and renders the
    /// Prometheus text.
    pub fn scrape(&self) -> Result<String, String> {
        let mut collected = ResourceMetrics::default();
        self.0
            .collect(&mut collected)
            .map_err(|error| error.to_string())?;
        Ok(super::render(&collected))
    }
}

impl MetricReader for PrometheusReader {
    fn register_pipeline(&self, pipeline: Weak<Pipeline>) {
        self.0.register_pipeline(pipeline);
    }

    fn collect(&self, collected: &mut ResourceMetrics) -> OTelSdkResult {
        self.0.collect(collected)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn temporality(&self, kind: InstrumentKind) -> Temporality {
        self.0.temporality(kind)
    }
}

/// The meter provider and its pull reader; flushes the OTLP exporter when dropped.
pub struct MetricsPipeline {
    provider: SdkMeterProvider,
    reader: Option<PrometheusReader>,
}

impl MetricsPipeline {
    /// A provider exporting over OTLP when `otlp`, and with a pull reader when
    /// `pull`; `None` when neither is wanted (the instruments stay no-ops).
    pub fn new(otlp: bool, pull: bool) -> Result<Option<MetricsPipeline>, MetricsSetupError> {
        if !otlp && !pull {
            return Ok(None);
        }
        let mut builder = SdkMeterProvider::builder()
            .with_resource(Resource::builder().with_service_name("ctxd").build());
        if otlp {
            let exporter = opentelemetry_otlp::MetricExporter::builder()
                .with_tonic()
                .with_temporality(Temporality::Cumulative)
                .build()
                .map_err(|error| MetricsSetupError::Otlp(error.to_string()))?;
            builder = builder.with_periodic_exporter(exporter);
        }
        let reader = pull.then(PrometheusReader::new);
        if let Some(reader) = &reader {
            builder = builder.with_reader(reader.clone());
        }
        Ok(Some(MetricsPipeline {
            provider: builder.build(),
            reader,
        }))
    }

    /// The provider configured by the environment (OTEL_EXPORTER_OTLP_ENDPOINT) and
    /// `--metrics-listen`.
    pub fn from_env(pull: bool) -> Result<Option<MetricsPipeline>, MetricsSetupError> {
        let otlp = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").is_ok_and(|url| !url.is_empty());
        MetricsPipeline::new(otlp, pull)
    }

    /// The meter the instruments are created on.
    pub fn meter(&self) -> opentelemetry::metrics::Meter {
        self.provider.meter(super::SCOPE)
    }

    /// The pull reader, when `--metrics-listen` asked for one.
    pub fn reader(&self) -> Option<&PrometheusReader> {
        self.reader.as_ref()
    }
}

impl Drop for MetricsPipeline {
    fn drop(&mut self) {
        if let Err(error) = self.provider.shutdown() {
            tracing::warn!(%error, "flushing metrics failed");
        }
    }
}
