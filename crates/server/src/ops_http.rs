//! The operations port: `GET /metrics` over HTTP/1.1 on `--metrics-listen`, for
//! Prometheus to scrape, and the probes `GET /livez` and `GET /readyz` (`readiness`).
//! Apart from `metrics/`, which the store records into: the probes read the store. Every
//! other path is 404, every other method 405. Connections are bounded (at most
//! [`MAX_CONNECTIONS`] at once, more are closed at once) and a client gets
//! [`HEADER_TIMEOUT`] to send its request head, so a silent or flooding client cannot
//! hold the port.
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::metrics::{CONTENT_TYPE, PrometheusReader};
use crate::readiness::Readiness;

/// Scrape connections served at once.
const MAX_CONNECTIONS: usize = 64;

/// Time a client gets to send a request's head.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum MetricsEndpointError {
    #[error("cannot listen for metrics scrapes on {addr}: {source}")]
    Listen {
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
}

/// Binds `addr` for the metrics endpoint (before the server reports itself ready).
pub async fn bind(addr: std::net::SocketAddr) -> Result<TcpListener, MetricsEndpointError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| MetricsEndpointError::Listen { addr, source })
}

/// Serves scrapes on `listener` until `shutdown`.
pub async fn serve_metrics(
    listener: TcpListener,
    reader: PrometheusReader,
    readiness: Readiness,
    shutdown: CancellationToken,
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let what = "metrics endpoint";
    while let Some((stream, slot)) =
        crate::accept::next_connection(&listener, &slots, MAX_CONNECTIONS, what, &shutdown).await
    {
        let reader = reader.clone();
        let readiness = readiness.clone();
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let reader = reader.clone();
                let readiness = readiness.clone();
                async move { Ok::<_, Infallible>(answer(&reader, &readiness, &request)) }
            });
            crate::accept::serve_http1(stream, service, HEADER_TIMEOUT, what, &shutdown).await;
            drop(slot);
        });
    }
}

/// The response to one request.
fn answer(
    reader: &PrometheusReader,
    readiness: &Readiness,
    request: &Request<Incoming>,
) -> Response<Full<Bytes>> {
    match request.uri().path() {
        "/metrics" => {}
        "/livez" => return plain(StatusCode::OK, "live\n"),
        "/readyz" if readiness.is_ready() => return plain(StatusCode::OK, "ready\n"),
        "/readyz" => {
            return plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "not ready: the database is unreachable or read-only\n",
            );
        }
        _ => {
            return plain(
                StatusCode::NOT_FOUND,
                "not found; metrics are at /metrics, probes at /livez and /readyz\n",
            );
        }
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "only GET /metrics\n");
    }
    match reader.scrape() {
        Ok(text) => Response::builder()
            .header(hyper::header::CONTENT_TYPE, CONTENT_TYPE)
            .body(Full::new(Bytes::from(text)))
            .unwrap_or_else(|_| plain(StatusCode::INTERNAL_SERVER_ERROR, "")),
        Err(error) => {
            tracing::warn!(%error, "metrics endpoint: collecting failed");
            plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                "collecting metrics failed\n",
            )
        }
    }
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response
}
