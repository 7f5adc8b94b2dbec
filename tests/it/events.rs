//! Events on SubscribeEvents streams (backlog, live, resume, several replicas, writers
//! committing out of id order) and full-text Search of the archive.
use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use ctxd::engine::EngineConfig;
use ctxd::pb;
use ctxd::policy::Policy;
use sqlx::PgPool;
use tokio::time::timeout;
use tonic::Streaming;

use crate::harness::*;

/// Longest a test waits for an event it expects: a broken server fails, not hangs.
const PATIENCE: Duration = Duration::from_secs(30);

/// A session where a tool result over 400 tokens is evicted to a preview.
pub(crate) fn small_policy() -> pb::Policy {
    pb::Policy {
        context_window_tokens: Some(16_000),
        max_output_tokens: Some(2_000),
        eviction_threshold_tokens: Some(400),
        ..Default::default()
    }
}

/// Roughly `count` tokens of distinct words, salted.
fn words(count: usize, salt: usize) -> String {
    (0..count)
        .map(|i| format!("w{}x{}", (i * 13 + salt) % 251, salt % 17))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One turn whose tool result is large enough to be evicted: OUTPUT_EVICTED (and,
/// when the session crosses a threshold, BUDGET_THRESHOLD_CROSSED).
pub(crate) async fn evicting_turn(client: &mut Client, id: &str, turn: usize) {
    let call_id = format!("{id}-c{turn}");
    append(
        client,
        id,
        vec![
            user(&format!("step {turn}: show the log")),
            call(&[&call_id]),
            result(&call_id, &words(2500, turn)),
            assistant(&format!("done {turn}")),
        ],
    )
    .await
    .unwrap();
}

/// Compact EMERGENCY on a session, which must shrink it.
async fn emergency(client: &mut Client, id: &str) {
    let compacted = client
        .compact(pb::CompactRequest {
            session_id: id.into(),
            mode: pb::CompactMode::Emergency as i32,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(compacted.applied);
    assert!(compacted.tokens_after < compacted.tokens_before);
}

/// A stream of `request`'s events with a heartbeat every 200 ms.
pub(crate) async fn subscribe(
    client: &mut Client,
    request: pb::SubscribeEventsRequest,
) -> Streaming<pb::SubscribeEventsResponse> {
    client
        .subscribe_events(pb::SubscribeEventsRequest {
            heartbeat_interval_ms: 200,
            ..request
        })
        .await
        .unwrap()
        .into_inner()
}

/// The next event, skipping heartbeats; None when the stream ended.
pub(crate) async fn next_event(
    stream: &mut Streaming<pb::SubscribeEventsResponse>,
) -> Option<pb::Event> {
    loop {
        let item = timeout(PATIENCE, stream.message())
            .await
            .expect("no event or heartbeat within the patience")
            .expect("stream failed")?;
        if let Some(pb::subscribe_events_response::Item::Event(event)) = item.item {
            return Some(event);
        }
    }
}

/// Waits for the heartbeat that says the backlog is delivered; returns the events
/// before it.
pub(crate) async fn until_live(
    stream: &mut Streaming<pb::SubscribeEventsResponse>,
) -> Vec<pb::Event> {
    let mut events = Vec::new();
    loop {
        let item = timeout(PATIENCE, stream.message())
            .await
            .expect("no heartbeat within the patience")
            .expect("stream failed")
            .expect("stream ended before going live");
        match item.item {
            Some(pb::subscribe_events_response::Item::Event(event)) => events.push(event),
            Some(pb::subscribe_events_response::Item::Heartbeat(_)) => return events,
            None => panic!("an empty stream item"),
        }
    }
}

/// Every event of the tenant in the table, in (tx, id) order: (id, session, seq).
async fn table_events(pool: &PgPool) -> Vec<(i64, String, i64)> {
    sqlx::query_as("select id, external_id, session_seq from events order by tx, id")
        .fetch_all(pool)
        .await
        .unwrap()
}

/// Checks that one session's events arrive as seqs 1, 2, 3... without gap.
fn assert_contiguous(events: &[pb::Event]) {
    let mut by_session: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for event in events {
        by_session
            .entry(&event.session_id)
            .or_default()
            .push(event.session_seq);
    }
    for (session, seqs) in by_session {
        let expected: Vec<i64> = (1..=seqs.len() as i64).collect();
        assert_eq!(
            seqs, expected,
            "session {session}'s events out of order or missing"
        );
    }
}

/// Writers committing out of the order their event ids were allocated (the slow one on
/// a replica of its own: a replica's appends share its batches), while a tenant
/// subscriber and a session subscriber disconnect mid-burst and resume from their
/// cursors: every event arrives, in order, none missing, none twice.
#[sqlx::test(migrations = "./migrations")]
async fn out_of_order_commits_and_a_resumed_subscriber_miss_nothing(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    for id in ["slow", "fast-a", "fast-b"] {
        create(&mut client, id, small_policy()).await;
    }
    // The slow writer's event insert (its id already allocated) waits in a trigger on
    // an advisory lock this connection holds, while other writers commit after it.
    sqlx::query(
        "create function hold_slow() returns trigger language plpgsql as $$
         begin
             if new.external_id = 'slow' then perform pg_advisory_xact_lock_shared(4242); end if;
             return new;
         end $$",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("create trigger hold_slow before insert on events for each row execute function hold_slow()")
        .execute(&pool)
        .await
        .unwrap();
    let mut gate = pool.acquire().await.unwrap();
    sqlx::query("select pg_advisory_lock(4242)")
        .execute(&mut *gate)
        .await
        .unwrap();

    let mut tenant_stream = subscribe(&mut client, Default::default()).await;
    assert!(until_live(&mut tenant_stream).await.is_empty());
    // The tenant stream delivers settled events only: it takes one before the slow
    // writer starts (then it waits for that writer, as it must) and drops mid-burst.
    evicting_turn(&mut client, "fast-b", 100).await;
    let mut tenant_seen = vec![next_event(&mut tenant_stream).await.unwrap()];
    let mut session_stream = subscribe(
        &mut client,
        pb::SubscribeEventsRequest {
            session_id: "fast-a".into(),
            ..Default::default()
        },
    )
    .await;
    until_live(&mut session_stream).await;

    let slow_replica = TestServer::start(
        sqlx::postgres::PgPoolOptions::new()
            .max_connections(4)
            .connect_with((*pool.connect_options()).clone())
            .await
            .unwrap(),
    )
    .await;
    let mut slow_client = slow_replica.client.clone();
    let slow = tokio::spawn(async move { evicting_turn(&mut slow_client, "slow", 0).await });
    // The slow writer is parked in the trigger once its lock request waits.
    timeout(PATIENCE, async {
        loop {
            let waiting: i64 = sqlx::query_scalar(
                "select count(*) from pg_locks where locktype = 'advisory' and not granted",
            )
            .fetch_one(&pool)
            .await
            .unwrap();
            if waiting > 0 {
                break;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the slow writer never reached the events insert");

    // A burst from two writers, committing after the slow one allocated its id.
    let mut writers = Vec::new();
    for id in ["fast-a", "fast-b"] {
        let mut writer = client.clone();
        writers.push(tokio::spawn(async move {
            for turn in 0..6 {
                evicting_turn(&mut writer, id, turn).await;
            }
        }));
    }
    // Mid-burst, the session subscriber takes a few events (a session stream does not
    // wait for the slow writer: its seqs say what is missing); both disconnect.
    let mut session_seen = vec![
        next_event(&mut session_stream).await.unwrap(),
        next_event(&mut session_stream).await.unwrap(),
    ];
    drop(tenant_stream);
    drop(session_stream);
    for writer in writers {
        writer.await.unwrap();
    }
    sqlx::query("select pg_advisory_unlock(4242)")
        .execute(&mut *gate)
        .await
        .unwrap();
    slow.await.unwrap();

    let all = table_events(&pool).await;
    let slow_id = all.iter().find(|(_, s, _)| s == "slow").unwrap().0;
    assert!(
        all.iter().any(|(id, s, _)| s != "slow" && *id > slow_id),
        "no writer committed an event with a larger id while the slow one waited"
    );

    // Resume both from their last cursors.
    let mut tenant_stream = subscribe(
        &mut client,
        pb::SubscribeEventsRequest {
            after: tenant_seen.last().unwrap().cursor.clone(),
            ..Default::default()
        },
    )
    .await;
    while tenant_seen.len() < all.len() {
        tenant_seen.push(next_event(&mut tenant_stream).await.unwrap());
    }
    let delivered: Vec<(i64, String, i64)> = tenant_seen
        .iter()
        .map(|e| (e.event_id, e.session_id.clone(), e.session_seq))
        .collect();
    assert_eq!(
        delivered, all,
        "the tenant stream differs from the table's order"
    );
    assert_contiguous(&tenant_seen);

    let fast_a = all.iter().filter(|(_, s, _)| s == "fast-a").count();
    let mut session_stream = subscribe(
        &mut client,
        pb::SubscribeEventsRequest {
            session_id: "fast-a".into(),
            after: session_seen.last().unwrap().cursor.clone(),
            ..Default::default()
        },
    )
    .await;
    while session_seen.len() < fast_a {
        session_seen.push(next_event(&mut session_stream).await.unwrap());
    }
    assert_contiguous(&session_seen);
    let ids: HashSet<i64> = session_seen.iter().map(|e| e.event_id).collect();
    assert_eq!(ids.len(), fast_a, "an event came twice");
    server.stop().await;
}

/// Three replicas on one database, a session subscriber and a tenant subscriber on
/// each, compaction driven through one: every subscriber sees the same events.
#[sqlx::test(migrations = "./migrations")]
async fn subscribers_on_three_replicas_all_see_compaction(pool: PgPool) {
    // Each replica with a pool of its own, as separate processes would have.
    let replica = || async {
        let own = sqlx::postgres::PgPoolOptions::new()
            .max_connections(8)
            .connect_with((*pool.connect_options()).clone())
            .await
            .unwrap();
        TestServer::start_with(own, EngineConfig::new(Policy::default(), 1024 * 1024)).await
    };
    let replicas = [replica().await, replica().await, replica().await];
    let mut driver = replicas[0].client.clone();
    create(&mut driver, "shared", small_policy()).await;
    let mut streams = Vec::new();
    for replica in &replicas {
        let mut client = replica.client.clone();
        for session_id in ["shared", ""] {
            let mut stream = subscribe(
                &mut client,
                pb::SubscribeEventsRequest {
                    session_id: session_id.into(),
                    ..Default::default()
                },
            )
            .await;
            until_live(&mut stream).await;
            streams.push(stream);
        }
    }
    for turn in 0..8 {
        evicting_turn(&mut driver, "shared", turn).await;
    }
    emergency(&mut driver, "shared").await;
    driver
        .delete_session(pb::DeleteSessionRequest {
            session_id: "shared".into(),
        })
        .await
        .unwrap();

    let all = table_events(&pool).await;
    let kinds: Vec<i32> =
        sqlx::query_scalar::<_, i16>("select kind from events order by session_seq")
            .fetch_all(&pool)
            .await
            .unwrap()
            .into_iter()
            .map(i32::from)
            .collect();
    assert!(kinds.contains(&(pb::EventKind::CompactionCompleted as i32)));
    assert_eq!(kinds.last(), Some(&(pb::EventKind::SessionDeleted as i32)));
    for (index, stream) in streams.iter_mut().enumerate() {
        let mut seen = Vec::new();
        while seen.len() < all.len() {
            seen.push(next_event(stream).await.unwrap());
        }
        let ids: Vec<i64> = seen.iter().map(|e| e.event_id).collect();
        let expected: Vec<i64> = all.iter().map(|(id, _, _)| *id).collect();
        assert_eq!(ids, expected, "subscriber {index} saw other events");
        assert_contiguous(&seen);
        let completed = seen
            .iter()
            .find_map(|e| match &e.detail {
                Some(pb::event::Detail::CompactionCompleted(c)) => Some(*c),
                _ => None,
            })
            .unwrap();
        assert_eq!(completed.compaction, pb::CompactionKind::Emergency as i32);
        assert!(completed.tokens_after < completed.tokens_before);
        if index % 2 == 0 {
            // A session stream ends after the session's deletion.
            assert!(next_event(stream).await.is_none());
        }
    }
    for replica in replicas {
        replica.stop().await;
    }
}

/// Kind filters, cursors that do not parse or were pruned, unknown sessions, and a
/// server shutdown ending open streams.
#[sqlx::test(migrations = "./migrations")]
async fn streams_validate_filter_and_end_at_shutdown(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    create(&mut client, "s", small_policy()).await;
    for turn in 0..3 {
        evicting_turn(&mut client, "s", turn).await;
    }
    let mut only_evictions = subscribe(
        &mut client,
        pb::SubscribeEventsRequest {
            session_id: "s".into(),
            kinds: vec![pb::EventKind::OutputEvicted as i32],
            ..Default::default()
        },
    )
    .await;
    let backlog = until_live(&mut only_evictions).await;
    assert_eq!(backlog.len(), 3);
    assert!(
        backlog
            .iter()
            .all(|e| e.kind == pb::EventKind::OutputEvicted as i32)
    );
    let Some(pb::event::Detail::OutputEvicted(evicted)) = &backlog[0].detail else {
        panic!("no eviction detail");
    };
    assert_eq!(evicted.tool_name, "bash");
    assert!(evicted.preview_tokens < evicted.tokens);

    let bad = |request: pb::SubscribeEventsRequest| {
        let mut client = client.clone();
        async move {
            match client.subscribe_events(request).await {
                Ok(_) => panic!("accepted"),
                Err(status) => status,
            }
        }
    };
    let status = bad(pb::SubscribeEventsRequest {
        session_id: "s".into(),
        after: "12.5".into(),
        ..Default::default()
    })
    .await;
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert_eq!(violated_fields(&status), ["after"]);
    let status = bad(pb::SubscribeEventsRequest {
        after: "7".into(),
        ..Default::default()
    })
    .await;
    assert_eq!(violated_fields(&status), ["after"]);
    let status = bad(pb::SubscribeEventsRequest {
        kinds: vec![99],
        ..Default::default()
    })
    .await;
    assert_eq!(violated_fields(&status), ["kinds[0]"]);
    let status = bad(pb::SubscribeEventsRequest {
        session_id: "nope".into(),
        ..Default::default()
    })
    .await;
    assert_eq!(status.code(), tonic::Code::NotFound);

    // Pruned past a cursor: resuming would lose events, so it is refused.
    let pruned = server_store(&pool)
        .prune_events(Duration::ZERO)
        .await
        .unwrap();
    assert!(pruned >= 3);
    let status = bad(pb::SubscribeEventsRequest {
        session_id: "s".into(),
        after: backlog[0].cursor.clone(),
        ..Default::default()
    })
    .await;
    assert_eq!(status.code(), tonic::Code::OutOfRange);
    let status = bad(pb::SubscribeEventsRequest {
        after: "1.1".into(),
        ..Default::default()
    })
    .await;
    assert_eq!(status.code(), tonic::Code::OutOfRange);

    // Shutdown ends an open stream (UNAVAILABLE: resume elsewhere) and does not hang.
    let mut open = subscribe(&mut client, Default::default()).await;
    until_live(&mut open).await;
    server.stop().await;
    let ended = timeout(PATIENCE, async {
        loop {
            match open.message().await {
                Ok(Some(_)) => continue,
                Ok(None) => return tonic::Code::Ok,
                Err(status) => return status.code(),
            }
        }
    })
    .await
    .expect("the stream outlived the server");
    assert_eq!(ended, tonic::Code::Unavailable);
}

fn server_store(pool: &PgPool) -> ctxd::store::Store {
    ctxd::store::Store::new(pool.clone())
}

async fn search(client: &mut Client, request: pb::SearchRequest) -> Vec<pb::SearchHit> {
    client.search(request).await.unwrap().into_inner().hits
}

/// Text compaction took out of the view is found by Search and Expand returns it whole;
/// filters and scopes hold; no query string makes the server fail.
#[sqlx::test(migrations = "./migrations")]
async fn search_finds_what_compaction_took_out_of_the_view(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    create(&mut client, "s", small_policy()).await;
    create(&mut client, "other", small_policy()).await;
    let needle = "ENOENT: /srv/app/config/zebrafish.toml";
    let original = format!("cat failed\n{needle}\n{}", words(200, 99));
    append(
        &mut client,
        "s",
        vec![
            user("why does the service not start?"),
            call(&["c0"]),
            result("c0", &original),
            assistant("The config file zebrafish.toml is missing."),
        ],
    )
    .await
    .unwrap();
    for turn in 1..8 {
        evicting_turn(&mut client, "s", turn).await;
    }
    append(&mut client, "other", vec![user("no fish here")])
        .await
        .unwrap();
    emergency(&mut client, "s").await;
    let built = build(&mut client, "s", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert!(
        built
            .messages
            .iter()
            .all(|m| !m.content.contains("zebrafish.toml\n")),
        "the tool result is still in the view"
    );

    let hits = search(
        &mut client,
        pb::SearchRequest {
            session_id: "s".into(),
            query: "zebrafish.toml ENOENT".into(),
            scope: pb::SearchScope::Messages as i32,
            ..Default::default()
        },
    )
    .await;
    let hit = hits
        .iter()
        .find(|h| h.seq == 3)
        .expect("the tool result was not found");
    assert_eq!(hit.role, pb::Role::Tool as i32);
    assert_eq!(hit.view_state, pb::ViewState::Summarized as i32);
    assert!(
        hit.snippet.contains("«"),
        "no highlighted match: {}",
        hit.snippet
    );
    let expanded = client
        .expand(pb::ExpandRequest {
            session_id: "s".into(),
            target: Some(pb::expand_request::Target::List(pb::SeqList {
                seqs: vec![hit.seq],
            })),
            max_tokens: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(expanded.messages[0].content, original);

    // The emergency note is a summary; Search finds summaries too, and Expand follows one.
    let summaries = search(
        &mut client,
        pb::SearchRequest {
            session_id: "s".into(),
            query: "zebrafish".into(),
            scope: pb::SearchScope::Summaries as i32,
            ..Default::default()
        },
    )
    .await;
    assert!(!summaries.is_empty(), "the emergency note was not found");
    assert!(summaries.iter().all(|h| h.summary_id > 0 && h.seq == 0));
    // Each says what its summary replaced, as the view reports it (the eval's summarizer
    // input for summaries no request showed).
    let view = session_view(&mut client, "s").await;
    let mut matched = 0;
    for hit in &summaries {
        assert!(hit.source_tokens > 0, "{hit:?}");
        if let Some(summary) = view
            .summaries
            .iter()
            .find(|s| s.summary_id == hit.summary_id)
        {
            assert_eq!(hit.source_tokens, summary.source_tokens);
            matched += 1;
        }
    }
    assert!(matched > 0, "no hit is an active summary");
    assert!(
        summaries
            .iter()
            .any(|h| h.first_seq <= 3 && 3 <= h.last_seq)
    );
    // Roles, phrases, exclusions, the whole tenant.
    let users = search(
        &mut client,
        pb::SearchRequest {
            query: "zebrafish OR fish".into(),
            roles: vec![pb::Role::User as i32],
            scope: pb::SearchScope::Messages as i32,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(users.len(), 1);
    assert_eq!(users[0].session_id, "other");
    let excluded = search(
        &mut client,
        pb::SearchRequest {
            session_id: "s".into(),
            query: "zebrafish -missing".into(),
            scope: pb::SearchScope::Messages as i32,
            ..Default::default()
        },
    )
    .await;
    assert!(
        excluded.iter().all(|h| h.seq != 4),
        "-missing did not exclude the answer"
    );
    assert!(excluded.iter().any(|h| h.seq == 3));
    let phrase = search(
        &mut client,
        pb::SearchRequest {
            query: "\"service not start\"".into(),
            scope: pb::SearchScope::Messages as i32,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(phrase.iter().map(|h| h.seq).collect::<Vec<_>>(), [1]);

    // Any query string: hits or none, never a failure.
    let mut state = 0x2545F4914F6CDD1Du64;
    let alphabet: Vec<char> = "ab zZ09&|!():*<>-\"'\\/.,;@#%^~`{}[]éß漢\t\n"
        .chars()
        .collect();
    for _ in 0..200 {
        let length = (state % 24) as usize;
        let query: String = (0..length)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                alphabet[(state % alphabet.len() as u64) as usize]
            })
            .collect();
        match client
            .search(pb::SearchRequest {
                query: query.clone(),
                ..Default::default()
            })
            .await
        {
            Ok(_) => {}
            Err(status) => {
                assert_eq!(
                    status.code(),
                    tonic::Code::InvalidArgument,
                    "query {query:?}: {status:?}"
                );
                assert_eq!(violated_fields(&status), ["query"], "query {query:?}");
                assert!(query.trim().is_empty(), "query {query:?} was refused");
            }
        }
    }
    let status = client
        .search(pb::SearchRequest {
            query: "x".into(),
            limit: 101,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(violated_fields(&status), ["limit"]);
    server.stop().await;
}

/// A writer the test can read while `ctxd events --follow` writes to it.
#[derive(Clone, Default)]
struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

#[sqlx::test]
async fn ctxd_events_prints_the_backlog_resumes_after_a_cursor_and_follows(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "printed", window(8_000, 1_000)).await;
    let output: String = (0..300).map(|i| format!("line {i} of output\n")).collect();
    append(
        &mut client,
        "printed",
        vec![user("go"), call(&["c1"]), result("c1", &output)],
    )
    .await
    .unwrap();
    let addr = server.addr.to_string();
    let tls = ctxd::client::ClientTls::default();
    let options = |after: Option<&'static str>, follow: bool| ctxd::events_cli::Options {
        addr: &addr,
        tls: &tls,
        api_key: None,
        session_id: "printed",
        after,
        follow,
    };
    let mut backlog = Vec::new();
    ctxd::events_cli::run(&options(None, false), &mut backlog)
        .await
        .unwrap();
    let backlog = String::from_utf8(backlog).unwrap();
    let lines: Vec<&str> = backlog.lines().collect();
    assert!(!lines.is_empty(), "no event printed");
    let evicted = lines
        .iter()
        .find(|line| line.contains("\tOUTPUT_EVICTED\t"))
        .unwrap_or_else(|| panic!("{backlog}"));
    assert!(evicted.contains("tool_name"), "{evicted}");
    // Resumed after the last event printed: nothing more until something happens.
    let last: &'static str = lines
        .last()
        .unwrap()
        .split('\t')
        .next()
        .unwrap()
        .to_string()
        .leak();
    let mut after = Vec::new();
    ctxd::events_cli::run(&options(Some(last), false), &mut after)
        .await
        .unwrap();
    assert!(after.is_empty(), "{}", String::from_utf8_lossy(&after));
    // Following: a later eviction is printed as it happens.
    let out = Shared::default();
    let following = {
        let (addr, out) = (addr.clone(), out.clone());
        tokio::spawn(async move {
            let tls = ctxd::client::ClientTls::default();
            let options = ctxd::events_cli::Options {
                addr: &addr,
                tls: &tls,
                api_key: None,
                session_id: "printed",
                after: Some(last),
                follow: true,
            };
            let mut out = out;
            ctxd::events_cli::run(&options, &mut out).await
        })
    };
    append(
        &mut client,
        "printed",
        vec![call(&["c2"]), result("c2", &output)],
    )
    .await
    .unwrap();
    let printed = crate::support::wait_until(|| {
        let text = out.text();
        async move { text.contains("\tOUTPUT_EVICTED\t") }
    })
    .await;
    assert!(
        printed,
        "the followed eviction was not printed: {}",
        out.text()
    );
    following.abort();
    server.stop().await;
}
