//! A session's place in its tree (GetSession's parent, children and subtree sums), and
//! Search and SubscribeEvents scoped to one tree.
use std::collections::BTreeSet;

use ctxd::pb;
use sqlx::PgPool;
use tonic::Code;

use super::{create_child, finish, get, parent_calling, refused, words};
use crate::events::{evicting_turn, next_event, small_policy, until_live};
use crate::harness::*;

#[sqlx::test]
async fn get_session_lists_parent_and_children_and_sums_the_subtree(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    parent_calling(&mut client, "r", &["ca", "cb"]).await;
    create_child(&mut client, "a", "r", "ca", window(8_000, 1_000))
        .await
        .unwrap();
    create_child(&mut client, "b", "r", "cb", window(8_000, 1_000))
        .await
        .unwrap();
    append(
        &mut client,
        "a",
        vec![user("split the work"), call(&["ca1"])],
    )
    .await
    .unwrap();
    create_child(&mut client, "a1", "a", "ca1", window(8_000, 1_000))
        .await
        .unwrap();
    create(&mut client, "stranger", window(8_000, 1_000)).await;
    // Each session reports usage of its own model calls.
    for (index, id) in ["r", "a", "b", "a1", "stranger"].iter().enumerate() {
        let n = index as i64 + 1;
        client
            .append_turn(pb::AppendTurnRequest {
                session_id: id.to_string(),
                messages: vec![user(&words(50 * n as usize, index)), assistant("noted")],
                usage: Some(pb::Usage {
                    input_tokens: 1_000 * n,
                    output_tokens: 100 * n,
                    cached_input_tokens: 10 * n,
                }),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    finish(&mut client, "b", "", false).await.unwrap();

    let r = get(&mut client, "r").await;
    assert_eq!(
        r.children
            .iter()
            .map(|c| (
                c.session_id.as_str(),
                c.parent_tool_call_id.as_str(),
                c.finished,
                c.finished_at.is_some()
            ))
            .collect::<Vec<_>>(),
        [("a", "ca", false, false), ("b", "cb", true, true)]
    );
    assert_eq!(r.children_total, 2);
    let rs = r.session.unwrap();
    assert_eq!((rs.parent_session_id.as_str(), rs.depth), ("", 0));
    let reader = client.clone();
    let log_tokens = |ids: &[&str]| {
        let mut client = reader.clone();
        let ids: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
        async move {
            let mut sum = 0;
            for id in ids {
                sum += session(&mut client, &id).await.log_tokens;
            }
            sum
        }
    };
    // r=1, a=2, b=3, a1=4 (stranger=5 is not in the tree).
    let expected = |ns: &[i64], log_tokens: i64| pb::SubtreeTotals {
        sessions: ns.len() as i64,
        log_tokens,
        usage_total: Some(pb::Usage {
            input_tokens: ns.iter().map(|n| 1_000 * n).sum(),
            output_tokens: ns.iter().map(|n| 100 * n).sum(),
            cached_input_tokens: ns.iter().map(|n| 10 * n).sum(),
        }),
    };
    assert_eq!(
        r.subtree.unwrap(),
        expected(&[1, 2, 3, 4], log_tokens(&["r", "a", "b", "a1"]).await)
    );
    let a = get(&mut client, "a").await;
    let a_session = a.session.unwrap();
    assert_eq!(
        (
            a_session.parent_session_id.as_str(),
            a_session.parent_tool_call_id.as_str(),
            a_session.depth
        ),
        ("r", "ca", 1)
    );
    assert_eq!(
        a.children
            .iter()
            .map(|c| c.session_id.as_str())
            .collect::<Vec<_>>(),
        ["a1"]
    );
    assert_eq!(
        a.subtree.unwrap(),
        expected(&[2, 4], log_tokens(&["a", "a1"]).await)
    );
    // `ctxd inspect` shows the same place.
    let inspect = |id: &'static str| {
        let addr = server.addr.to_string();
        async move {
            ctxd::inspect::run(&addr, &Default::default(), None, id, false)
                .await
                .unwrap()
        }
    };
    let shown = inspect("a").await;
    assert!(
        shown
            .contains("\ntree: child of r (its tool call ca), depth 1; open\nchildren (1 of 1):\n"),
        "{shown}"
    );
    assert!(
        shown
            .lines()
            .any(|line| line.split_whitespace().collect::<Vec<_>>()
                == ["a1", "tool", "call", "ca1", "open"]),
        "{shown}"
    );
    let a_logs = log_tokens(&["a", "a1"]).await;
    assert!(
        shown.contains(&format!(
            "subtree: 2 sessions, {a_logs} log tokens; usage reported 6000 input (60 cached), 600 output"
        )),
        "{shown}"
    );
    let shown = inspect("r").await;
    assert!(
        shown.contains("\ntree: a root; open\nchildren (2 of 2):\n"),
        "{shown}"
    );
    assert!(
        shown
            .lines()
            .any(|line| line.split_whitespace().collect::<Vec<_>>()
                == ["b", "tool", "call", "cb", "finished"]),
        "{shown}"
    );

    let a1 = get(&mut client, "a1").await;
    assert_eq!(a1.session.unwrap().depth, 2);
    assert!(a1.children.is_empty());
    assert_eq!(
        a1.subtree.unwrap(),
        expected(&[4], log_tokens(&["a1"]).await)
    );

    // Deleting the middle: a1 loses its parent but stays in r's tree.
    client
        .delete_session(pb::DeleteSessionRequest {
            session_id: "a".into(),
        })
        .await
        .unwrap();
    let r = get(&mut client, "r").await;
    assert_eq!(
        r.children
            .iter()
            .map(|c| c.session_id.as_str())
            .collect::<Vec<_>>(),
        ["b"]
    );
    assert_eq!(
        r.subtree.unwrap(),
        expected(&[1, 3, 4], log_tokens(&["r", "b", "a1"]).await)
    );
    let a1 = session(&mut client, "a1").await;
    assert_eq!((a1.parent_session_id.as_str(), a1.depth), ("", 2));
    server.stop().await;
}
/// Two trees and a stranger: r1 ← c1 ← g1 and r2 ← c2.
async fn two_trees(client: &mut Client) {
    for root in ["r1", "r2"] {
        create(client, root, small_policy()).await;
        append(
            client,
            root,
            vec![user("delegate"), call(&[&format!("{root}-x")])],
        )
        .await
        .unwrap();
    }
    create_child(client, "c1", "r1", "r1-x", small_policy())
        .await
        .unwrap();
    create_child(client, "c2", "r2", "r2-x", small_policy())
        .await
        .unwrap();
    append(
        client,
        "c1",
        vec![user("delegate"), call(&["c1-x", "c1-y"])],
    )
    .await
    .unwrap();
    create_child(client, "g1", "c1", "c1-x", small_policy())
        .await
        .unwrap();
    create(client, "stranger", small_policy()).await;
}

#[sqlx::test]
async fn search_scoped_to_a_tree_finds_exactly_that_tree(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    two_trees(&mut client).await;
    for id in ["r1", "c1", "g1", "r2", "c2", "stranger"] {
        append(
            &mut client,
            id,
            vec![user(&format!("the zebra crossing in {id}"))],
        )
        .await
        .unwrap();
    }
    let searcher = client.clone();
    let search = |session_id: &str, tree: &str| {
        let mut client = searcher.clone();
        let request = pb::SearchRequest {
            session_id: session_id.into(),
            tree_root_session_id: tree.into(),
            query: "zebra".into(),
            limit: 100,
            ..Default::default()
        };
        async move { client.search(request).await.map(|r| r.into_inner()) }
    };
    let found = |response: pb::SearchResponse| -> BTreeSet<String> {
        response
            .hits
            .into_iter()
            .map(|hit| hit.session_id)
            .collect()
    };
    let set = |ids: &[&str]| ids.iter().map(|id| id.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(
        found(search("", "r1").await.unwrap()),
        set(&["r1", "c1", "g1"])
    );
    assert_eq!(found(search("", "c1").await.unwrap()), set(&["c1", "g1"]));
    assert_eq!(found(search("", "r2").await.unwrap()), set(&["r2", "c2"]));
    assert_eq!(
        found(search("", "stranger").await.unwrap()),
        set(&["stranger"])
    );
    assert_eq!(found(search("", "").await.unwrap()).len(), 6);
    assert_eq!(
        refused(search("r1", "r1").await),
        (Code::InvalidArgument, "tree_root_session_id".into())
    );
    assert_eq!(
        refused(search("", "bad id!").await),
        (Code::InvalidArgument, "tree_root_session_id".into())
    );
    let unknown = search("", "nobody").await.unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound);
    assert!(
        unknown.message().starts_with("tree_root_session_id: "),
        "{unknown:?}"
    );
    server.stop().await;
}

#[sqlx::test]
async fn a_tree_stream_delivers_exactly_that_trees_events(pool: PgPool) {
    let server = TestServer::start(pool.clone()).await;
    let mut client = server.client.clone();
    two_trees(&mut client).await;
    // A backlog in every session.
    for (turn, id) in ["r1", "c1", "g1", "r2", "c2", "stranger"]
        .iter()
        .enumerate()
    {
        evicting_turn(&mut client, id, turn).await;
    }
    let subscriber = client.clone();
    let subscribe = |tree: &str| {
        let mut client = subscriber.clone();
        let request = pb::SubscribeEventsRequest {
            tree_root_session_id: tree.into(),
            heartbeat_interval_ms: 200,
            ..Default::default()
        };
        async move { client.subscribe_events(request).await }
    };
    // A tenant stream delivers settled events only (below the visibility horizon, which
    // any open transaction of the server holds back): some of the backlog may come
    // after the stream went live. What counts is the whole, checked below.
    let mut stream = subscribe("r1").await.unwrap().into_inner();
    let mut seen = until_live(&mut stream).await;

    // Live: the other tree and the stranger first, then a new grandchild, g1's
    // deletion and, last, an event of the new one; the tree stream must see exactly
    // the tree's, the new member and the deleted one included.
    for (turn, id) in ["r2", "c2", "stranger"].iter().enumerate() {
        evicting_turn(&mut client, id, 10 + turn).await;
    }
    create_child(&mut client, "g2", "c1", "c1-y", small_policy())
        .await
        .unwrap();
    evicting_turn(&mut client, "r1", 20).await;
    client
        .delete_session(pb::DeleteSessionRequest {
            session_id: "g1".into(),
        })
        .await
        .unwrap();
    evicting_turn(&mut client, "g2", 21).await;
    // Exactly the tree's events in the table, in the table's (tx, id) order.
    let expected: Vec<(i64, String)> = sqlx::query_as(
        "select id, external_id from events
         where external_id in ('r1', 'c1', 'g1', 'g2') order by tx, id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    // Anything else the stream let through would come before the last of them.
    while seen.len() < expected.len() {
        seen.push(next_event(&mut stream).await.unwrap());
    }
    let delivered: Vec<(i64, String)> = seen
        .iter()
        .map(|e| (e.event_id, e.session_id.clone()))
        .collect();
    assert_eq!(delivered, expected);
    assert!(
        seen.iter()
            .any(|e| e.session_id == "g1" && e.kind == pb::EventKind::SessionDeleted as i32),
        "a deleted member's deletion is the tree's"
    );

    // A new stream reads the same from the table.
    let mut fresh = subscribe("r1").await.unwrap().into_inner();
    let mut read = Vec::new();
    while read.len() < expected.len() {
        read.push(next_event(&mut fresh).await.unwrap());
    }
    assert_eq!(
        read.iter()
            .map(|e| (e.event_id, e.session_id.clone()))
            .collect::<Vec<_>>(),
        expected
    );

    // Resuming from a cursor stays in the (sub)tree: after r1's event, c1's subtree
    // next has g1's deletion.
    let r1_last = seen.iter().rposition(|e| e.session_id == "r1").unwrap();
    let mut resumed = client
        .subscribe_events(pb::SubscribeEventsRequest {
            tree_root_session_id: "c1".into(),
            after: seen[r1_last].cursor.clone(),
            heartbeat_interval_ms: 200,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let next = next_event(&mut resumed).await.unwrap();
    assert_eq!(
        (next.session_id.as_str(), next.kind),
        ("g1", pb::EventKind::SessionDeleted as i32)
    );

    let both = client
        .subscribe_events(pb::SubscribeEventsRequest {
            session_id: "r1".into(),
            tree_root_session_id: "r1".into(),
            ..Default::default()
        })
        .await;
    assert_eq!(
        refused(both.map(|_| ())),
        (Code::InvalidArgument, "tree_root_session_id".into())
    );
    match subscribe("nobody").await {
        Err(status) => assert_eq!(status.code(), Code::NotFound),
        Ok(_) => panic!("a tree stream of no session"),
    }
    server.stop().await;
}
