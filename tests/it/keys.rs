//! Key lifecycle through the `ctxd` command line against running servers: a key revoked
//! with `ctxd key revoke` is refused by every replica within the key cache time (5 s),
//! an expired key like a revoked one, a rotated key after its grace period; and the
//! admin commands work on the private PostgreSQL of a `ctxd serve` that is running.
use std::time::{Duration, Instant};

use ctxd::pb;
use sqlx::PgPool;
use tonic::Code;

use crate::binary::{free_port, terminate, wait_serving};
use crate::harness::{Client, TestServer, database_url};

/// What the documentation promises: a revoked key is refused everywhere within 5 s.
const PROMISED: Duration = Duration::from_secs(5);

/// Where the command line finds the database.
enum Database<'a> {
    Url(String),
    DataDir(&'a std::path::Path),
}

/// Runs `ctxd ARGS` and returns its stdout; fails the test if it fails.
async fn cli(database: &Database<'_>, args: &[&str]) -> String {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_ctxd"));
    command.args(args).env("CTXD_LOG", "warn");
    match database {
        Database::Url(url) => command.env("DATABASE_URL", url),
        Database::DataDir(dir) => command.env_remove("DATABASE_URL").env("CTXD_DATA_DIR", dir),
    };
    let output = command.output().await.unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        output.status.success(),
        "ctxd {args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn keyed<T>(message: T, key: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {key}").parse().unwrap());
    request
}

fn get(session_id: &str) -> pb::GetSessionRequest {
    pb::GetSessionRequest {
        session_id: session_id.into(),
        include_view: false,
    }
}

/// Asks with `key` until the server refuses it as UNAUTHENTICATED (any other outcome
/// than success or that fails the test); when, measured from `since`.
async fn until_refused(client: &mut Client, key: &str, session: &str, since: Instant) -> Duration {
    let deadline = since + Duration::from_secs(60);
    loop {
        match client.get_session(keyed(get(session), key)).await {
            Ok(_) => assert!(Instant::now() < deadline, "the key is still accepted"),
            Err(status) => {
                assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
                let took = since.elapsed();
                eprintln!("{session}: the key was refused {took:?} after the start");
                return took;
            }
        }
        tokio::task::yield_now().await;
    }
}

/// The row of `key` in a JSON listing.
fn listed_row(listing: &str, key: &str) -> serde_json::Value {
    let id = listed_id(listing, key);
    listing
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|row| row["id"] == id)
        .unwrap()
}

/// The id of the key `key` in `ctxd key list --json`, checking the listing shows its
/// prefix and never the key itself.
fn listed_id(listing: &str, key: &str) -> i64 {
    assert!(!listing.contains(key), "a listing shows a whole key");
    listing
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|row| row["prefix"] == ctxd::auth::key_prefix(key))
        .unwrap_or_else(|| panic!("no key with the prefix of {key} in {listing}"))["id"]
        .as_i64()
        .unwrap()
}

/// Two replicas on one database use a key (each caching it); `ctxd key revoke` by
/// prefix; both refuse the key within the cache time of the revocation, and the
/// tenant's other key keeps working.
#[sqlx::test]
async fn a_revoked_key_is_refused_by_every_replica_within_the_cache_time(pool: PgPool) {
    let database = Database::Url(database_url(&pool));
    let key = cli(&database, &["tenant", "create", "acme"])
        .await
        .trim()
        .to_string();
    let other = cli(&database, &["key", "create", "--tenant", "acme"])
        .await
        .trim()
        .to_string();
    let replicas = [
        TestServer::start(pool.clone()).await,
        TestServer::start(pool.clone()).await,
    ];
    let mut clients: Vec<Client> = replicas.iter().map(|r| r.client.clone()).collect();
    clients[0]
        .create_session(keyed(
            pb::CreateSessionRequest {
                session_id: "s".into(),
                ..Default::default()
            },
            &key,
        ))
        .await
        .unwrap();
    for client in &mut clients {
        client.get_session(keyed(get("s"), &key)).await.unwrap();
    }
    let revoking = Instant::now();
    let said = cli(&database, &["key", "revoke", &ctxd::auth::key_prefix(&key)]).await;
    assert!(said.starts_with("revoked key"), "{said}");
    for client in &mut clients {
        let took = until_refused(client, &key, "s", revoking).await;
        // The key was last looked up before the revocation began, so each replica's
        // cached answer lapses within the cache time of it; a little more for the
        // answer of the last call to arrive.
        assert!(
            took <= PROMISED + Duration::from_secs(1),
            "refused only after {took:?}"
        );
        client.get_session(keyed(get("s"), &other)).await.unwrap();
    }
    let listing = cli(&database, &["key", "list", "--tenant", "acme", "--json"]).await;
    let revoked = listed_row(&listing, &key);
    assert_eq!(revoked["status"], "revoked");
    assert!(revoked["revoked_at"].is_string());
    // Revoking it again (by id: a prefix names only active keys) keeps the first
    // revocation's time.
    let id = listed_id(&listing, &key).to_string();
    cli(&database, &["key", "revoke", &id]).await;
    let again = cli(&database, &["key", "list", "--tenant", "acme", "--json"]).await;
    let again = listed_row(&again, &key);
    assert_eq!(again["revoked_at"], revoked["revoked_at"]);
    for replica in replicas {
        replica.stop().await;
    }
}

/// A key made to expire in 2 s works until then and is refused from then on (the cache
/// keeps a key no longer than it has left); a rotated key works through its grace
/// period and is refused after it, while the new key works at once.
#[sqlx::test]
async fn expired_and_rotated_keys_are_refused_like_revoked_ones(pool: PgPool) {
    let database = Database::Url(database_url(&pool));
    cli(&database, &["tenant", "create", "acme"]).await;
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();

    let created = Instant::now();
    let short = cli(
        &database,
        &["key", "create", "--tenant", "acme", "--expires-in", "2s"],
    )
    .await
    .trim()
    .to_string();
    client
        .create_session(keyed(
            pb::CreateSessionRequest {
                session_id: "s".into(),
                ..Default::default()
            },
            &short,
        ))
        .await
        .unwrap();
    let took = until_refused(&mut client, &short, "s", created).await;
    assert!(
        took >= Duration::from_millis(1500) && took <= Duration::from_secs(3),
        "refused after {took:?}, not at its expiry"
    );
    let listing = cli(&database, &["key", "list", "--json"]).await;
    let id = listed_id(&listing, &short);
    assert!(listing.contains(r#""status":"expired""#), "{listing}");
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_ctxd"))
        .args(["key", "rotate", &id.to_string()])
        .env("DATABASE_URL", database_url(&pool))
        .output()
        .await
        .unwrap();
    assert!(!output.status.success(), "an expired key was rotated");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("expired"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let old = cli(&database, &["key", "create", "--tenant", "acme"])
        .await
        .trim()
        .to_string();
    client.get_session(keyed(get("s"), &old)).await.unwrap();
    let rotating = Instant::now();
    let old_id = listed_id(&cli(&database, &["key", "list", "--json"]).await, &old);
    let rotated = cli(
        &database,
        &["key", "rotate", &old_id.to_string(), "--grace", "2s"],
    )
    .await;
    let new = rotated.trim().to_string();
    assert!(ctxd::auth::is_key(&new) && new != old, "{rotated}");
    client.get_session(keyed(get("s"), &new)).await.unwrap();
    client.get_session(keyed(get("s"), &old)).await.unwrap();
    let took = until_refused(&mut client, &old, "s", rotating).await;
    assert!(
        took <= Duration::from_secs(2) + PROMISED + Duration::from_secs(1),
        "the old key was refused only after {took:?}"
    );
    client.get_session(keyed(get("s"), &new)).await.unwrap();
    server.stop().await;
}

/// `ctxd serve` with no DATABASE_URL runs its private PostgreSQL; while it runs, the
/// admin commands on the same data directory use that server: a tenant and keys made,
/// listed (prefixes only), one used for a real call, one revoked and refused within the
/// cache time.
#[tokio::test]
async fn admin_commands_work_while_serve_runs_on_its_private_postgres() {
    let dir = tempfile::Builder::new()
        .prefix("ctxd-keys")
        .tempdir_in("/tmp")
        .unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let mut serving = Serving(Some(
        crate::binary::ctxd(dir.path())
            .args(["serve", "--listen", &addr])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    ));
    wait_serving(&addr, serving.0.as_mut().unwrap()).await;
    let database = Database::DataDir(dir.path());

    let first = cli(&database, &["tenant", "create", "acme"])
        .await
        .trim()
        .to_string();
    let second = cli(
        &database,
        &["key", "create", "--tenant", "acme", "--expires-in", "30d"],
    )
    .await
    .trim()
    .to_string();
    assert!(ctxd::auth::is_key(&first) && ctxd::auth::is_key(&second));
    let tenants = cli(&database, &["tenant", "list"]).await;
    let acme = tenants
        .lines()
        .find(|line| line.starts_with("acme "))
        .unwrap_or_else(|| panic!("{tenants}"));
    assert_eq!(acme.split_whitespace().last(), Some("2"), "{tenants}");
    let keys = cli(&database, &["key", "list"]).await;
    assert!(keys.starts_with("ID "), "{keys}");
    for key in [&first, &second] {
        assert!(keys.contains(&ctxd::auth::key_prefix(key)), "{keys}");
        assert!(!keys.contains(key.as_str()), "a listing shows a whole key");
    }

    let channel = crate::harness::channel(addr.parse().unwrap()).await;
    let mut client = pb::context_service_client::ContextServiceClient::new(channel);
    client
        .create_session(keyed(
            pb::CreateSessionRequest {
                session_id: "acme-1".into(),
                ..Default::default()
            },
            &first,
        ))
        .await
        .unwrap();
    client
        .get_session(keyed(get("acme-1"), &second))
        .await
        .unwrap();
    let revoking = Instant::now();
    let id = listed_id(&cli(&database, &["key", "list", "--json"]).await, &first);
    cli(&database, &["key", "revoke", &id.to_string()]).await;
    let took = until_refused(&mut client, &first, "acme-1", revoking).await;
    assert!(
        took <= PROMISED + Duration::from_secs(1),
        "refused only after {took:?}"
    );
    client
        .get_session(keyed(get("acme-1"), &second))
        .await
        .unwrap();
    terminate(serving.0.take().unwrap()).await;
}

/// A `ctxd serve` killed if the test fails before stopping it (its private PostgreSQL
/// follows it: the parent-death signal).
struct Serving(Option<std::process::Child>);

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(child) = self.0.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
