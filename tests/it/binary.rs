//! The `ctxd` binary as a user runs it: zero configuration (a private PostgreSQL in its
//! data directory), health, API keys created with `ctxd tenant create`, who may call
//! without a key, and a clean stop on SIGTERM that also stops the private PostgreSQL.
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use ctxd::pb;
use ctxd::pb::context_service_client::ContextServiceClient;

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The `ctxd` binary on a data directory, with no DATABASE_URL.
pub fn ctxd(data_dir: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ctxd"));
    command
        .env_remove("DATABASE_URL")
        .env("CTXD_DATA_DIR", data_dir)
        .env("CTXD_LOG", "warn");
    command
}

pub async fn wait_serving(addr: &str, child: &mut Child) {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
    let every = Duration::from_millis(100);
    let serving = crate::support::poll(Duration::from_secs(90), every, async || {
        assert!(
            child.try_wait().unwrap().is_none(),
            "ctxd exited before serving"
        );
        let endpoint = tonic::transport::Endpoint::from_shared(format!("http://{addr}")).unwrap();
        let mut health = HealthClient::new(endpoint.connect().await.ok()?);
        let request = HealthCheckRequest {
            service: String::new(),
        };
        let status = health.check(request).await.ok()?.into_inner().status();
        (status == ServingStatus::Serving).then_some(())
    })
    .await;
    assert!(serving.is_some(), "ctxd did not serve within 90 s");
}

pub async fn terminate(mut child: Child) {
    let pid = child.id() as i32;
    // SAFETY: kill(2) on a child we own.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let every = Duration::from_millis(50);
    let status = crate::support::poll(Duration::from_secs(60), every, async || {
        child.try_wait().unwrap()
    })
    .await
    .expect("ctxd stopped within 60 s of SIGTERM");
    assert!(status.success(), "ctxd exited with {status} after SIGTERM");
}

fn start(data_dir: &std::path::Path, addr: &str) -> Child {
    ctxd(data_dir)
        .args(["serve", "--listen", addr])
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

#[tokio::test]
async fn zero_config_serve_keys_and_clean_stop() {
    let dir = tempfile::Builder::new()
        .prefix("ctxd-bin")
        .tempdir_in("/tmp")
        .unwrap();
    let addr = format!("127.0.0.1:{}", free_port());

    let mut child = start(dir.path(), &addr);
    wait_serving(&addr, &mut child).await;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = ContextServiceClient::new(channel);
    client
        .create_session(pb::CreateSessionRequest {
            session_id: "kept".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    terminate(child).await;
    let pid_file = |dir: &std::path::Path| {
        walk(dir)
            .into_iter()
            .any(|path| path.ends_with("postmaster.pid"))
    };
    assert!(!pid_file(dir.path()), "the private PostgreSQL was stopped");

    // A key created with the CLI; a keyed call is its tenant's, a keyless one (served:
    // the server listens on loopback) the `default` tenant's, whatever keys exist.
    let output = ctxd(dir.path())
        .args(["tenant", "create", "acme"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let key = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert!(key.starts_with("ctxd_") && key.len() == 69, "{key}");

    let mut child = start(dir.path(), &addr);
    wait_serving(&addr, &mut child).await;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut client = ContextServiceClient::new(channel);
    client
        .get_session(pb::GetSessionRequest {
            session_id: "kept".into(),
            include_view: false,
        })
        .await
        .unwrap();
    let mut request = tonic::Request::new(pb::GetSessionRequest {
        session_id: "kept".into(),
        include_view: false,
    });
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {key}").parse().unwrap());
    let status = client.get_session(request).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::NotFound, "{status:?}");
    let mut request = tonic::Request::new(pb::CreateSessionRequest {
        session_id: "acme-1".into(),
        ..Default::default()
    });
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {key}").parse().unwrap());
    client.create_session(request).await.unwrap();
    terminate(child).await;
    assert!(!pid_file(dir.path()));
}

/// `--anonymous-access allow` on a non-loopback address is refused at start unless
/// `--insecure` is given.
#[test]
fn refuses_anonymous_access_on_the_network_without_insecure() {
    let dir = tempfile::Builder::new()
        .prefix("ctxd-bin")
        .tempdir_in("/tmp")
        .unwrap();
    let output = ctxd(dir.path())
        .args(["serve", "--listen", &format!("0.0.0.0:{}", free_port())])
        .args(["--anonymous-access", "allow"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("without an API key") && stderr.contains("--insecure"),
        "{stderr}"
    );
}

/// A CreateSession without a key, to the server at `addr`.
async fn keyless_create(
    addr: &str,
    id: &str,
) -> Result<tonic::Response<pb::CreateSessionResponse>, tonic::Status> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let request = pb::CreateSessionRequest {
        session_id: id.into(),
        ..Default::default()
    };
    ContextServiceClient::new(channel)
        .create_session(request)
        .await
}

/// The default setting on a non-loopback address: the server starts, says so in its
/// log, and every call needs a key (here reached through 127.0.0.1, which a 0.0.0.0
/// listener also accepts).
#[sqlx::test]
async fn by_default_a_server_on_the_network_refuses_calls_without_a_key(pool: sqlx::PgPool) {
    let dir = tempfile::Builder::new()
        .prefix("ctxd-bin")
        .tempdir_in("/tmp")
        .unwrap();
    let port = free_port();
    let log = dir.path().join("ctxd.log");
    let mut child = ctxd(dir.path())
        .args(["serve", "--listen", &format!("0.0.0.0:{port}")])
        .env("DATABASE_URL", crate::harness::database_url(&pool))
        .env("CTXD_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let addr = format!("127.0.0.1:{port}");
    wait_serving(&addr, &mut child).await;
    let status = keyless_create(&addr, "anon").await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
    terminate(child).await;
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.contains("calls without an API key are refused") && log.contains("loopback"),
        "{log}"
    );
}

/// A deployment on a database of its own (DATABASE_URL) refuses calls without a key by
/// default even on loopback, where a proxy or sidecar on the same host would reach it;
/// `--anonymous-access allow` serves them, as the provider endpoint does on both.
#[sqlx::test]
async fn a_server_on_a_configured_database_refuses_keyless_calls_on_loopback(pool: sqlx::PgPool) {
    let dir = tempfile::Builder::new()
        .prefix("ctxd-bin")
        .tempdir_in("/tmp")
        .unwrap();
    for (access, served) in [(None, false), (Some("allow"), true)] {
        let (port, proxy) = (free_port(), free_port());
        let log = dir.path().join("ctxd.log");
        let mut command = ctxd(dir.path());
        command
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(["--proxy-listen", &format!("127.0.0.1:{proxy}")])
            .env("DATABASE_URL", crate::harness::database_url(&pool))
            .env("CTXD_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        if let Some(access) = access {
            command.env("CTXD_ANONYMOUS_ACCESS", access);
        }
        let mut child = command.spawn().unwrap();
        let addr = format!("127.0.0.1:{port}");
        wait_serving(&addr, &mut child).await;
        let created = keyless_create(&addr, &format!("anon-{served}")).await;
        match served {
            true => assert!(created.is_ok(), "{created:?}"),
            false => assert_eq!(created.unwrap_err().code(), tonic::Code::Unauthenticated),
        }
        // The provider endpoint follows the same rule: 401 before any upstream is asked.
        if !served {
            let body = r#"{"model": "m", "messages": [{"role": "user", "content": "hi"}]}"#;
            let response = reqwest::Client::new()
                .post(format!("http://127.0.0.1:{proxy}/v1/chat/completions"))
                .body(body)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 401);
        }
        terminate(child).await;
        let log = std::fs::read_to_string(&log).unwrap();
        if !served {
            assert!(log.contains("ctxd runs on a configured database"), "{log}");
        }
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}

/// `ctxd serve` against a database nobody listens on (port 1), with a password in the
/// URL; stderr piped, as under a service manager.
fn serve_unreachable_database() -> (std::process::ExitStatus, String) {
    let dir = tempfile::Builder::new()
        .prefix("ctxd-bin")
        .tempdir_in("/tmp")
        .unwrap();
    let output = ctxd(dir.path())
        .args(["serve", "--listen", &format!("127.0.0.1:{}", free_port())])
        .env("DATABASE_URL", "postgres://u:secretpw@127.0.0.1:1/x")
        .env("CTXD_LOG", "info")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status, stderr)
}

#[test]
fn unreachable_database_names_the_cause_not_the_password() {
    let (status, stderr) = serve_unreachable_database();
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.to_lowercase().contains("connection refused"),
        "{stderr}"
    );
    assert!(stderr.contains("127.0.0.1:1/x"), "names the URL: {stderr}");
    assert!(!stderr.contains("secretpw"), "{stderr}");
    // The pool's timeout (10 s) is not what is reported.
    assert!(!stderr.contains("pool timed out"), "{stderr}");
}

#[test]
fn piped_stderr_has_no_colour_codes() {
    let (_, stderr) = serve_unreachable_database();
    assert!(stderr.contains("INFO"), "a log line was written: {stderr}");
    assert!(!stderr.contains("\x1b["), "{stderr:?}");
}

/// `ctxd replay` against a running server: the report names every session it created,
/// and they are deleted unless `--keep` is given.
#[sqlx::test]
async fn replay_names_its_sessions_and_deletes_them_unless_kept(pool: sqlx::PgPool) {
    let mut server = crate::harness::TestServer::start(pool).await;
    let file = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/swe-trajectories/django__django-11099.traj.json.gz");
    for keep in [false, true] {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_ctxd"));
        command.args(["replay", "--addr", &server.addr.to_string()]);
        if keep {
            command.arg("--keep");
        }
        let output = command.arg(&file).output().await.unwrap();
        let stdout = String::from_utf8(output.stdout).unwrap();
        assert!(
            output.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let listed = stdout
            .split_once("\nsessions created")
            .unwrap_or_else(|| panic!("no session list in:\n{stdout}"))
            .1;
        let ids: Vec<&str> = listed
            .lines()
            .skip(1)
            .filter_map(|line| line.split_whitespace().next())
            .collect();
        assert_eq!(ids.len(), 1, "{listed}");
        assert!(ids[0].starts_with("replay-"), "{listed}");
        let found = server
            .client
            .get_session(pb::GetSessionRequest {
                session_id: ids[0].to_string(),
                include_view: false,
            })
            .await;
        match keep {
            true => assert!(found.is_ok(), "kept session {}: {found:?}", ids[0]),
            false => assert_eq!(found.unwrap_err().code(), tonic::Code::NotFound),
        }
    }
    server.stop().await;
}
