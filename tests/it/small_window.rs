//! Replays every recorded session through a 16 000-token window, as an agent would:
//! BuildMessages before each assistant message, AppendTurn after. The sessions grow far
//! past the window, so every layer of compaction runs. Asserts the promises (never over
//! budget, never an orphaned tool pair, the prompt cache kept on at least 95 % of
//! builds) and prints the table recorded in docs/benchmarks.md.
use ctxd::pb;

use crate::harness::*;
use crate::recorded::{Recorded, corpus_files, load};

const WINDOW: i64 = 16_000;

#[derive(Debug, Default)]
struct Replayed {
    name: String,
    messages: usize,
    builds: usize,
    over_budget: usize,
    orphans: usize,
    /// Builds whose request extends the previous one byte for byte.
    extending: usize,
    peak_tokens: i64,
    final_tokens: i64,
    stats: pb::CompactionStats,
    summaries: Vec<pb::Summary>,
}

/// What the provider would see: the system prompt and each message as rendered.
fn request_of(built: &pb::BuildMessagesResponse) -> Vec<String> {
    std::iter::once(built.system_prompt.clone())
        .chain(built.messages.iter().map(|m| {
            format!(
                "{}|{}|{}|{:?}",
                m.role, m.tool_call_id, m.content, m.tool_calls
            )
        }))
        .collect()
}

/// Tool results that answer no open call of the step before them, and calls left
/// unanswered before the next non-result message (the last step may stay open).
fn orphans(messages: &[pb::Message]) -> usize {
    let mut open = std::collections::HashSet::new();
    let mut orphans = 0;
    for message in messages {
        if message.role == pb::Role::Tool as i32 {
            orphans += usize::from(!open.remove(&message.tool_call_id));
            continue;
        }
        orphans += open.len();
        open.clear();
        open.extend(message.tool_calls.iter().map(|call| call.id.clone()));
    }
    orphans
}

async fn replay(client: &mut Client, id: &str, name: String, recorded: &Recorded) -> Replayed {
    create(
        client,
        id,
        pb::Policy {
            context_window_tokens: Some(WINDOW),
            ..Default::default()
        },
    )
    .await;
    let mut replayed = Replayed {
        name,
        messages: recorded.messages.len(),
        ..Default::default()
    };
    let limit = WINDOW - WINDOW / 4;
    let mut previous: Option<Vec<String>> = None;
    for (message, usage) in &recorded.messages {
        if usage.is_some() {
            let built = client
                .build_messages(pb::BuildMessagesRequest {
                    session_id: id.into(),
                    system_prompt: recorded.system.clone(),
                    tools: Some(bash_tool()),
                    format: pb::OutputFormat::Neutral as i32,
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner();
            let breakdown = built.budget.unwrap().breakdown.unwrap();
            replayed.builds += 1;
            replayed.over_budget += usize::from(breakdown.total_tokens > limit);
            replayed.orphans += orphans(&built.messages);
            replayed.peak_tokens = replayed.peak_tokens.max(breakdown.total_tokens);
            replayed.final_tokens = breakdown.total_tokens;
            let request = request_of(&built);
            if let Some(previous) = &previous
                && request.len() >= previous.len()
                && request[..previous.len()] == previous[..]
            {
                replayed.extending += 1;
            }
            previous = Some(request);
            replayed.summaries = built.summaries;
        }
        // The recorded usage counts the recorded (unbounded) request, not the one built
        // here, so it is not reported.
        append(client, id, vec![message.clone()]).await.unwrap();
    }
    replayed.stats = client
        .get_session(pb::GetSessionRequest {
            session_id: id.into(),
            include_view: false,
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap()
        .compaction
        .unwrap();
    replayed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_in_a_16k_window_never_over_budget_never_orphaned_cache_kept() {
    let pool = fresh_database("ctxd_small_window").await;
    let server = TestServer::start(pool).await;
    let replays = corpus_files().into_iter().enumerate().map(|(index, path)| {
        let mut client = server.client.clone();
        tokio::spawn(async move {
            let recorded = load(&path);
            let name = path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .trim_end_matches(".traj.json.gz")
                .to_string();
            replay(&mut client, &format!("w{index}"), name, &recorded).await
        })
    });
    let mut rows = Vec::new();
    for replayed in futures::future::join_all(replays).await {
        rows.push(replayed.unwrap());
    }
    println!(
        "session | messages | builds | peak tokens | final tokens | cleared | evicted | summaries written | active | cache-stable % | orphans | over budget"
    );
    println!("---|---|---|---|---|---|---|---|---|---|---|---");
    let (mut builds, mut extending, mut orphans, mut over) = (0, 0, 0, 0);
    let (mut facts, mut lost) = (0, 0);
    for row in &rows {
        let stable = if row.builds > 1 {
            row.extending as f64 * 100.0 / (row.builds - 1) as f64
        } else {
            100.0
        };
        println!(
            "{} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {} | {}",
            row.name,
            row.messages,
            row.builds,
            row.peak_tokens,
            row.final_tokens,
            row.stats.cleared_messages,
            row.stats.evicted_messages,
            row.stats.summaries_written,
            row.summaries.len(),
            stable,
            row.orphans,
            row.over_budget
        );
        builds += row.builds.saturating_sub(1);
        extending += row.extending;
        orphans += row.orphans;
        over += row.over_budget;
        facts += row.summaries.iter().map(|s| s.facts).sum::<i64>();
        lost += row.summaries.iter().map(|s| s.facts_lost).sum::<i64>();
    }
    let stable = extending as f64 * 100.0 / builds as f64;
    println!(
        "all | | {} | | | | | | | {stable:.1} | {orphans} | {over}",
        builds + rows.len()
    );
    println!(
        "retention: active summaries mention {} of the {facts} file paths and commands of what they cover ({:.1} %)",
        facts - lost,
        (facts - lost) as f64 * 100.0 / facts.max(1) as f64
    );
    assert_eq!(orphans, 0, "orphaned tool pairs");
    assert_eq!(over, 0, "builds over budget");
    assert!(stable >= 95.0, "cache-stable builds {stable:.1} % < 95 %");
    server.stop().await;
}
