//! ListSessions: the tenant's sessions, most recently active first, a page at a time;
//! every page size walks the same list once; filters by metadata, parent, fork source,
//! finished and creation time; a token only continues the listing it came from; bad
//! input is INVALID_ARGUMENT naming the field.
use std::collections::HashMap;

use ctxd::pb;
use sqlx::PgPool;

use crate::fork::fork;
use crate::harness::*;

async fn list(
    client: &mut Client,
    request: pb::ListSessionsRequest,
) -> Result<pb::ListSessionsResponse, tonic::Status> {
    client
        .list_sessions(request)
        .await
        .map(tonic::Response::into_inner)
}

/// Every page of a listing, followed by its tokens: the ids in order.
async fn walk(client: &mut Client, request: pb::ListSessionsRequest) -> Vec<String> {
    let mut ids = Vec::new();
    let mut token = String::new();
    loop {
        let page = list(
            client,
            pb::ListSessionsRequest {
                page_token: token,
                ..request.clone()
            },
        )
        .await
        .unwrap();
        assert!(page.sessions.len() as i32 <= request.page_size.max(1) || request.page_size == 0);
        ids.extend(page.sessions.into_iter().map(|s| s.session_id));
        if page.next_page_token.is_empty() {
            return ids;
        }
        token = page.next_page_token;
    }
}

async fn create_with(client: &mut Client, id: &str, team: &str) -> pb::Session {
    client
        .create_session(pb::CreateSessionRequest {
            session_id: id.into(),
            policy: Some(window(32_000, 4_000)),
            metadata: HashMap::from([("team".to_string(), team.to_string())]),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap()
}

fn by_team(team: &str) -> pb::ListSessionsRequest {
    pb::ListSessionsRequest {
        metadata: HashMap::from([("team".to_string(), team.to_string())]),
        ..Default::default()
    }
}

#[sqlx::test]
async fn sessions_are_listed_by_last_activity_one_page_at_a_time(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    let mut created = Vec::new();
    for index in 0..7 {
        let team = if index % 2 == 0 { "a" } else { "b" };
        created.push(create_with(&mut client, &format!("s{index}"), team).await);
    }
    // s2 is the most recently active.
    append(&mut client, "s2", vec![user("still working")])
        .await
        .unwrap();
    let everything = ["s2", "s6", "s5", "s4", "s3", "s1", "s0"];
    for page_size in [0, 1, 2, 3, 7, 50] {
        let request = pb::ListSessionsRequest {
            page_size,
            ..Default::default()
        };
        assert_eq!(
            walk(&mut client, request).await,
            everything,
            "page size {page_size}"
        );
    }
    assert_eq!(
        walk(&mut client, by_team("a")).await,
        ["s2", "s6", "s4", "s0"]
    );
    let first = list(
        &mut client,
        pb::ListSessionsRequest {
            page_size: 1,
            ..by_team("a")
        },
    )
    .await
    .unwrap();
    assert_eq!(first.sessions[0].metadata["team"], "a");
    assert_eq!(first.sessions[0].message_count, 1);

    // Created at or after s4: s4, s5, s6 (s2 is older, however recently active).
    let request = pb::ListSessionsRequest {
        created_after: created[4].created_at,
        ..Default::default()
    };
    assert_eq!(walk(&mut client, request).await, ["s6", "s5", "s4"]);

    // A token continues only the listing it came from.
    let other_filters = pb::ListSessionsRequest {
        page_token: first.next_page_token.clone(),
        ..by_team("b")
    };
    let refused = list(&mut client, other_filters).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert_eq!(violated_fields(&refused), ["page_token"]);
    for (request, field) in [
        (
            pb::ListSessionsRequest {
                page_token: "v1.1.2.forged".into(),
                ..Default::default()
            },
            "page_token",
        ),
        (
            pb::ListSessionsRequest {
                page_size: -1,
                ..Default::default()
            },
            "page_size",
        ),
        (
            pb::ListSessionsRequest {
                metadata: (0..17)
                    .map(|i| (format!("k{i}"), "v".to_string()))
                    .collect(),
                ..Default::default()
            },
            "metadata",
        ),
        (
            pb::ListSessionsRequest {
                metadata: HashMap::from([("team\0".to_string(), "a".to_string())]),
                ..Default::default()
            },
            "metadata",
        ),
        (
            pb::ListSessionsRequest {
                parent_session_id: "no spaces".into(),
                ..Default::default()
            },
            "parent_session_id",
        ),
    ] {
        let refused = list(&mut client, request).await.unwrap_err();
        assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
        assert_eq!(violated_fields(&refused), [field]);
    }
    server.stop().await;
}

#[sqlx::test]
async fn children_forks_finished_and_deleted_sessions(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create_with(&mut client, "root", "a").await;
    create_with(&mut client, "other", "a").await;
    append(&mut client, "root", vec![user("delegate"), call(&["c1"])])
        .await
        .unwrap();
    client
        .create_session(pb::CreateSessionRequest {
            session_id: "child".into(),
            parent_session_id: "root".into(),
            parent_tool_call_id: "c1".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    fork(&mut client, "other", None, "other-fork")
        .await
        .unwrap();
    create_with(&mut client, "gone", "a").await;
    client
        .delete_session(pb::DeleteSessionRequest {
            session_id: "gone".into(),
        })
        .await
        .unwrap();

    let children = list(
        &mut client,
        pb::ListSessionsRequest {
            parent_session_id: "root".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(children.sessions.len(), 1);
    assert_eq!(children.sessions[0].session_id, "child");
    assert_eq!(children.sessions[0].parent_session_id, "root");
    assert_eq!(children.sessions[0].parent_tool_call_id, "c1");
    assert_eq!(children.sessions[0].depth, 1);
    let forks = pb::ListSessionsRequest {
        forked_from_session_id: "other".into(),
        ..Default::default()
    };
    assert_eq!(walk(&mut client, forks).await, ["other-fork"]);

    client
        .finish_session(pb::FinishSessionRequest {
            session_id: "child".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let finished = |finished| pb::ListSessionsRequest {
        finished: Some(finished),
        ..Default::default()
    };
    assert_eq!(walk(&mut client, finished(true)).await, ["child"]);
    let unfinished = walk(&mut client, finished(false)).await;
    assert_eq!(unfinished, ["other-fork", "root", "other"]);
    // Deleted sessions are not listed.
    let all = walk(&mut client, pb::ListSessionsRequest::default()).await;
    assert!(!all.contains(&"gone".to_string()), "{all:?}");
    server.stop().await;
}
