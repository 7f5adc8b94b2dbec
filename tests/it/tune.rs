//! `ctxd tune` against a real server holding recorded sessions: it reads the tenant's
//! sessions matching its metadata filter, replays each under every candidate policy,
//! and recommends a policy at least as good as the current one on both axes for that
//! traffic; the stored sessions, their events and their messages are as they were, and
//! none of its replays is left behind.
use ctxd::pb;
use ctxd::tune::{Options, REPLAY_PREFIX};
use sqlx::PgPool;

use crate::harness::*;

/// The database's sessions and messages, and the stored sessions' events.
async fn footprint(pool: &PgPool) -> (i64, i64, i64) {
    sqlx::query_as(
        "select (select count(*) from sessions), (select count(*) from messages), \
         (select count(*) from events where external_id like 'stored-%')",
    )
    .fetch_one(pool)
    .await
    .unwrap()
}

#[sqlx::test]
async fn tune_recommends_a_policy_no_worse_than_the_current_one(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    let mut corpus: Vec<_> = std::fs::read_dir("tests/data/swe-trajectories")
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    corpus.sort();
    for (index, path) in corpus.iter().take(3).enumerate() {
        let recorded = ctxd::replay::load(path).unwrap();
        // Two sessions of team a, one of team b (filtered out).
        let team = if index < 2 { "a" } else { "b" };
        let id = format!("stored-{index}");
        let create = pb::CreateSessionRequest {
            session_id: id.clone(),
            policy: Some(window(16_000, 2_000)),
            metadata: [("team".to_string(), team.to_string())].into(),
            ..Default::default()
        };
        client.create_session(create).await.unwrap();
        let count = recorded.messages.len();
        append_as_agent(&mut client, &id, &recorded, count).await;
    }
    let before = footprint(&pool).await;
    let options = Options {
        addr: server.addr.to_string(),
        tls: Default::default(),
        api_key: None,
        sessions: 10,
        metadata: vec![("team".into(), "a".into())],
        weight: 0.5,
        out: None,
    };
    let outcome = ctxd::tune::run(&options).await.unwrap();
    assert_eq!(outcome.sessions, 2);
    let table = outcome.markdown();
    eprintln!("{table}");
    let current = outcome.rows.iter().find(|(c, _)| c.is_current()).unwrap();
    let (chosen, figures) = &outcome.rows[outcome.recommended];
    let kept = |t: &ctxd::eval::meter::Totals| t.retention.mean_pct(None).unwrap();
    assert!(
        figures.units <= current.1.units,
        "{} costs more",
        chosen.name
    );
    assert!(
        kept(figures) >= kept(&current.1),
        "{} keeps less",
        chosen.name
    );
    assert!(table.contains("recommended") && outcome.svg().contains("<circle"));
    // The candidates were replayed under their own policies: not every one measures as
    // the current one does (were the overrides dropped, every row would be the same).
    let differs = |t: &ctxd::eval::meter::Totals| {
        t.units != current.1.units
            || t.retention.mean_pct(None) != current.1.retention.mean_pct(None)
    };
    assert!(outcome.rows.iter().any(|(_, t)| differs(t)), "{table}");
    // Only read: the stored sessions, their messages and their events as they were, the
    // replays deleted (their own events stay in the log, as any deleted session's do).
    assert_eq!(footprint(&pool).await, before);
    let left: i64 = sqlx::query_scalar("select count(*) from sessions where external_id like $1")
        .bind(format!("{REPLAY_PREFIX}%"))
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(left, 0);
    server.stop().await;
}
