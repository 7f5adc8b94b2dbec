//! OTLP export as an operator turns it on: the `ctxd` binary with
//! OTEL_EXPORTER_OTLP_ENDPOINT set, and an OTLP/gRPC receiver on loopback built from the
//! collector protocol's own service definitions (opentelemetry-proto) in the place of an
//! OpenTelemetry Collector. The receiver gets the RPC duration histogram with its
//! method and status attributes, the build and compaction metrics, and the RPCs' spans;
//! an RPC sent with a client's W3C trace context is a span of that trace.
use std::process::{Command, Stdio};
use std::time::Duration;

use ctxd::pb;
use ctxd::pb::context_service_client::ContextServiceClient;
use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{
    MetricsService, MetricsServiceServer,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{
    ExportMetricsServiceRequest, ExportMetricsServiceResponse,
};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use tokio::sync::mpsc;
use tonic::{Request, Response, Status};

use crate::binary::{free_port, terminate, wait_serving};
use crate::harness::*;
use crate::metrics::Killed;

/// What the receiver got: each export request as it arrived.
#[derive(Debug)]
pub(crate) enum Received {
    Metrics(ExportMetricsServiceRequest),
    Spans(ExportTraceServiceRequest),
}

#[derive(Clone)]
struct Receiver(mpsc::UnboundedSender<Received>);

#[tonic::async_trait]
impl MetricsService for Receiver {
    async fn export(
        &self,
        request: Request<ExportMetricsServiceRequest>,
    ) -> Result<Response<ExportMetricsServiceResponse>, Status> {
        let _ = self.0.send(Received::Metrics(request.into_inner()));
        Ok(Response::new(ExportMetricsServiceResponse {
            partial_success: None,
        }))
    }
}

#[tonic::async_trait]
impl TraceService for Receiver {
    async fn export(
        &self,
        request: Request<ExportTraceServiceRequest>,
    ) -> Result<Response<ExportTraceServiceResponse>, Status> {
        let _ = self.0.send(Received::Spans(request.into_inner()));
        Ok(Response::new(ExportTraceServiceResponse {
            partial_success: None,
        }))
    }
}

/// The data points of `name` in one export: (attributes as "key=value", count or value).
fn points(request: &ExportMetricsServiceRequest, name: &str) -> Vec<(Vec<String>, f64)> {
    let attributes = |list: &[opentelemetry_proto::tonic::common::v1::KeyValue]| {
        list.iter()
            .map(|kv| {
                let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                    Some(Value::StringValue(s)) => s.clone(),
                    Some(Value::IntValue(i)) => i.to_string(),
                    other => format!("{other:?}"),
                };
                format!("{}={value}", kv.key)
            })
            .collect::<Vec<_>>()
    };
    let mut out = Vec::new();
    for resource in &request.resource_metrics {
        for scope in &resource.scope_metrics {
            for metric in scope.metrics.iter().filter(|m| m.name == name) {
                match &metric.data {
                    Some(Data::Histogram(histogram)) => {
                        for point in &histogram.data_points {
                            out.push((attributes(&point.attributes), point.count as f64));
                        }
                    }
                    Some(Data::Sum(sum)) => {
                        for point in &sum.data_points {
                            let value = match point.value {
                                Some(
                                    opentelemetry_proto::tonic::metrics::v1::number_data_point::Value::AsInt(i),
                                ) => i as f64,
                                Some(
                                    opentelemetry_proto::tonic::metrics::v1::number_data_point::Value::AsDouble(d),
                                ) => d,
                                None => 0.0,
                            };
                            out.push((attributes(&point.attributes), value));
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

/// An OTLP/gRPC receiver on loopback: its address, what it receives, and its stop.
pub(crate) async fn start_receiver() -> (
    std::net::SocketAddr,
    mpsc::UnboundedReceiver<Received>,
    tokio_util::sync::CancellationToken,
    tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
) {
    let (sender, received) = mpsc::unbounded_channel();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let otlp = listener.local_addr().unwrap();
    let receiver = Receiver(sender);
    let shutdown = tokio_util::sync::CancellationToken::new();
    let stop = shutdown.clone();
    let server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(MetricsServiceServer::new(receiver.clone()))
            .add_service(TraceServiceServer::new(receiver))
            .serve_with_incoming_shutdown(
                tokio_stream::wrappers::TcpListenerStream::new(listener),
                stop.cancelled_owned(),
            ),
    );
    (otlp, received, shutdown, server)
}

/// `ctxd serve` on `url`, exporting metrics and spans to the receiver at `otlp` every
/// 300 ms; its address, and the process (killed when dropped).
async fn serve_exporting(otlp: std::net::SocketAddr, url: &str) -> (String, Killed) {
    let addr = format!("127.0.0.1:{}", free_port());
    let mut child = Command::new(env!("CARGO_BIN_EXE_ctxd"))
        .args(["serve", "--listen", &addr])
        .env("DATABASE_URL", url)
        // On its test database, a deployment refuses calls without a key unless told.
        .env("CTXD_ANONYMOUS_ACCESS", "allow")
        // The RPC spans are at info: the log filter applies to exported spans too.
        .env("CTXD_LOG", "info")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{otlp}"))
        .env("OTEL_METRIC_EXPORT_INTERVAL", "300")
        .env("OTEL_BSP_SCHEDULE_DELAY", "300")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_serving(&addr, &mut child).await;
    (addr, Killed::new(child))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_and_spans_reach_an_otlp_receiver() {
    let (otlp, mut received, shutdown, server) = start_receiver().await;

    let (_pool, url) = fresh_database_url("otlp").await;
    let (addr, child) = serve_exporting(otlp, &url).await;

    let mut client = ContextServiceClient::new(channel(addr.parse().unwrap()).await);
    create(&mut client, "s", window(20_000, 2_000)).await;
    let output: String = (0..150)
        .map(|i| format!("line {i:05} lorem ipsum dolor sit amet\n"))
        .collect();
    let mut builds = 0;
    // Each result is evicted to a 750-token preview: 20 turns pass the clearing threshold.
    for n in 0..20 {
        let id = format!("c{n}");
        append(
            &mut client,
            "s",
            vec![
                user("next"),
                call(&[&id]),
                result(&id, &output),
                assistant("ok"),
            ],
        )
        .await
        .unwrap();
        build(&mut client, "s", pb::OutputFormat::Neutral)
            .await
            .unwrap();
        builds += 1;
    }

    // Cumulative exports every 300 ms: wait for one that holds every build, with the
    // spans seen along the way.
    let mut saw_build_span = false;
    let complete = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            match received.recv().await.expect("the receiver stopped") {
                Received::Spans(spans) => {
                    saw_build_span |= spans.resource_spans.iter().any(|resource| {
                        resource.scope_spans.iter().any(|scope| {
                            scope.spans.iter().any(|span| {
                                span.attributes.iter().any(|kv| {
                                    kv.key == "rpc"
                                        && matches!(
                                            kv.value.as_ref().and_then(|v| v.value.as_ref()),
                                            Some(Value::StringValue(s)) if s == "BuildMessages"
                                        )
                                })
                            })
                        })
                    });
                }
                Received::Metrics(metrics) => {
                    let built: f64 = points(&metrics, "rpc.server.duration")
                        .iter()
                        .filter(|(attributes, _)| {
                            attributes.contains(&"rpc.method=BuildMessages".to_string())
                                && attributes.contains(&"rpc.grpc.status_code=0".to_string())
                        })
                        .map(|(_, count)| count)
                        .sum();
                    if built >= f64::from(builds) {
                        break metrics;
                    }
                }
            }
        }
    })
    .await
    .expect("no export with every build within a minute");
    let durations = points(&complete, "rpc.server.duration");
    assert!(
        durations
            .iter()
            .any(|(attributes, _)| attributes.contains(&"rpc.method=AppendTurn".to_string())),
        "{durations:?}"
    );
    let regions = points(&complete, "ctxd.build.tokens");
    assert!(
        regions.iter().any(|(attributes, count)| attributes
            .contains(&"ctxd.build.region=history".to_string())
            && *count >= f64::from(builds)),
        "{regions:?}"
    );
    let compactions = points(&complete, "ctxd.compactions");
    assert!(
        compactions.iter().any(|(_, count)| *count > 0.0),
        "no compaction exported: {compactions:?}"
    );
    // Spans follow on their own schedule.
    if !saw_build_span {
        tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(item) = received.recv().await {
                if let Received::Spans(spans) = item
                    && spans.resource_spans.iter().any(|r| {
                        r.scope_spans
                            .iter()
                            .any(|s| s.spans.iter().any(|span| span.name == "rpc"))
                    })
                {
                    return;
                }
            }
        })
        .await
        .expect("no RPC span exported within a minute");
    }
    terminate(child.into_inner()).await;
    shutdown.cancel();
    server.await.unwrap().unwrap();
}

/// A client's W3C trace context continues in ctxd: an RPC sent with `traceparent` (and
/// `tracestate`) metadata is exported as a span of that trace, a child of the client's
/// span; one without it starts a trace of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_trace_continues_in_ctxds_span() {
    let (otlp, mut received, shutdown, server) = start_receiver().await;
    let (_pool, url) = fresh_database_url("otlp_trace").await;
    let (addr, child) = serve_exporting(otlp, &url).await;

    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent_id = "00f067aa0ba902b7";
    let mut client = ContextServiceClient::new(channel(addr.parse().unwrap()).await);
    let mut request = tonic::Request::new(pb::CreateSessionRequest {
        session_id: "traced".into(),
        ..Default::default()
    });
    let traceparent = format!("00-{trace_id}-{parent_id}-01");
    request
        .metadata_mut()
        .insert("traceparent", traceparent.parse().unwrap());
    request
        .metadata_mut()
        .insert("tracestate", "vendor=value".parse().unwrap());
    client.create_session(request).await.unwrap();
    // Hostile trace context is ignored, the call served.
    let mut request = tonic::Request::new(pb::GetSessionRequest {
        session_id: "traced".into(),
        include_view: false,
    });
    request
        .metadata_mut()
        .insert("traceparent", "00-zz-not-a-trace".parse().unwrap());
    client.get_session(request).await.unwrap();

    let span = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            if let Received::Spans(spans) = received.recv().await.expect("the receiver stopped")
                && let Some(span) = spans
                    .resource_spans
                    .iter()
                    .flat_map(|r| r.scope_spans.iter())
                    .flat_map(|s| s.spans.iter())
                    .find(|span| span.name == "rpc" && hex::encode(&span.trace_id) == trace_id)
            {
                return span.clone();
            }
        }
    })
    .await
    .expect("no span of the client's trace exported within a minute");
    assert_eq!(hex::encode(&span.parent_span_id), parent_id);
    assert_eq!(span.trace_state, "vendor=value");
    terminate(child.into_inner()).await;
    shutdown.cancel();
    server.await.unwrap().unwrap();
}
