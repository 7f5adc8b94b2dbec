//! Accepting TCP connections for the gRPC server, with limits: a socket reaches hyper
//! only once it has sent the whole HTTP/2 client preface, within the handshake timeout;
//! sockets still waiting for it are bounded (the one waiting longest is closed when too
//! many wait, or when the process runs out of file descriptors); established connections
//! are capped; accept errors back off instead of spinning.
//!
//! # Idle connections
//!
//! An established connection with no RPC in flight for the whole idle timeout
//! (`--conn-idle-timeout-secs`, gRPC's MaxConnectionIdle) is closed. An RPC is in flight
//! from the moment the server's service is called with its request until its response
//! body is finished or dropped: a unary call being handled, and a server stream such as
//! SubscribeEvents for as long as it is open, however quiet. [`InFlightLayer`] counts
//! them per connection in a [`ConnectionActivity`] that the request finds in its
//! extensions (through [`ConnectInfo`], which tonic inserts into every request of the
//! connection). HTTP/2 frames that are not RPCs — keepalive PINGs and their ACKs,
//! SETTINGS, WINDOW_UPDATE — do not count: a connection that only answers pings is
//! idle.
//!
//! tonic offers no graceful close (GOAWAY) of one connection, so an idle connection is
//! closed from below: [`Connection`]'s `poll_read` ends the stream (EOF), hyper's HTTP/2
//! connection ends with no stream open, and the socket is closed. It does so only when
//! the socket has nothing to read (a request arriving is read and handed to hyper
//! instead), and not within [`READ_QUIET`] of the last HTTP/2 HEADERS frame read (the
//! wrapper follows the frame headers of what it reads): hyper calls the service for a
//! new request in a task of its own, after it has read the request's HEADERS, so for a
//! moment a request that has been read is not yet counted; the pause lets it be
//! counted. Other frames (PING above all) do not postpone the close. What remains is a race no server-side check can close: a client
//! that sends a request at the very instant its idle connection is closed (the bytes
//! still on the wire) sees the call fail with UNAVAILABLE, as when any connection drops,
//! and may retry it. With a timeout of minutes this is rare, and gRPC clients open a new
//! connection for their next call transparently.
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::Stream;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};
use tokio::time::Sleep;
use tokio_stream::StreamExt as _;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::transport::server::{Connected, TcpConnectInfo};

/// The first bytes an HTTP/2 client sends (RFC 9113 §3.4).
pub const PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The server's connection settings.
#[derive(Debug, Clone)]
pub struct ConnectionLimits {
    /// Time a new connection gets to send the HTTP/2 preface; closed after it.
    pub handshake_timeout: Duration,
    /// Connections waiting for their preface, at most; past it the oldest is closed.
    pub max_pending: usize,
    /// Established connections, at most; new ones past it are closed at once.
    pub max_connections: usize,
    /// Concurrent HTTP/2 streams (RPCs) one connection may open.
    pub max_streams: u32,
    /// Period of HTTP/2 pings on a connection (`None`: no pings).
    pub http2_keepalive_interval: Option<Duration>,
    /// A ping not answered within this closes the connection.
    pub http2_keepalive_timeout: Duration,
    /// Idle time before TCP keepalive probes start (`None`: off).
    pub tcp_keepalive: Option<Duration>,
    /// A connection with no RPC in flight for this long is closed (`None`: never).
    pub idle_timeout: Option<Duration>,
}

impl Default for ConnectionLimits {
    fn default() -> ConnectionLimits {
        ConnectionLimits {
            handshake_timeout: Duration::from_secs(10),
            max_pending: 1024,
            max_connections: 10_000,
            max_streams: 1024,
            http2_keepalive_interval: Some(Duration::from_secs(60)),
            http2_keepalive_timeout: Duration::from_secs(20),
            tcp_keepalive: Some(Duration::from_secs(60)),
            idle_timeout: Some(Duration::from_secs(300)),
        }
    }
}

impl ConnectionLimits {
    /// The limits of a configured server.
    pub fn from_config(config: &crate::config::Config) -> ConnectionLimits {
        let secs = |secs: u64| (secs > 0).then(|| Duration::from_secs(secs));
        ConnectionLimits {
            handshake_timeout: Duration::from_secs(config.conn_handshake_timeout_secs),
            max_pending: config.conn_max_pending,
            max_connections: config.max_connections,
            max_streams: config.max_streams_per_connection,
            http2_keepalive_interval: secs(config.http2_keepalive_interval_secs),
            http2_keepalive_timeout: Duration::from_secs(config.http2_keepalive_timeout_secs),
            tcp_keepalive: secs(config.tcp_keepalive_secs),
            idle_timeout: secs(config.conn_idle_timeout_secs),
        }
    }
}

/// Accepts on `listener` until the returned stream is dropped, and yields the
/// connections that sent the HTTP/2 preface in time and fit under the cap.
pub fn incoming(
    listener: TcpListener,
    limits: ConnectionLimits,
) -> impl Stream<Item = Result<Connection, Infallible>> {
    let (tx, rx) = mpsc::channel(64);
    let shared = Arc::new(Shared {
        established: Arc::new(Semaphore::new(limits.max_connections)),
        limits,
        pending: Mutex::new(Pending::default()),
        refused: RateLimited::default(),
    });
    tokio::spawn(accept_loop(listener, shared, tx));
    ReceiverStream::new(rx).map(Ok)
}

/// A connection handed to the server: the socket, the preface already read from it
/// (given back to hyper first), its place under the cap (freed on drop), and its RPCs in
/// flight, for the idle timeout.
pub struct Connection {
    stream: TcpStream,
    replayed: usize,
    info: ConnectInfo,
    idle: Option<IdleTimer>,
    /// Where the bytes read are in the HTTP/2 frames.
    frames: FrameScanner,
    /// When the last HTTP/2 HEADERS frame (a request's start) was read.
    last_request: tokio::time::Instant,
    /// Closed for idleness: every later read is EOF.
    closed: bool,
    _permit: OwnedSemaphorePermit,
}

/// What the server knows of a request's connection; tonic inserts it into the
/// extensions of every request (`request.extensions().get::<ConnectInfo>()`).
/// [`InFlightLayer`] also inserts its `tcp`, so that `tonic::Request::remote_addr`
/// works.
#[derive(Debug, Clone)]
pub struct ConnectInfo {
    pub tcp: TcpConnectInfo,
    pub activity: Arc<ConnectionActivity>,
}

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
    fn new() -> ConnectionActivity {
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
struct IdleTimer {
    timeout: Duration,
    sleep: Pin<Box<Sleep>>,
}

impl IdleTimer {
    /// Whether the connection is to be closed now; otherwise the timer is armed to wake
    /// `cx` when it is next due for a look.
    fn expired(
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
struct FrameScanner {
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
    fn scan(&mut self, mut bytes: &[u8]) -> bool {
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
    fn mid_request(&self) -> bool {
        self.have != 0 || self.payload != 0 || self.open_block
    }
}

impl Connected for Connection {
    type ConnectInfo = ConnectInfo;

    fn connect_info(&self) -> ConnectInfo {
        self.info.clone()
    }
}

impl AsyncRead for Connection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.replayed < PREFACE.len() {
            let rest = &PREFACE[self.replayed..];
            let n = rest.len().min(buf.remaining());
            buf.put_slice(&rest[..n]);
            self.replayed += n;
            return Poll::Ready(Ok(()));
        }
        if self.closed {
            return Poll::Ready(Ok(()));
        }
        let filled = buf.filled().len();
        if let Poll::Ready(result) = Pin::new(&mut self.stream).poll_read(cx, buf) {
            let this = &mut *self;
            if this.frames.scan(&buf.filled()[filled..]) {
                this.last_request = tokio::time::Instant::now();
            }
            return Poll::Ready(result);
        }
        // Nothing to read and no frame half read: a request cannot be cut by closing
        // now (a client stalled mid-frame is left to the keepalive and the caps).
        let this = &mut *self;
        if this.frames.mid_request() {
            return Poll::Pending;
        }
        let Some(idle) = &mut this.idle else {
            return Poll::Pending;
        };
        if !idle.expired(cx, &this.info.activity, this.last_request) {
            return Poll::Pending;
        }
        this.closed = true;
        tracing::debug!(
            peer = ?this.info.tcp.remote_addr(),
            idle_secs = idle.timeout.as_secs_f64(),
            "closing a connection with no RPC for the idle timeout"
        );
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Connection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// How long the accept loop waits after an error that is not about one connection
/// (out of file descriptors with none waiting to close, out of memory).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// At most one warning of a kind per this period.
const WARN_PERIOD: Duration = Duration::from_secs(10);

struct Shared {
    limits: ConnectionLimits,
    /// One permit per established connection.
    established: Arc<Semaphore>,
    pending: Mutex<Pending>,
    refused: RateLimited,
}

/// Connections waiting for their preface, oldest first.
#[derive(Default)]
struct Pending {
    next: u64,
    waiting: BTreeMap<u64, Waiting>,
}

struct Waiting {
    /// Cancelled to close the connection.
    close: CancellationToken,
    /// Resolves once the connection's socket is closed.
    closed: oneshot::Receiver<()>,
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, tx: mpsc::Sender<Connection>) {
    let failures = RateLimited::default();
    loop {
        let accepted = tokio::select! {
            () = tx.closed() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => admit(&shared, stream, &tx),
            Err(error) if per_connection(&error) => {
                tracing::debug!(error = %error, "accepting a connection failed");
            }
            Err(error) => {
                // Out of file descriptors: the connection that has waited longest for
                // its preface makes room, if there is one.
                let evicted = is_out_of_descriptors(&error)
                    .then(|| shared.evict_oldest())
                    .flatten();
                if let Some(closed) = evicted {
                    tokio::select! {
                        () = tx.closed() => return,
                        _ = closed => {}
                    }
                    continue;
                }
                if let Some(count) = failures.due() {
                    tracing::warn!(error = %error, failures = count, "cannot accept connections; retrying");
                }
                tokio::select! {
                    () = tx.closed() => return,
                    () = tokio::time::sleep(ACCEPT_BACKOFF) => {}
                }
            }
        }
    }
}

/// Errors about one connection (it went away before it was accepted): accept again.
fn per_connection(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::Interrupted
    )
}

fn is_out_of_descriptors(error: &io::Error) -> bool {
    matches!(error.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

/// A just-accepted socket: closed at once over the cap, otherwise it waits for its
/// preface in a task of its own.
fn admit(shared: &Arc<Shared>, stream: TcpStream, tx: &mpsc::Sender<Connection>) {
    if shared.established.available_permits() == 0 {
        shared.refuse();
        return;
    }
    if let Err(error) = configure(&stream, &shared.limits) {
        tracing::debug!(error = %error, "configuring an accepted socket failed");
        return;
    }
    let close = CancellationToken::new();
    let (closed_tx, closed_rx) = oneshot::channel();
    let (id, evicted) = {
        let mut pending = shared.pending.lock().unwrap_or_else(|e| e.into_inner());
        let id = pending.next;
        pending.next += 1;
        pending.waiting.insert(
            id,
            Waiting {
                close: close.clone(),
                closed: closed_rx,
            },
        );
        let evicted = if pending.waiting.len() > shared.limits.max_pending {
            pending.waiting.pop_first().map(|(_, waiting)| waiting)
        } else {
            None
        };
        (id, evicted)
    };
    if let Some(evicted) = evicted {
        tracing::debug!("too many connections waiting for their preface; closing the oldest");
        evicted.close.cancel();
    }
    let waiter = Waiter {
        stream,
        _closed: closed_tx,
    };
    tokio::spawn(handshake(shared.clone(), id, waiter, close, tx.clone()));
}

/// TCP_NODELAY (without it a small response waits for the client's delayed ACK, ~40 ms
/// on Linux, behind Nagle's algorithm) and TCP keepalive.
fn configure(stream: &TcpStream, limits: &ConnectionLimits) -> io::Result<()> {
    stream.set_nodelay(true)?;
    if let Some(idle) = limits.tcp_keepalive {
        socket2::SockRef::from(stream)
            .set_tcp_keepalive(&socket2::TcpKeepalive::new().with_time(idle))?;
    }
    Ok(())
}

/// A socket waiting for its preface; `_closed` is dropped after the socket is closed
/// (fields drop in order), which tells an evicting accept loop the descriptor is free.
struct Waiter {
    stream: TcpStream,
    _closed: oneshot::Sender<()>,
}

async fn handshake(
    shared: Arc<Shared>,
    id: u64,
    mut waiter: Waiter,
    close: CancellationToken,
    tx: mpsc::Sender<Connection>,
) {
    let mut preface = [0u8; PREFACE.len()];
    let read = tokio::select! {
        () = close.cancelled() => return,
        () = tx.closed() => return,
        read = tokio::time::timeout(
            shared.limits.handshake_timeout,
            waiter.stream.read_exact(&mut preface),
        ) => read,
    };
    shared.forget(id);
    match read {
        Err(_) => {
            tracing::debug!("a connection sent no HTTP/2 preface in time; closing it");
            return;
        }
        Ok(Err(error)) => {
            tracing::debug!(error = %error, "a connection closed before its HTTP/2 preface");
            return;
        }
        Ok(Ok(_)) if &preface != PREFACE => {
            tracing::debug!("a connection did not start with the HTTP/2 preface; closing it");
            return;
        }
        Ok(Ok(_)) => {}
    }
    let Ok(permit) = shared.established.clone().try_acquire_owned() else {
        shared.refuse();
        return;
    };
    let info = ConnectInfo {
        tcp: waiter.stream.connect_info(),
        activity: Arc::new(ConnectionActivity::new()),
    };
    let idle = shared.limits.idle_timeout.map(|timeout| IdleTimer {
        timeout,
        sleep: Box::pin(tokio::time::sleep(timeout)),
    });
    let connection = Connection {
        stream: waiter.stream,
        replayed: 0,
        info,
        idle,
        frames: FrameScanner::default(),
        last_request: tokio::time::Instant::now(),
        closed: false,
        _permit: permit,
    };
    // An error means the server stopped accepting: the connection is dropped.
    let _ = tx.send(connection).await;
}

impl Shared {
    /// Closes the connection that has waited longest for its preface; resolves once its
    /// socket is closed. `None` when none waits.
    fn evict_oldest(&self) -> Option<oneshot::Receiver<()>> {
        let (_, waiting) = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .waiting
            .pop_first()?;
        waiting.close.cancel();
        Some(waiting.closed)
    }

    /// The connection `id` no longer waits for its preface.
    fn forget(&self, id: u64) {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .waiting
            .remove(&id);
    }

    /// A connection over the cap was closed.
    fn refuse(&self) {
        if let Some(count) = self.refused.due() {
            tracing::warn!(
                refused = count,
                max_connections = self.limits.max_connections,
                "connection limit reached; closing new connections"
            );
        }
    }
}

/// Counts events and says when one may be logged: at most once per [`WARN_PERIOD`],
/// with the number of events since the last log.
#[derive(Default)]
struct RateLimited {
    state: Mutex<(Option<Instant>, u64)>,
}

impl RateLimited {
    fn due(&self) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.1 += 1;
        if state.0.is_some_and(|last| last.elapsed() < WARN_PERIOD) {
            return None;
        }
        let count = state.1;
        *state = (Some(Instant::now()), 0);
        Some(count)
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
