//! What makes a connection idle: the RPCs in flight on it (counted by a tower layer
//! from the service call until the response body ends or is dropped) and requests
//! arriving (HEADERS and CONTINUATION frames, followed by their 9-byte headers), and the
//! timer that decides when an idle connection is due to close.
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Sleep;

use super::ConnectInfo;

/// The RPCs in flight on one connection.
#[derive(Debug)]
pub struct ConnectionActivity {
    state: Mutex<Activity>,
}

#[derive(Debug, Clone, Copy)]
struct Activity {
    in_flight: usize,
    /// When `in_flight` last dropped to zero (or the connection was established).
    idle_since: tokio::time::Instant,
}

impl ConnectionActivity {
    pub(super) fn new() -> ConnectionActivity {
        ConnectionActivity {
            state: Mutex::new(Activity {
                in_flight: 0,
                idle_since: tokio::time::Instant::now(),
            }),
        }
    }

    /// RPCs in flight now.
    pub fn in_flight(&self) -> usize {
        self.get().in_flight
    }

    /// Counts one RPC until the returned guard is dropped.
    pub fn start(self: &Arc<Self>) -> InFlight {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .in_flight += 1;
        InFlight(self.clone())
    }

    fn get(&self) -> Activity {
        *self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One RPC in flight on a connection, until dropped.
#[derive(Debug)]
pub struct InFlight(Arc<ConnectionActivity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut state = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        state.in_flight -= 1;
        if state.in_flight == 0 {
            state.idle_since = tokio::time::Instant::now();
        }
    }
}

/// After a HEADERS frame is read, a connection is not closed for idleness for this long
/// (or the idle timeout, if shorter): time for hyper's task of the request just read to
/// reach [`InFlightLayer`].
pub const READ_QUIET: Duration = Duration::from_secs(1);

/// When an idle connection is due to close.
pub(super) struct IdleTimer {
    pub(super) timeout: Duration,
    pub(super) sleep: Pin<Box<Sleep>>,
}

impl IdleTimer {
    /// Whether the connection is to be closed now; otherwise the timer is armed to wake
    /// `cx` when it is next due for a look.
    pub(super) fn expired(
        &mut self,
        cx: &mut Context<'_>,
        activity: &ConnectionActivity,
        last_request: tokio::time::Instant,
    ) -> bool {
        loop {
            let now = tokio::time::Instant::now();
            let state = activity.get();
            let due = if state.in_flight > 0 {
                // Busy: look again in a while; the count's drop to zero sets
                // `idle_since`, from which the timeout then runs.
                now.checked_add(self.timeout)
            } else {
                state
                    .idle_since
                    .checked_add(self.timeout)
                    .map(|due| due.max(last_request + self.timeout.min(READ_QUIET)))
            };
            // A timeout past the clock's range: never due.
            let Some(due) = due else {
                return false;
            };
            if due <= now {
                return true;
            }
            if self.sleep.deadline() != due {
                self.sleep.as_mut().reset(due);
            }
            if self.sleep.as_mut().poll(cx).is_pending() {
                return false;
            }
        }
    }
}

/// Follows the HTTP/2 frames a client sends (after the preface), by their 9-byte
/// headers, to see requests arrive: HEADERS frames and the CONTINUATION frames that
/// complete their header block.
#[derive(Debug, Default)]
pub(super) struct FrameScanner {
    header: [u8; 9],
    /// Bytes of `header` read so far.
    have: usize,
    /// Payload bytes of the current frame still to come.
    payload: usize,
    /// A header block began and its END_HEADERS has not come yet.
    open_block: bool,
}

/// HTTP/2 frame types that carry a request's header block (RFC 9113 §6.2, §6.10).
const HEADERS: u8 = 0x1;
const CONTINUATION: u8 = 0x9;
/// The END_HEADERS flag of those frames.
const END_HEADERS: u8 = 0x4;

impl FrameScanner {
    /// Takes the next bytes read; whether a HEADERS frame began in them.
    pub(super) fn scan(&mut self, mut bytes: &[u8]) -> bool {
        let mut headers = false;
        while !bytes.is_empty() {
            if self.payload > 0 {
                let n = self.payload.min(bytes.len());
                self.payload -= n;
                bytes = &bytes[n..];
                continue;
            }
            let n = (self.header.len() - self.have).min(bytes.len());
            self.header[self.have..self.have + n].copy_from_slice(&bytes[..n]);
            self.have += n;
            bytes = &bytes[n..];
            if self.have == self.header.len() {
                let [a, b, c, kind, flags, ..] = self.header;
                self.payload = usize::from(a) << 16 | usize::from(b) << 8 | usize::from(c);
                if kind == HEADERS || kind == CONTINUATION {
                    headers = true;
                    self.open_block = flags & END_HEADERS == 0;
                }
                self.have = 0;
            }
        }
        headers
    }

    /// Whether the client is in the middle of a frame or of a header block: closing now
    /// could cut a request that is still arriving.
    pub(super) fn mid_request(&self) -> bool {
        self.have != 0 || self.payload != 0 || self.open_block
    }
}

/// Counts each request's RPC on its connection's [`ConnectionActivity`] (found in the
/// request's [`ConnectInfo`]) from the call of the service until the response body is
/// finished or dropped, or the call is dropped (a client's reset) unanswered.
#[derive(Debug, Clone, Copy, Default)]
pub struct InFlightLayer;

impl<S> tower_layer::Layer<S> for InFlightLayer {
    type Service = InFlightService<S>;

    fn layer(&self, inner: S) -> InFlightService<S> {
        InFlightService { inner }
    }
}

/// The service of [`InFlightLayer`].
#[derive(Debug, Clone)]
pub struct InFlightService<S> {
    inner: S,
}

type BoxFuture<T> = Pin<Box<dyn std::future::Future<Output = T> + Send>>;

impl<S, ReqBody, ResBody> tonic::codegen::Service<tonic::codegen::http::Request<ReqBody>>
    for InFlightService<S>
where
    S: tonic::codegen::Service<
            tonic::codegen::http::Request<ReqBody>,
            Response = tonic::codegen::http::Response<ResBody>,
        >,
    S::Future: Send + 'static,
{
    type Response = tonic::codegen::http::Response<InFlightBody<ResBody>>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, S::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: tonic::codegen::http::Request<ReqBody>) -> Self::Future {
        let info = request.extensions().get::<ConnectInfo>().cloned();
        let guard = info.map(|info| {
            let guard = info.activity.start();
            request.extensions_mut().insert(info.tcp);
            guard
        });
        let future = self.inner.call(request);
        Box::pin(async move {
            // Dropped with this future if the call is cancelled before it answers.
            let response = future.await?;
            Ok(response.map(|inner| InFlightBody { inner, guard }))
        })
    }
}

/// A response body that keeps its RPC counted until it ends or is dropped.
#[derive(Debug)]
pub struct InFlightBody<B> {
    inner: B,
    guard: Option<InFlight>,
}

impl<B> http_body::Body for InFlightBody<B>
where
    B: http_body::Body + Unpin,
{
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<B::Data>, B::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None | Some(Err(_))) = polled {
            self.guard = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, payload: usize) -> Vec<u8> {
        let mut bytes = vec![
            (payload >> 16) as u8,
            (payload >> 8) as u8,
            payload as u8,
            kind,
            0,
            0,
            0,
            0,
            1,
        ];
        bytes.resize(9 + payload, 0xAB);
        bytes
    }

    #[test]
    fn the_frame_scanner_sees_headers_frames_however_the_bytes_are_split() {
        const PING: u8 = 0x6;
        let mut stream = frame(PING, 8);
        stream.extend(frame(0x4, 0));
        // A payload holding the HEADERS type byte at a header's place.
        stream.extend(frame(0x0, 70_000));
        let quiet = stream.len();
        stream.extend(frame(HEADERS, 300));
        stream.extend(frame(PING, 8));
        for chunk in [1, 2, 5, 9, 100, 4096, stream.len()] {
            let mut scanner = FrameScanner::default();
            let mut seen_at = Vec::new();
            for (index, piece) in stream.chunks(chunk).enumerate() {
                if scanner.scan(piece) {
                    seen_at.push(index * chunk);
                }
            }
            assert_eq!(seen_at.len(), 1, "chunks of {chunk}");
            // Seen in the chunk that completes the HEADERS frame's 9-byte header.
            assert_eq!(seen_at[0] / chunk, (quiet + 8) / chunk, "chunks of {chunk}");
        }
    }

    #[test]
    fn a_request_is_arriving_until_its_header_block_ends() {
        const PING: u8 = 0x6;
        let mut scanner = FrameScanner::default();
        scanner.scan(&frame(PING, 8));
        assert!(!scanner.mid_request(), "between frames");
        let ping = frame(PING, 8);
        scanner.scan(&ping[..5]);
        assert!(scanner.mid_request(), "inside a frame header");
        scanner.scan(&ping[5..12]);
        assert!(scanner.mid_request(), "inside a payload");
        scanner.scan(&ping[12..]);
        assert!(!scanner.mid_request());
        // HEADERS without END_HEADERS: the block goes on in a CONTINUATION.
        assert!(scanner.scan(&frame(HEADERS, 10)));
        assert!(scanner.mid_request(), "the header block is open");
        let mut last = frame(CONTINUATION, 4);
        last[4] = END_HEADERS;
        assert!(
            scanner.scan(&last),
            "a CONTINUATION counts as a request arriving"
        );
        assert!(!scanner.mid_request(), "the header block ended");
    }
}
