//! Expand: every appended byte can be read back, whatever the view left out.
use std::collections::HashMap;

use ctxd::pb;
use sqlx::PgPool;
use tonic::Code;

use crate::harness::*;

fn expand_range(first_seq: i64, last_seq: i64, max_tokens: i64) -> pb::ExpandRequest {
    pb::ExpandRequest {
        session_id: "s".into(),
        target: Some(pb::expand_request::Target::Range(pb::SeqRange {
            first_seq,
            last_seq,
        })),
        max_tokens,
    }
}

fn expand_list(seqs: &[i64], max_tokens: i64) -> pb::ExpandRequest {
    pb::ExpandRequest {
        session_id: "s".into(),
        target: Some(pb::expand_request::Target::List(pb::SeqList {
            seqs: seqs.to_vec(),
        })),
        max_tokens,
    }
}

/// The client-written fields of a message (what must come back byte-exact).
fn written(message: &pb::Message) -> pb::Message {
    pb::Message {
        seq: 0,
        turn: 0,
        token_count: 0,
        view_state: 0,
        view_token_count: 0,
        created_at: None,
        ..message.clone()
    }
}

#[sqlx::test]
async fn expand_returns_what_the_view_left_out_byte_exact(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "s", window(1_000, 200)).await;
    let mut sent = Vec::new();
    for turn in 0..6 {
        let id = format!("call-{turn}");
        let mut question = user(&format!(
            "Turn {turn}: ünïcödé 🦀, tabs\tand\r\nCRLF, trailing spaces   {}",
            "word ".repeat(40)
        ));
        question.metadata = HashMap::from([("origin".into(), format!("test {turn}"))]);
        question.pinned = turn == 0;
        let batch = vec![
            question,
            call(&[&id]),
            result(&id, &format!("output {turn}\n{}", "line\n".repeat(60))),
            assistant(&format!("answer {turn}")),
        ];
        append(&mut client, "s", batch.clone()).await.unwrap();
        sent.extend(batch);
    }
    let built = build(&mut client, "s", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert!(
        !built.summaries.is_empty(),
        "the window is too small for everything"
    );

    // What the summaries replaced comes back whole, summary by summary.
    let mut left_out = Vec::new();
    for summary in &built.summaries {
        let covered = client
            .expand(pb::ExpandRequest {
                session_id: "s".into(),
                target: Some(pb::expand_request::Target::SummaryId(summary.summary_id)),
                max_tokens: 0,
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(covered.next_seq, 0);
        assert_eq!(
            covered.total_tokens,
            covered.messages.iter().map(|m| m.token_count).sum::<i64>()
        );
        left_out.extend(covered.messages);
    }
    assert_summaries_cover_once(&built, sent.len() as i64);
    // (Not the summaries' message, seq 0.)
    let in_history = built.messages.iter().filter(|m| m.seq > 0).count();
    assert_eq!(left_out.len() + in_history, sent.len());
    for message in &left_out {
        assert_eq!(
            written(message),
            sent[message.seq as usize - 1],
            "seq {}",
            message.seq
        );
    }
    let unknown = client
        .expand(pb::ExpandRequest {
            session_id: "s".into(),
            target: Some(pb::expand_request::Target::SummaryId(999_999)),
            max_tokens: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound);

    // With a cap, pages that continue at next_seq add up to the whole log.
    let mut paged = Vec::new();
    let mut next = 1;
    let mut pages = 0;
    while next != 0 {
        let page = client
            .expand(expand_range(next, 24, 150))
            .await
            .unwrap()
            .into_inner();
        assert!(!page.messages.is_empty());
        assert!(
            page.total_tokens <= 150 || page.messages.len() == 1,
            "a page is within the cap unless it is one message larger than it"
        );
        next = page.next_seq;
        paged.extend(page.messages);
        pages += 1;
    }
    assert!(pages > 1, "the cap split the log into pages");
    assert_eq!(
        paged.iter().map(written).collect::<Vec<_>>(),
        sent,
        "every appended byte, in order"
    );

    // A list: any order, duplicates once, in seq order.
    let listed = client
        .expand(expand_list(&[7, 3, 7, 24], 0))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        listed.messages.iter().map(|m| m.seq).collect::<Vec<_>>(),
        [3, 7, 24]
    );
    assert_eq!(written(&listed.messages[1]), sent[6]);
    // A cap smaller than the first message still returns it, and says where to go on.
    let one = client
        .expand(expand_list(&[3, 7], 1))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(one.messages.len(), 1);
    assert_eq!(one.next_seq, 7);
    server.stop().await;
}

#[sqlx::test]
async fn expand_rejects_bad_requests_naming_the_field(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "s", window(8_000, 1_000)).await;
    append(&mut client, "s", vec![user("hello"), assistant("hi")])
        .await
        .unwrap();
    let cases = [
        (expand_range(0, 1, 0), "range.first_seq"),
        (expand_range(2, 1, 0), "range.last_seq"),
        (expand_range(1, 3, 0), "range.last_seq"),
        (expand_list(&[], 0), "list.seqs"),
        (expand_list(&[0], 0), "list.seqs"),
        (expand_list(&[3], 0), "list.seqs"),
        (expand_list(&vec![1; 1_001], 0), "list.seqs"),
        (expand_range(1, 2, -1), "max_tokens"),
        (
            pb::ExpandRequest {
                session_id: "s".into(),
                ..Default::default()
            },
            "target",
        ),
    ];
    for (request, field) in cases {
        let status = client.expand(request.clone()).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{request:?}");
        assert!(
            status.message().starts_with(field),
            "{field}: {}",
            status.message()
        );
    }
    let missing = client
        .expand(pb::ExpandRequest {
            session_id: "other".into(),
            ..expand_range(1, 1, 0)
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
    server.stop().await;
}

#[sqlx::test]
async fn nul_characters_are_rejected_naming_the_field(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "s", window(8_000, 1_000)).await;
    let mut with_metadata = user("fine");
    with_metadata.metadata = HashMap::from([("k".into(), "v\0".into())]);
    let mut bad_arguments = call(&["c1"]);
    bad_arguments.tool_calls[0].arguments_json = r#"{"command":"printf '\u0000'"}"#.into();
    let cases = [
        (vec![user("a\0b")], "messages[0].content"),
        (
            vec![user("ok"), with_metadata],
            "messages[1].metadata[\"k\"]",
        ),
        (
            vec![user("ok"), bad_arguments],
            "messages[1].tool_calls[0].arguments_json",
        ),
    ];
    for (messages, field) in cases {
        let status = append(&mut client, "s", messages).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{field}");
        assert!(
            status.message().starts_with(field) && status.message().contains("NUL"),
            "{field}: {}",
            status.message()
        );
    }
    let session = client
        .get_session(pb::GetSessionRequest {
            session_id: "s".into(),
            include_view: false,
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    assert_eq!(session.message_count, 0, "nothing was written");
    server.stop().await;
}
