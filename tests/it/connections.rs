//! Connection limits over real TCP: a socket that never sends the HTTP/2 preface is
//! closed, silent sockets cannot starve real clients even when the server runs out of
//! file descriptors, connections over the cap are closed while established ones keep
//! working, and connections with no RPC in flight for the idle timeout are closed
//! (pings do not keep them) while a quiet SubscribeEvents stream or a long call keeps
//! its connection.
use std::time::{Duration, Instant};

use ctxd::connections::{ConnectionLimits, PREFACE};
use ctxd::pb;
use ctxd::pb::context_service_client::ContextServiceClient;
use ctxd::server::ServeOptions;
use sqlx::PgPool;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::harness::*;

/// Only a failure guard: a correct server closes the socket long before.
const GUARD: Duration = Duration::from_secs(30);

fn options(limits: ConnectionLimits) -> ServeOptions {
    ServeOptions {
        connections: limits,
        ..Default::default()
    }
}

/// Reads until the server closes the socket; returns what it sent before.
async fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut received = Vec::new();
    match tokio::time::timeout(GUARD, stream.read_to_end(&mut received)).await {
        Ok(Ok(_)) => {}
        // A reset is a close too (the server closed with our bytes unread).
        Ok(Err(error)) if error.kind() == std::io::ErrorKind::ConnectionReset => {}
        Ok(Err(error)) => panic!("reading failed: {error}"),
        Err(_) => panic!(
            "the server did not close the connection within {GUARD:?} (received {} bytes)",
            received.len()
        ),
    }
    received
}

async fn create_session(client: &mut Client, id: &str) -> Result<(), tonic::Status> {
    client
        .create_session(pb::CreateSessionRequest {
            session_id: id.into(),
            ..Default::default()
        })
        .await
        .map(drop)
}

#[sqlx::test]
async fn silent_and_stalled_connections_are_closed(pool: PgPool) {
    let limits = ConnectionLimits {
        handshake_timeout: Duration::from_millis(300),
        ..Default::default()
    };
    let server =
        TestServer::start_with_options(pool, TestServer::default_config(), options(limits)).await;

    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    assert!(read_until_closed(&mut silent).await.is_empty());

    // Half a preface, then nothing: closed as well, without an answer.
    let mut stalled = TcpStream::connect(server.addr).await.unwrap();
    stalled.write_all(&PREFACE[..10]).await.unwrap();
    assert!(read_until_closed(&mut stalled).await.is_empty());

    // A real client is served as before.
    let mut client = server.client.clone();
    create_session(&mut client, "after-silence").await.unwrap();
    server.stop().await;
}

#[sqlx::test]
async fn connections_over_the_cap_are_closed_and_established_ones_kept(pool: PgPool) {
    let limits = ConnectionLimits {
        max_connections: 1,
        // Long, so that only the cap can close the second connection.
        handshake_timeout: Duration::from_secs(3600),
        ..Default::default()
    };
    let mut server =
        TestServer::start_with_options(pool, TestServer::default_config(), options(limits)).await;
    let mut client = server.client.clone();
    // Served: the harness's connection holds the only place.
    create_session(&mut client, "first").await.unwrap();

    let mut over = TcpStream::connect(server.addr).await.unwrap();
    // The write may fail when the server has already closed the socket.
    let _ = over.write_all(PREFACE).await;
    let answer = read_until_closed(&mut over).await;
    assert!(
        answer.is_empty(),
        "a connection over the cap was answered ({} bytes)",
        answer.len()
    );
    create_session(&mut client, "still-served").await.unwrap();

    // Once the established connection closes, its place is free for a new client.
    drop(client);
    server.client = ContextServiceClient::new(
        tonic::transport::Endpoint::from_shared(format!("http://{}", server.addr))
            .unwrap()
            .connect_lazy(),
    );
    // No event tells when the server has seen the close: poll against a deadline.
    let mut attempt = 0;
    let mut refused = None;
    let reused = crate::support::poll(GUARD, Duration::from_millis(50), async || {
        attempt += 1;
        let mut fresh = ContextServiceClient::new(
            tonic::transport::Endpoint::from_shared(format!("http://{}", server.addr))
                .unwrap()
                .connect_lazy(),
        );
        let created = create_session(&mut fresh, &format!("fresh-{attempt}")).await;
        refused = created.err();
        refused.is_none().then_some(())
    })
    .await;
    assert!(
        reused.is_some(),
        "the freed place was not reused: {refused:?}"
    );
    server.stop().await;
}

/// The defect as reported: with the server's descriptor limit at 256, idle sockets made
/// every new client time out. The server here is the `ctxd` binary with that limit,
/// and 1 000 idle connections are opened before a real client.
#[tokio::test]
async fn new_clients_are_served_while_1000_idle_connections_are_open() {
    const IDLE: usize = 1000;
    const SERVER_FDS: libc::rlim_t = 256;
    // The test holds the idle sockets itself: make room for them.
    raise_fd_limit(IDLE as libc::rlim_t + 512);

    let pool = fresh_database("ctxd_conn").await;
    let database = pool.connect_options().get_database().unwrap().to_string();
    pool.close().await;
    let base = std::env::var("DATABASE_URL").unwrap();
    let url = with_database(&base, &database);
    let addr = format!("127.0.0.1:{}", crate::binary::free_port());
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_ctxd"));
    command
        .args(["serve", "--listen", &addr])
        .args(["--db-max-connections", "4", "--jobs-workers", "0"])
        .env("DATABASE_URL", &url)
        // On its test database, a deployment refuses calls without a key unless told.
        .env("CTXD_ANONYMOUS_ACCESS", "allow")
        .env("CTXD_LOG", "warn")
        .stdout(std::process::Stdio::null());
    // SAFETY: setrlimit(2) is async-signal-safe; nothing else runs in the child.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: SERVER_FDS,
                rlim_max: SERVER_FDS,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut server = Server(Some(command.spawn().unwrap()));
    crate::binary::wait_serving(&addr, server.0.as_mut().unwrap()).await;

    let mut idle = Vec::with_capacity(IDLE);
    let served = tokio::time::timeout(GUARD, async {
        // Connecting waits only for the kernel's backlog, which a server that stopped
        // accepting lets fill up.
        for _ in 0..IDLE {
            idle.push(TcpStream::connect(&addr).await.unwrap());
        }
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect_lazy();
        let mut client = ContextServiceClient::new(channel);
        create_session(&mut client, "among-idle").await?;
        session_of(&mut client, "among-idle").await
    })
    .await;
    let opened = idle.len();
    drop(idle);
    let session = served
        .unwrap_or_else(|_| {
            panic!("a new client was not served with {opened} idle connections open")
        })
        .unwrap();
    assert_eq!(session.session_id, "among-idle");
    crate::binary::terminate(server.0.take().unwrap()).await;
}

/// The server process, killed if the test fails before stopping it.
struct Server(Option<std::process::Child>);

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

async fn session_of(client: &mut Client, id: &str) -> Result<pb::Session, tonic::Status> {
    let response = client
        .get_session(pb::GetSessionRequest {
            session_id: id.into(),
            include_view: false,
        })
        .await?;
    Ok(response.into_inner().session.unwrap())
}

/// `url` naming `database` instead of its own.
fn with_database(url: &str, database: &str) -> String {
    let (url, query) = url.split_once('?').unwrap_or((url, ""));
    let (scheme, rest) = url.split_once("://").unwrap();
    let authority = rest.split('/').next().unwrap();
    let query = if query.is_empty() {
        String::new()
    } else {
        format!("?{query}")
    };
    format!("{scheme}://{authority}/{database}{query}")
}

/// Raises this process's soft descriptor limit to at least `wanted` (within the hard
/// limit).
fn raise_fd_limit(wanted: libc::rlim_t) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit(2) with a valid pointer.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        if limit.rlim_cur < wanted {
            limit.rlim_cur = wanted.min(limit.rlim_max);
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
        }
    }
    assert!(
        limit.rlim_cur >= wanted,
        "this test needs {wanted} file descriptors; the hard limit is {}",
        limit.rlim_max
    );
}

/// The idle timeout of the idle tests: short, so that several pass within a test.
const IDLE: Duration = Duration::from_millis(300);

fn idle_options() -> ServeOptions {
    options(ConnectionLimits {
        idle_timeout: Some(IDLE),
        ..Default::default()
    })
}

/// An HTTP/2 frame with an empty stream id.
fn frame(kind: u8, flags: u8, payload: &[u8]) -> Vec<u8> {
    let len = payload.len();
    let mut bytes = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    bytes.extend([0, 0, 0, 0]);
    bytes.extend(payload);
    bytes
}

const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const ACK: u8 = 0x1;

/// A raw HTTP/2 connection: the preface and empty SETTINGS sent, the server's
/// SETTINGS acknowledged ahead.
async fn raw_http2(addr: std::net::SocketAddr) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut hello = PREFACE.to_vec();
    hello.extend(frame(SETTINGS, 0, &[]));
    hello.extend(frame(SETTINGS, ACK, &[]));
    stream.write_all(&hello).await.unwrap();
    stream
}

#[sqlx::test]
async fn a_connection_with_no_rpc_is_closed_after_the_idle_timeout_though_it_pings(pool: PgPool) {
    let server =
        TestServer::start_with_options(pool, TestServer::default_config(), idle_options()).await;
    let started = Instant::now();
    let stream = raw_http2(server.addr).await;
    let (mut reader, mut writer) = stream.into_split();
    // Keepalive pings, three per idle timeout (pacing, not synchronization): they are
    // answered, and do not keep the connection open.
    let pinger = tokio::spawn(async move {
        for n in 0u64.. {
            let ping = frame(PING, 0, &n.to_be_bytes());
            if writer.write_all(&ping).await.is_err() {
                return n;
            }
            tokio::time::sleep(IDLE / 3).await;
        }
        unreachable!()
    });
    let mut received = Vec::new();
    match tokio::time::timeout(GUARD, reader.read_to_end(&mut received)).await {
        Ok(Ok(_)) => {}
        Ok(Err(error)) if error.kind() == std::io::ErrorKind::ConnectionReset => {}
        Ok(Err(error)) => panic!("reading failed: {error}"),
        Err(_) => panic!("the idle connection was not closed within {GUARD:?}"),
    }
    let lasted = started.elapsed();
    assert!(
        lasted >= IDLE,
        "closed after {lasted:?}, before the idle timeout"
    );
    // The server answered: its SETTINGS, then PING ACKs.
    assert!(
        received.len() > 9 && received[3] == SETTINGS,
        "{received:?}"
    );
    let pings = pinger.await.unwrap();
    assert!(pings >= 3, "only {pings} pings were sent before the close");

    // Clients are served as before; a closed channel reconnects for its next call.
    let mut client = Client::new(channel(server.addr).await);
    create_session(&mut client, "after-idle").await.unwrap();
    server.stop().await;
}

#[sqlx::test]
async fn a_quiet_subscribe_events_stream_keeps_its_connection_past_the_idle_timeout(pool: PgPool) {
    use crate::events::{evicting_turn, next_event, small_policy, until_live};
    let server =
        TestServer::start_with_options(pool, TestServer::default_config(), idle_options()).await;
    let mut client = Client::new(channel(server.addr).await);
    create(&mut client, "quiet", small_policy()).await;
    // Its own connection, with nothing else on it; no heartbeat within the test.
    let mut subscriber = Client::new(channel(server.addr).await);
    let mut stream = subscriber
        .subscribe_events(pb::SubscribeEventsRequest {
            session_id: "quiet".into(),
            heartbeat_interval_ms: 600_000,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(until_live(&mut stream).await.is_empty());
    // A connection without an RPC, opened now, is closed meanwhile.
    let mut idle = raw_http2(server.addr).await;
    let quiet = IDLE * 4;
    let waited = Instant::now();
    match tokio::time::timeout(quiet, stream.message()).await {
        Err(_) => {}
        Ok(item) => panic!("the quiet stream yielded {item:?}"),
    }
    assert!(waited.elapsed() >= IDLE * 3);
    read_until_closed(&mut idle).await;

    // A fresh connection for the append (the first one was idle for the whole wait).
    let mut client = Client::new(channel(server.addr).await);
    evicting_turn(&mut client, "quiet", 1).await;
    let event = next_event(&mut stream)
        .await
        .expect("the stream ended instead of delivering the event");
    assert_eq!(event.session_id, "quiet");
    server.stop().await;
}

#[sqlx::test]
async fn a_call_in_flight_longer_than_the_idle_timeout_is_not_cut(pool: PgPool) {
    use crate::jobs::{fill, profile};
    use crate::model_server::{Behavior, ModelServer};
    use ctxd::summarizer::model::{Api, ModelSummarizer, Profile};
    // Every summarizer call takes longer than the test: no job ends within it.
    let model = ModelServer::start(Behavior::Slow(60_000)).await;
    let mut config = TestServer::default_config();
    let slow = Profile {
        timeout_secs: 30.0,
        ..profile(&model, Api::Openai)
    };
    config.summarizers.insert(
        "model".into(),
        Some(std::sync::Arc::new(
            ModelSummarizer::with_key(slow, Some("key".into())).unwrap(),
        )),
    );
    let server = TestServer::start_with_options(pool, config, idle_options()).await;
    let mut client = Client::new(channel(server.addr).await);
    fill(&mut client, "long", 20).await;

    // Compact waits for its job (which cannot end) for 5 idle timeouts, on a connection
    // of its own.
    let mut waiting = Client::new(channel(server.addr).await);
    let wait = IDLE * 5;
    let started = Instant::now();
    let compacted = waiting
        .compact(pb::CompactRequest {
            session_id: "long".into(),
            mode: pb::CompactMode::Summarize as i32,
            wait: true,
            wait_timeout_ms: wait.as_millis() as u32,
            ..Default::default()
        })
        .await
        .expect("the long call was cut")
        .into_inner();
    assert!(started.elapsed() >= wait, "the call did not last its wait");
    let job = compacted.job.expect("a summarization job");
    assert!(
        [pb::JobState::Available as i32, pb::JobState::Running as i32].contains(&job.state),
        "{job:?}"
    );
    server.stop().await;
}
