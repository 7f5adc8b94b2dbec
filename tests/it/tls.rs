//! TLS on the gRPC port over real handshakes on loopback (certificates made here with
//! rcgen): a tonic client trusting the CA is served and a plaintext client is closed;
//! the handshake is one more thing a new connection must finish within the handshake
//! timeout, and connections stalled in it count against the pending cap; with a client
//! CA, clients without its certificate are refused in the handshake; a reload takes the
//! new files for new connections and a failed one keeps the old; bad files stop the
//! start naming the file.
use std::error::Error as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ctxd::connections::{ConnectionLimits, PREFACE};
use ctxd::pb;
use ctxd::pb::context_service_client::ContextServiceClient;
use ctxd::server::ServeOptions;
use ctxd::tls::{ServerTls, TlsFiles};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, ExtendedKeyUsagePurpose, IsCa, KeyPair,
};
use sqlx::PgPool;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::rustls;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};

use crate::harness::*;

/// Only a failure guard: a correct server closes the socket long before.
const GUARD: Duration = Duration::from_secs(30);

/// A CA that issues server and client certificates.
struct Ca {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// A certificate and its key, PEM.
struct Leaf {
    cert: String,
    key: String,
}

impl Ca {
    fn new() -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        Ca {
            issuer: CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap(),
        }
    }

    fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// A server certificate for 127.0.0.1 and localhost.
    fn server(&self) -> Leaf {
        self.leaf(
            vec!["127.0.0.1".into(), "localhost".into()],
            ExtendedKeyUsagePurpose::ServerAuth,
        )
    }

    fn client(&self) -> Leaf {
        self.leaf(vec!["client".into()], ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn leaf(&self, names: Vec<String>, usage: ExtendedKeyUsagePurpose) -> Leaf {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(names).unwrap();
        params.extended_key_usages = vec![usage];
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Leaf {
            cert: cert.pem(),
            key: key.serialize_pem(),
        }
    }
}

/// The server's files in a temporary directory.
struct Files {
    dir: tempfile::TempDir,
    ca: Ca,
}

impl Files {
    fn new(client_ca: Option<&Ca>) -> Files {
        let files = Files {
            dir: tempfile::tempdir().unwrap(),
            ca: Ca::new(),
        };
        files.install(&files.ca.server());
        if let Some(ca) = client_ca {
            std::fs::write(files.path("client-ca.pem"), ca.pem()).unwrap();
        }
        files
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn install(&self, leaf: &Leaf) {
        std::fs::write(self.path("cert.pem"), &leaf.cert).unwrap();
        std::fs::write(self.path("key.pem"), &leaf.key).unwrap();
    }

    fn tls_files(&self) -> TlsFiles {
        let client_ca = self.path("client-ca.pem");
        TlsFiles {
            cert: self.path("cert.pem"),
            key: self.path("key.pem"),
            client_ca: client_ca.exists().then_some(client_ca),
        }
    }

    fn server_tls(&self) -> Arc<ServerTls> {
        Arc::new(ServerTls::load(self.tls_files()).unwrap())
    }
}

fn options(tls: Arc<ServerTls>, limits: ConnectionLimits) -> ServeOptions {
    ServeOptions {
        connections: limits,
        tls: Some(tls),
        ..Default::default()
    }
}

/// A tonic client over TLS trusting `ca`, presenting `identity` when given.
async fn tls_client(
    addr: std::net::SocketAddr,
    ca: &str,
    identity: Option<&Leaf>,
) -> Result<Client, tonic::transport::Error> {
    let mut config = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca));
    if let Some(leaf) = identity {
        config = config.identity(Identity::from_pem(&leaf.cert, &leaf.key));
    }
    let channel = Endpoint::from_shared(format!("https://{addr}"))
        .unwrap()
        .tls_config(config)?
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await?;
    Ok(ContextServiceClient::new(channel))
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

/// Reads until the server closes the socket; returns what it sent before.
async fn read_until_closed<S: tokio::io::AsyncRead + Unpin>(stream: &mut S) -> Vec<u8> {
    let mut received = Vec::new();
    match tokio::time::timeout(GUARD, stream.read_to_end(&mut received)).await {
        Ok(Ok(_)) => {}
        // A reset is a close too; so is a TLS stream cut without close_notify.
        Ok(Err(error))
            if matches!(
                error.kind(),
                std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::UnexpectedEof
            ) => {}
        Ok(Err(error)) => panic!("reading failed: {error}"),
        Err(_) => panic!(
            "the server did not close the connection within {GUARD:?} (received {} bytes)",
            received.len()
        ),
    }
    received
}

/// A raw TLS handshake with rustls (trusting `ca`, asking for h2); returns the stream
/// and the certificate the server presented.
async fn handshake(
    addr: std::net::SocketAddr,
    ca: &str,
) -> std::io::Result<(
    tokio_rustls::client::TlsStream<TcpStream>,
    rustls::pki_types::CertificateDer<'static>,
)> {
    use rustls::pki_types::pem::PemObject as _;
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls::pki_types::CertificateDer::from_pem_slice(ca.as_bytes()).unwrap())
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(addr).await?;
    let name = rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let stream = connector.connect(name, tcp).await?;
    let served = stream.get_ref().1.peer_certificates().unwrap()[0].clone();
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    Ok((stream, served))
}

fn der_of(pem: &str) -> Vec<u8> {
    use rustls::pki_types::pem::PemObject as _;
    rustls::pki_types::CertificateDer::from_pem_slice(pem.as_bytes())
        .unwrap()
        .to_vec()
}

#[sqlx::test]
async fn a_tls_client_is_served_and_a_plaintext_one_closed(pool: PgPool) {
    let files = Files::new(None);
    let limits = ConnectionLimits {
        // Long: only the failed handshake may close the plaintext client.
        handshake_timeout: Duration::from_secs(3600),
        ..Default::default()
    };
    let server = TestServer::start_with_options(
        pool,
        TestServer::default_config(),
        options(files.server_tls(), limits),
    )
    .await;
    let mut client = tls_client(server.addr, &files.ca.pem(), None)
        .await
        .unwrap();
    create_session(&mut client, "over-tls").await.unwrap();

    let mut plaintext = TcpStream::connect(server.addr).await.unwrap();
    let _ = plaintext.write_all(PREFACE).await;
    let answer = read_until_closed(&mut plaintext).await;
    // Nothing, or a TLS alert record (content type 21): never an HTTP/2 frame.
    assert!(
        answer.is_empty() || answer[0] == 0x15,
        "a plaintext client was answered {answer:?}"
    );
    let refused = Endpoint::from_shared(format!("http://{}", server.addr))
        .unwrap()
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await;
    // tonic reports a connection that failed under it as UNKNOWN "transport error".
    if let Ok(channel) = refused {
        let status = create_session(&mut ContextServiceClient::new(channel), "plaintext")
            .await
            .unwrap_err();
        assert!(status.source().is_some(), "{status:?}");
    }
    create_session(&mut client, "still-served").await.unwrap();
    server.stop().await;
}

#[sqlx::test]
async fn the_tls_handshake_is_bounded_by_the_handshake_timeout_and_the_pending_cap(pool: PgPool) {
    let files = Files::new(None);
    let limits = ConnectionLimits {
        handshake_timeout: Duration::from_millis(500),
        ..Default::default()
    };
    let tls = files.server_tls();
    let server = TestServer::start_with_options(
        pool.clone(),
        TestServer::default_config(),
        options(tls.clone(), limits),
    )
    .await;
    // Silent: no ClientHello.
    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    assert!(read_until_closed(&mut silent).await.is_empty());
    // Half a ClientHello.
    let mut stalled = TcpStream::connect(server.addr).await.unwrap();
    stalled
        .write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
        .await
        .unwrap();
    read_until_closed(&mut stalled).await;
    // A finished handshake, then no preface: closed too, within the same timeout.
    let (mut quiet, _) = handshake(server.addr, &files.ca.pem()).await.unwrap();
    assert!(read_until_closed(&mut quiet).await.is_empty());
    server.stop().await;

    // Sockets stalled before their handshake wait under the pending cap: past it the
    // oldest is closed, while a real client still gets through.
    let limits = ConnectionLimits {
        handshake_timeout: Duration::from_secs(3600),
        max_pending: 2,
        ..Default::default()
    };
    let server =
        TestServer::start_with_options(pool, TestServer::default_config(), options(tls, limits))
            .await;
    let mut oldest = TcpStream::connect(server.addr).await.unwrap();
    let _second = TcpStream::connect(server.addr).await.unwrap();
    let _third = TcpStream::connect(server.addr).await.unwrap();
    assert!(read_until_closed(&mut oldest).await.is_empty());
    let mut client = tls_client(server.addr, &files.ca.pem(), None)
        .await
        .unwrap();
    create_session(&mut client, "past-the-stalled")
        .await
        .unwrap();
    server.stop().await;
}

#[sqlx::test]
async fn with_a_client_ca_only_clients_with_its_certificates_are_served(pool: PgPool) {
    let client_ca = Ca::new();
    let files = Files::new(Some(&client_ca));
    let server = TestServer::start_with_options(
        pool,
        TestServer::default_config(),
        options(files.server_tls(), ConnectionLimits::default()),
    )
    .await;
    let ca = files.ca.pem();
    // Without a certificate, or with one of another CA: refused in the handshake with
    // an alert (with TLS 1.3 the client reads it after its own handshake is done).
    for (identity, alert) in [
        (None, "CertificateRequired"),
        // rcgen's CAs share one name, so rustls finds the issuer and the signature fails.
        (Some(Ca::new().client()), "received fatal alert"),
    ] {
        let error = match tls_client(server.addr, &ca, identity.as_ref()).await {
            Ok(mut client) => format!("{:?}", create_session(&mut client, "refused").await),
            Err(error) => format!("{error:?}"),
        };
        assert!(error.contains(alert), "{error}");
    }
    let mut client = tls_client(server.addr, &ca, Some(&client_ca.client()))
        .await
        .unwrap();
    create_session(&mut client, "with-certificate")
        .await
        .unwrap();
    server.stop().await;
}

#[sqlx::test]
async fn a_reload_serves_the_new_files_to_new_connections_and_a_failed_one_keeps_the_old(
    pool: PgPool,
) {
    let files = Files::new(None);
    let tls = files.server_tls();
    let server = TestServer::start_with_options(
        pool,
        TestServer::default_config(),
        options(tls.clone(), ConnectionLimits::default()),
    )
    .await;
    let ca = files.ca.pem();
    let first = std::fs::read_to_string(files.path("cert.pem")).unwrap();
    let (_, served) = handshake(server.addr, &ca).await.unwrap();
    assert_eq!(served.to_vec(), der_of(&first));
    let mut before = tls_client(server.addr, &ca, None).await.unwrap();
    create_session(&mut before, "before").await.unwrap();

    let renewed = files.ca.server();
    files.install(&renewed);
    tls.reload().unwrap();
    let (_, served) = handshake(server.addr, &ca).await.unwrap();
    assert_eq!(served.to_vec(), der_of(&renewed.cert));
    // The connection made before the reload goes on.
    create_session(&mut before, "before-still").await.unwrap();

    // A key that does not match the certificate, then a certificate file without one:
    // each reload fails naming its files, and the renewed certificate stays in force.
    std::fs::write(files.path("key.pem"), files.ca.server().key).unwrap();
    let error = tls.reload().unwrap_err().to_string();
    assert!(
        error.contains("key.pem") && error.contains("cert.pem"),
        "{error}"
    );
    files.install(&renewed);
    std::fs::write(files.path("cert.pem"), "no certificate here\n").unwrap();
    let error = tls.reload().unwrap_err().to_string();
    assert!(error.contains("cert.pem"), "{error}");
    let (_, served) = handshake(server.addr, &ca).await.unwrap();
    assert_eq!(served.to_vec(), der_of(&renewed.cert));
    let mut after = tls_client(server.addr, &ca, None).await.unwrap();
    create_session(&mut after, "after-failed-reloads")
        .await
        .unwrap();
    server.stop().await;
}

/// `ctxd serve` with a TLS file that cannot be read stops at once, naming the file.
#[test]
fn a_missing_tls_file_stops_the_start_naming_it() {
    let files = Files::new(None);
    let missing = files.path("missing-key.pem");
    let output = serve_with_tls(&files.path("cert.pem"), &missing);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("missing-key.pem"), "{stderr}");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_ctxd"))
        .args(["serve", "--tls-cert"])
        .arg(files.path("cert.pem"))
        .env_remove("DATABASE_URL")
        .env("CTXD_DATA_DIR", files.path("data"))
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--tls-key"), "{stderr}");
    assert!(
        !files.path("data").exists(),
        "no database is started for a server that cannot serve"
    );
}

fn serve_with_tls(cert: &Path, key: &Path) -> std::process::Output {
    let data = cert.parent().unwrap().join("data");
    std::process::Command::new(env!("CARGO_BIN_EXE_ctxd"))
        .args(["serve", "--listen", "127.0.0.1:0", "--tls-cert"])
        .arg(cert)
        .arg("--tls-key")
        .arg(key)
        .env_remove("DATABASE_URL")
        .env("CTXD_DATA_DIR", &data)
        .output()
        .unwrap()
}

/// `ctxd serve` on a non-loopback address with keys required warns at start that the
/// keys travel in plaintext, unless it serves TLS.
#[test]
fn keys_off_loopback_without_tls_are_warned_about() {
    let files = Files::new(None);
    let Ok(url) = std::env::var("DATABASE_URL") else {
        panic!("DATABASE_URL must name the test server's database");
    };
    for tls in [false, true] {
        let log_path = files.path(&format!("serve-{tls}.log"));
        let log = std::fs::File::create(&log_path).unwrap();
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_ctxd"));
        command
            .args(["serve", "--anonymous-access", "deny", "--listen"])
            .arg(format!("0.0.0.0:{}", crate::binary::free_port()))
            .env("DATABASE_URL", &url)
            .env("CTXD_LOG", "info")
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        if tls {
            command
                .arg("--tls-cert")
                .arg(files.path("cert.pem"))
                .arg("--tls-key")
                .arg(files.path("key.pem"));
        }
        let mut child = command.spawn().unwrap();
        let deadline = std::time::Instant::now() + GUARD;
        let text = loop {
            let text = std::fs::read_to_string(&log_path).unwrap();
            if text.contains("ctxd serving") {
                break text;
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "ctxd exited before serving: {text}"
            );
            assert!(
                std::time::Instant::now() < deadline,
                "ctxd did not serve: {text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        // SAFETY: kill(2) on a child we own.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        child.wait().unwrap();
        assert_eq!(
            text.contains("API keys travel in plaintext"),
            !tls,
            "{text}"
        );
    }
}

#[sqlx::test]
async fn the_provider_endpoint_speaks_tls_with_the_servers_certificates(pool: PgPool) {
    use crate::proxy::fake::{Fake, Step};
    let files = Files::new(None);
    let fake = Fake::start(vec![Step::Answer("over TLS")], 16_000).await;
    let tls = Some(files.server_tls());
    let endpoint = crate::proxy::start_endpoint_with(
        pool,
        &fake.url(),
        16_000,
        ctxd::proxy::Settings::new(1 << 20),
        tls,
    )
    .await;
    assert!(endpoint.url.starts_with("https://"));
    let ca = reqwest::Certificate::from_pem(files.ca.pem().as_bytes()).unwrap();
    let trusting = reqwest::Client::builder()
        .add_root_certificate(ca)
        .build()
        .unwrap();
    let body = serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    let response = trusting
        .post(format!("{}/v1/chat/completions", endpoint.url))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(String::from_utf8_lossy(&response.bytes().await.unwrap()).contains("over TLS"));
    // Plaintext HTTP to the TLS port gets no answer.
    let plain = endpoint.url.replacen("https://", "http://", 1);
    let url = format!("{plain}/v1/chat/completions");
    let refused = reqwest::Client::new()
        .post(url)
        .body(body.to_string())
        .send()
        .await;
    assert!(refused.is_err() || !refused.unwrap().status().is_success());
}
