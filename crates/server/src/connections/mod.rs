//! Accepting TCP connections for the gRPC server, with limits: a socket reaches hyper
//! only once it has completed the TLS handshake (when the server has TLS) and sent the
//! whole HTTP/2 client preface, both within the handshake timeout;
//! sockets still waiting for it are bounded (the one waiting longest is closed when too
//! many wait, or when the process runs out of file descriptors); established connections
//! are capped; accept errors back off instead of spinning.
//!
//! # TLS
//!
//! With TLS, the handshake is the first thing a waiting connection does, under the same
//! handshake timeout and the same pending cap as the preface (a client that stalls in
//! the handshake is one more silent socket), with the configuration in force when the
//! connection arrived ([`crate::tls::ServerTls`]; a reload changes only what later
//! connections get). A client that sends plaintext, or (with mutual TLS) presents no
//! certificate the client CA vouches for, fails the handshake and is closed; hyper only
//! ever sees decrypted HTTP/2.
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
//! counted. It never closes in the middle of a frame or of a header block (HEADERS and
//! its CONTINUATIONs). Other frames (PING above all) do not postpone the close. What
//! remains is a race no server-side check can close: a client
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
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};
use tokio_stream::StreamExt as _;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::transport::server::{Connected, TcpConnectInfo};

mod idle;
mod transport;

pub use idle::{
    ConnectionActivity, InFlight, InFlightBody, InFlightLayer, InFlightService, READ_QUIET,
};
use idle::{FrameScanner, IdleTimer};
use transport::Transport;

use crate::tls::ServerTls;

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
/// connections that completed the TLS handshake (with `tls`) and sent the HTTP/2
/// preface in time, and fit under the cap.
pub fn incoming(
    listener: TcpListener,
    limits: ConnectionLimits,
    tls: Option<Arc<ServerTls>>,
) -> impl Stream<Item = Result<Connection, Infallible>> {
    let (tx, rx) = mpsc::channel(64);
    let shared = Arc::new(Shared {
        established: Arc::new(Semaphore::new(limits.max_connections)),
        limits,
        tls,
        pending: Mutex::new(Pending::default()),
        refused: RateLimited::default(),
    });
    tokio::spawn(accept_loop(listener, shared, tx));
    ReceiverStream::new(rx).map(Ok)
}

/// A connection handed to the server: the socket (or TLS on it), the preface already
/// read from it (given back to hyper first), its place under the cap (freed on drop),
/// and its RPCs in flight, for the idle timeout.
pub struct Connection {
    stream: Transport,
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
    /// TLS in force for new connections (`None`: plaintext).
    tls: Option<Arc<ServerTls>>,
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

/// A just-accepted socket: closed at once over the cap, otherwise it goes through its
/// TLS handshake and waits for its preface in a task of its own.
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

/// A socket waiting for its TLS handshake and preface; `_closed` is dropped after the
/// socket is closed (the socket moves into the handshake, which is dropped first),
/// which tells an evicting accept loop the descriptor is free.
struct Waiter {
    stream: TcpStream,
    _closed: oneshot::Sender<()>,
}

/// Why a waiting connection was closed before it reached hyper.
#[derive(Debug, thiserror::Error)]
enum NotOpened {
    #[error("the TLS handshake failed: {0}")]
    Tls(io::Error),
    #[error("the connection closed before its HTTP/2 preface: {0}")]
    Closed(io::Error),
    #[error("the connection did not start with the HTTP/2 preface")]
    NoPreface,
}

async fn handshake(
    shared: Arc<Shared>,
    id: u64,
    waiter: Waiter,
    close: CancellationToken,
    tx: mpsc::Sender<Connection>,
) {
    let tcp = waiter.stream.connect_info();
    let tls = shared.tls.as_ref().map(|tls| tls.acceptor());
    let opened = tokio::select! {
        () = close.cancelled() => return,
        () = tx.closed() => return,
        opened = tokio::time::timeout(
            shared.limits.handshake_timeout,
            open(waiter.stream, tls),
        ) => opened,
    };
    shared.forget(id);
    let stream = match opened {
        Err(_) => {
            tracing::debug!(
                tls = shared.tls.is_some(),
                "a connection did not complete its handshake and HTTP/2 preface in time; closing it"
            );
            return;
        }
        Ok(Err(error)) => {
            tracing::debug!(peer = ?tcp.remote_addr(), error = %error, "closing a connection");
            return;
        }
        Ok(Ok(stream)) => stream,
    };
    let Ok(permit) = shared.established.clone().try_acquire_owned() else {
        shared.refuse();
        return;
    };
    let info = ConnectInfo {
        tcp,
        activity: Arc::new(ConnectionActivity::new()),
    };
    let idle = shared.limits.idle_timeout.map(|timeout| IdleTimer {
        timeout,
        sleep: Box::pin(tokio::time::sleep(timeout)),
    });
    let connection = Connection {
        stream,
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

/// A waiting connection's opening: the TLS handshake with `tls`, if given, then the
/// HTTP/2 preface read and checked.
async fn open(
    stream: TcpStream,
    tls: Option<tokio_rustls::TlsAcceptor>,
) -> Result<Transport, NotOpened> {
    let mut stream = match tls {
        None => Transport::Plain(stream),
        Some(acceptor) => Transport::Tls(Box::new(
            acceptor.accept(stream).await.map_err(NotOpened::Tls)?,
        )),
    };
    let mut preface = [0u8; PREFACE.len()];
    stream
        .read_exact(&mut preface)
        .await
        .map_err(NotOpened::Closed)?;
    if &preface != PREFACE {
        return Err(NotOpened::NoPreface);
    }
    Ok(stream)
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
