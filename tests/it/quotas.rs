//! Per-tenant quotas against a real server: each of the four refused with
//! RESOURCE_EXHAUSTED, its QuotaFailure subject and (for the rates) a RetryInfo delay,
//! changing nothing; live sessions exact across two replicas; a tenant's override set
//! with the store function `ctxd tenant quota` uses applies within the cache time; and
//! the `ctxd tenant quota` command itself.
use std::time::{Duration, Instant};

use ctxd::pb;
use ctxd::quota::{QuotaOverrides, Quotas};
use ctxd::store::Store;
use sqlx::PgPool;
use tonic::Code;
use tonic_types::StatusExt;

use crate::harness::{Client, TestServer, append, create, database_url, session, user, window};

/// What the documentation promises: an override applies within 5 s.
const PROMISED: Duration = ctxd::quotas::OVERRIDES_TTL;

async fn server_with(pool: PgPool, quotas: Quotas) -> TestServer {
    let mut config = TestServer::default_config();
    config.quotas = quotas;
    TestServer::start_with(pool, config).await
}

fn get(session_id: &str) -> pb::GetSessionRequest {
    pb::GetSessionRequest {
        session_id: session_id.into(),
        include_view: false,
    }
}

/// The status's QuotaFailure subject and RetryInfo delay, checking the code.
fn refusal(status: &tonic::Status) -> (String, Option<Duration>) {
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    let details = status.get_error_details();
    let subject = details.quota_failure().expect("a QuotaFailure").violations[0]
        .subject
        .clone();
    let delay = details.retry_info().and_then(|info| info.retry_delay);
    (subject, delay)
}

async fn create_session(client: &mut Client, id: &str) -> Result<pb::Session, tonic::Status> {
    client
        .create_session(pb::CreateSessionRequest {
            session_id: id.into(),
            policy: Some(window(100_000, 1_000)),
            metadata: Default::default(),
            ..Default::default()
        })
        .await
        .map(|response| response.into_inner().session.unwrap())
}

#[sqlx::test]
async fn the_request_rate_refuses_past_the_burst_with_a_retry_delay(pool: PgPool) {
    let quotas = Quotas {
        requests_per_sec: 0.01,
        requests_burst: 3,
        ..Quotas::default()
    };
    let key = ctxd::auth::generate_key().unwrap();
    Store::new(pool.clone())
        .add_api_key("other", &ctxd::auth::hash_key(&key), "other")
        .await
        .unwrap();
    let server = server_with(pool, quotas).await;
    let mut client = server.client.clone();
    for _ in 0..3 {
        let status = client.get_session(get("none")).await.unwrap_err();
        assert_eq!(status.code(), Code::NotFound, "{status:?}");
    }
    let status = client.get_session(get("none")).await.unwrap_err();
    let (subject, delay) = refusal(&status);
    assert_eq!(subject, "quota_requests_per_sec");
    // One request at 0.01/s: about 100 s away.
    let delay = delay.expect("a RetryInfo delay");
    assert!(
        delay > Duration::from_secs(90) && delay <= Duration::from_secs(101),
        "{delay:?}"
    );
    // Another tenant has its own bucket.
    let mut request = tonic::Request::new(get("none"));
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {key}").parse().unwrap());
    let status = client.get_session(request).await.unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    server.stop().await;
}

#[sqlx::test]
async fn appended_bytes_per_minute_refuse_and_write_nothing(pool: PgPool) {
    let quotas = Quotas {
        append_bytes_per_min: 100,
        ..Quotas::default()
    };
    let server = server_with(pool, quotas).await;
    let mut client = server.client.clone();
    create(&mut client, "s", window(100_000, 1_000)).await;
    append(&mut client, "s", vec![user(&"a".repeat(60))])
        .await
        .unwrap();
    let before = session(&mut client, "s").await;
    let status = append(&mut client, "s", vec![user(&"b".repeat(60))])
        .await
        .unwrap_err();
    let (subject, delay) = refusal(&status);
    assert_eq!(subject, "quota_append_bytes_per_min");
    // 20 bytes missing at 100 bytes a minute: about 12 s.
    let delay = delay.expect("a RetryInfo delay");
    assert!(
        delay > Duration::from_secs(10) && delay <= Duration::from_secs(13),
        "{delay:?}"
    );
    // More than a minute's worth never fits: no delay offered.
    let status = append(&mut client, "s", vec![user(&"c".repeat(101))])
        .await
        .unwrap_err();
    assert_eq!(
        refusal(&status),
        ("quota_append_bytes_per_min".into(), None)
    );
    let after = session(&mut client, "s").await;
    assert_eq!(
        (after.version, after.message_count),
        (before.version, before.message_count)
    );
    // What is left still fits.
    append(&mut client, "s", vec![user(&"d".repeat(40))])
        .await
        .unwrap();
    server.stop().await;
}

#[sqlx::test]
async fn stored_bytes_refuse_an_append_past_the_tenants_sum(pool: PgPool) {
    let quotas = Quotas {
        stored_bytes: 1_000,
        ..Quotas::default()
    };
    let server = server_with(pool, quotas).await;
    let mut client = server.client.clone();
    create(&mut client, "a", window(100_000, 1_000)).await;
    create(&mut client, "b", window(100_000, 1_000)).await;
    append(&mut client, "a", vec![user(&"a".repeat(600))])
        .await
        .unwrap();
    let before = session(&mut client, "b").await;
    let status = append(&mut client, "b", vec![user(&"b".repeat(500))])
        .await
        .unwrap_err();
    assert_eq!(refusal(&status), ("quota_stored_bytes".into(), None));
    let after = session(&mut client, "b").await;
    assert_eq!(
        (after.version, after.message_count),
        (before.version, before.message_count)
    );
    append(&mut client, "b", vec![user(&"b".repeat(400))])
        .await
        .unwrap();
    let status = append(&mut client, "a", vec![user("x")]).await.unwrap_err();
    assert_eq!(refusal(&status).0, "quota_stored_bytes");
    server.stop().await;
}

/// Two replicas, twelve creates at once, a quota of five: exactly five sessions.
#[sqlx::test]
async fn live_sessions_are_exact_across_replicas(pool: PgPool) {
    let quotas = Quotas {
        live_sessions: 5,
        ..Quotas::default()
    };
    let one = server_with(pool.clone(), quotas).await;
    let two = server_with(pool.clone(), quotas).await;
    let creates = (0..12).map(|n| {
        let mut client = if n % 2 == 0 {
            one.client.clone()
        } else {
            two.client.clone()
        };
        tokio::spawn(async move { create_session(&mut client, &format!("s{n}")).await })
    });
    let mut created = 0;
    for create in creates.collect::<Vec<_>>() {
        match create.await.unwrap() {
            Ok(_) => created += 1,
            Err(status) => assert_eq!(refusal(&status), ("quota_live_sessions".into(), None)),
        }
    }
    assert_eq!(created, 5);
    let stored: i64 = sqlx::query_scalar("select count(*) from sessions")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(stored, 5);
    // Deleting one makes room for one.
    let mut client = one.client.clone();
    let existing: String = sqlx::query_scalar("select external_id from sessions limit 1")
        .fetch_one(&pool)
        .await
        .unwrap();
    client
        .delete_session(pb::DeleteSessionRequest {
            session_id: existing,
        })
        .await
        .unwrap();
    create_session(&mut client, "again").await.unwrap();
    let status = create_session(&mut client, "one-more").await.unwrap_err();
    assert_eq!(refusal(&status).0, "quota_live_sessions");
    one.stop().await;
    two.stop().await;
}

/// Calls until one is refused for the request rate (or until it is admitted again when
/// `refused` is false); how long that took from `since`.
async fn until(client: &mut Client, refused: bool, since: Instant) -> Duration {
    let deadline = since + PROMISED + Duration::from_secs(5);
    loop {
        let outcome = client.get_session(get("none")).await.unwrap_err();
        let is_refused = outcome.code() == Code::ResourceExhausted;
        if is_refused {
            assert_eq!(refusal(&outcome).0, "quota_requests_per_sec");
        } else {
            assert_eq!(outcome.code(), Code::NotFound, "{outcome:?}");
        }
        if is_refused == refused {
            return since.elapsed();
        }
        assert!(
            Instant::now() < deadline,
            "the override did not apply within {:?}",
            deadline - since
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[sqlx::test]
async fn a_tenants_override_applies_within_the_cache_time(pool: PgPool) {
    let store = Store::new(pool.clone());
    let server = server_with(pool, Quotas::default()).await;
    let mut client = server.client.clone();
    // No quota: the replica reads (and caches) the tenant's overrides, none.
    for _ in 0..5 {
        let status = client.get_session(get("none")).await.unwrap_err();
        assert_eq!(status.code(), Code::NotFound, "{status:?}");
    }
    let set = Instant::now();
    let tight = QuotaOverrides {
        requests_per_sec: Some(0.01),
        requests_burst: Some(1),
        ..QuotaOverrides::default()
    };
    let stored = store
        .set_tenant_quotas("default", &tight, false)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored, tight);
    let took = until(&mut client, true, set).await;
    assert!(took <= PROMISED + Duration::from_millis(500), "{took:?}");
    let reset = Instant::now();
    store
        .set_tenant_quotas("default", &QuotaOverrides::default(), true)
        .await
        .unwrap();
    let took = until(&mut client, false, reset).await;
    assert!(took <= PROMISED + Duration::from_millis(500), "{took:?}");
    assert!(
        store
            .set_tenant_quotas("nobody", &tight, false)
            .await
            .unwrap()
            .is_none()
    );
    server.stop().await;
}

/// Runs `ctxd ARGS` on the database; its status and stdout.
async fn cli(url: &str, args: &[&str]) -> (bool, String, String) {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_ctxd"))
        .args(args)
        .env("CTXD_LOG", "warn")
        .env("DATABASE_URL", url)
        .output()
        .await
        .unwrap();
    (
        output.status.success(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[sqlx::test]
async fn the_tenant_quota_command_sets_resets_and_applies(pool: PgPool) {
    let url = database_url(&pool);
    let (ok, key, _) = cli(&url, &["tenant", "create", "acme"]).await;
    assert!(ok);
    let key = key.trim().to_string();
    let (ok, out, err) = cli(
        &url,
        &[
            "tenant",
            "quota",
            "acme",
            "--live-sessions",
            "1",
            "--requests-per-sec",
            "2.5",
            "--json",
            "--quota-stored-bytes",
            "5000",
        ],
    )
    .await;
    assert!(ok, "{err}");
    let shown: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["tenant"], "acme");
    let quotas = &shown["quotas"];
    assert_eq!(quotas["live_sessions"]["value"], 1);
    assert_eq!(quotas["live_sessions"]["source"], "tenant");
    assert_eq!(quotas["requests_per_sec"]["value"], 2.5);
    assert_eq!(quotas["stored_bytes"]["value"], 5000);
    assert_eq!(quotas["stored_bytes"]["source"], "default");
    // The table form, and a change that keeps the other override.
    let (ok, out, _) = cli(&url, &["tenant", "quota", "acme", "--requests-burst", "7"]).await;
    assert!(ok);
    assert!(out.starts_with("QUOTA"), "{out}");
    let line = |name: &str| {
        out.lines()
            .find(|line| line.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in {out}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(line("live_sessions"), "live_sessions 1 tenant");
    assert_eq!(line("requests_burst"), "requests_burst 7 tenant");
    assert_eq!(line("stored_bytes"), "stored_bytes 0 (off) default");
    // Bounds and unknown tenants are refused naming what is wrong.
    let (ok, _, err) = cli(
        &url,
        &["tenant", "quota", "acme", "--requests-per-sec=2000000"],
    )
    .await;
    assert!(!ok && err.contains("--requests-per-sec"), "{err}");
    let (ok, _, err) = cli(
        &url,
        &[
            "tenant",
            "quota",
            "acme",
            "--stored-bytes",
            "18446744073709551615",
        ],
    )
    .await;
    assert!(!ok && err.contains("--stored-bytes"), "{err}");
    let (ok, _, err) = cli(&url, &["tenant", "quota", "nobody", "--live-sessions", "1"]).await;
    assert!(!ok && err.contains("no tenant is named"), "{err}");

    // A server applies the tenant's live-sessions quota.
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    let keyed = |id: &str| {
        let mut request = tonic::Request::new(pb::CreateSessionRequest {
            session_id: id.into(),
            policy: Some(window(100_000, 1_000)),
            metadata: Default::default(),
            ..Default::default()
        });
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {key}").parse().unwrap());
        request
    };
    client.create_session(keyed("first")).await.unwrap();
    let status = client.create_session(keyed("second")).await.unwrap_err();
    assert_eq!(refusal(&status).0, "quota_live_sessions");
    server.stop().await;

    // --reset goes back to the defaults.
    let (ok, out, _) = cli(&url, &["tenant", "quota", "acme", "--reset", "--json"]).await;
    assert!(ok);
    let shown: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["quotas"]["live_sessions"]["value"], 0);
    assert_eq!(shown["quotas"]["live_sessions"]["source"], "default");
}

#[sqlx::test]
async fn a_subscription_costs_one_request_however_much_it_delivers(pool: PgPool) {
    let quotas = Quotas {
        requests_per_sec: 0.01,
        requests_burst: 5,
        ..Quotas::default()
    };
    let server = server_with(pool, quotas).await;
    let mut client = server.client.clone();
    create_session(&mut client, "s").await.unwrap();
    let mut stream = client
        .subscribe_events(pb::SubscribeEventsRequest {
            session_id: "s".into(),
            heartbeat_interval_ms: 100,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    // Ten items delivered on the one stream (its heartbeats), none of them a request.
    for delivered in 0..10 {
        let item = tokio::time::timeout(Duration::from_secs(30), stream.message())
            .await
            .expect("a heartbeat within 30 s")
            .unwrap_or_else(|status| panic!("the stream failed after {delivered}: {status:?}"))
            .expect("the stream ended");
        assert!(item.item.is_some());
    }
    // Create and subscribe took two of the five: three more requests pass, the next one
    // is refused.
    for _ in 0..3 {
        session(&mut client, "s").await;
    }
    let status = client.get_session(get("s")).await.unwrap_err();
    assert_eq!(refusal(&status).0, "quota_requests_per_sec");
    server.stop().await;
}

/// An import's text counts against the tenant's stored bytes as appends would: a second
/// copy past the quota is refused, and nothing of it is written.
#[sqlx::test]
async fn stored_bytes_refuse_an_import_past_the_tenants_sum(pool: PgPool) {
    let quotas = Quotas {
        stored_bytes: 1_000,
        ..Quotas::default()
    };
    let server = server_with(pool, quotas).await;
    let mut client = server.client.clone();
    create(&mut client, "a", window(100_000, 1_000)).await;
    append(&mut client, "a", vec![user(&"a".repeat(600))])
        .await
        .unwrap();
    let file = crate::export::export(&mut client, "a").await.unwrap();
    let status = crate::export::import(&mut client, "a-copy", &file)
        .await
        .unwrap_err();
    assert_eq!(refusal(&status), ("quota_stored_bytes".into(), None));
    let found = client.get_session(get("a-copy")).await;
    assert_eq!(found.unwrap_err().code(), Code::NotFound);
    server.stop().await;
}
