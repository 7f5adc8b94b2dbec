//! Where the summaries go (`summary_placement`). By default (AFTER_TASK) a long task's
//! summarized steps follow its user message, so a compaction leaves the system prompt
//! and the task in the provider's cached prefix; summaries of whole earlier turns go in
//! the system prompt.
use ctxd::pb;
use sqlx::PgPool;

use crate::harness::*;

const SYSTEM: &str = "You are a careful coding agent.";

/// One long agent turn: a task, then `steps` tool steps.
async fn long_task(client: &mut Client, id: &str, steps: usize) {
    let task = format!(
        "Fix the failing test in src/app.py. {}",
        "Context. ".repeat(80)
    );
    append(client, id, vec![user(&task)]).await.unwrap();
    append_steps(client, id, 0..steps, false).await;
}

/// Tool steps `steps` of the turn, each with a build after it as an agent makes them
/// (compacting when due) when `builds`.
async fn append_steps(client: &mut Client, id: &str, steps: std::ops::Range<usize>, builds: bool) {
    for step in steps {
        let call_id = format!("c{step}");
        let output = format!("step {step} output {}", "line of output ".repeat(40));
        append(
            client,
            id,
            vec![call(&[&call_id]), result(&call_id, &output)],
        )
        .await
        .unwrap();
        if builds {
            build(client, id, pb::OutputFormat::Neutral).await.unwrap();
        }
    }
}

fn chat_messages(body: &serde_json::Value) -> &Vec<serde_json::Value> {
    body["messages"].as_array().unwrap()
}

#[sqlx::test]
async fn a_long_tasks_summaries_follow_its_user_message_and_keep_its_prefix(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    let session = create(&mut client, "t", window(4_000, 1_000)).await;
    assert_eq!(
        session.policy.unwrap().summary_placement,
        Some(pb::SummaryPlacement::AfterTask as i32),
        "the default placement"
    );
    long_task(&mut client, "t", 3).await;
    // Before any compaction: the task is the first message after the system prompt.
    let before = json_body(&mut client, "t", pb::OutputFormat::OpenaiChat).await;
    let task_before = chat_messages(&before)[1].clone();
    assert_eq!(task_before["role"], "user");

    // The turn grows past the window: its older steps are summarized.
    append_steps(&mut client, "t", 3..20, true).await;
    let built = build(&mut client, "t", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert!(!built.summaries.is_empty(), "the steps were summarized");
    assert!(
        built
            .summaries
            .iter()
            .all(|s| s.first_seq > built.first_seq)
    );
    assert_eq!(
        built.system_prompt, SYSTEM,
        "the system prompt is untouched"
    );
    assert_eq!(built.first_seq, 1, "the task stays");
    assert!(
        built.messages[0]
            .content
            .starts_with("Fix the failing test")
    );
    let block = &built.messages[1];
    assert_eq!(block.role, pb::Role::User as i32);
    for summary in &built.summaries {
        assert!(block.content.contains(&summary.content));
    }
    assert_provider_valid(&built.messages);
    let budget = built.budget.unwrap().breakdown.unwrap();
    assert!(budget.total_tokens + budget.output_reserve_tokens <= 4_000);

    // The provider's body: system prompt and task byte for byte as before the compaction.
    let after = json_body(&mut client, "t", pb::OutputFormat::OpenaiChat).await;
    assert_eq!(chat_messages(&after)[0], chat_messages(&before)[0]);
    assert_eq!(chat_messages(&after)[1], task_before);
    assert_eq!(chat_messages(&after)[2]["role"], "user");
    // Anthropic merges the block into the task's message, after the task's text.
    let anthropic = json_body(&mut client, "t", pb::OutputFormat::AnthropicMessages).await;
    let first = &anthropic["messages"][0];
    assert_eq!(first["role"], "user");
    let blocks = first["content"].as_array().unwrap();
    assert!(
        blocks[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Fix the failing test")
    );
    assert!(
        blocks[1]["text"]
            .as_str()
            .unwrap()
            .contains(&built.summaries[0].content)
    );
    assert_eq!(anthropic["messages"][1]["role"], "assistant");
    server.stop().await;
}

#[sqlx::test]
async fn summaries_of_whole_turns_go_in_the_system_prompt(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    create(&mut client, "w", window(1_000, 200)).await;
    let long = "word ".repeat(60);
    for turn in 0..8 {
        let id = format!("t{turn}");
        let messages = vec![
            user(&long),
            call(&[&id]),
            result(&id, &long),
            assistant("done"),
        ];
        append(&mut client, "w", messages).await.unwrap();
    }
    // A short newest turn: only whole turns need summarizing.
    append(&mut client, "w", vec![user("And now?")])
        .await
        .unwrap();
    let built = build(&mut client, "w", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert!(!built.summaries.is_empty());
    assert!(built.summaries.iter().all(|s| s.last_seq < built.first_seq));
    assert!(built.system_prompt.starts_with(SYSTEM));
    for summary in &built.summaries {
        assert!(built.system_prompt.contains(&summary.content));
    }
    assert!(
        built
            .messages
            .iter()
            .all(|m| !m.content.contains("summarized:"))
    );
    server.stop().await;
}

#[sqlx::test]
async fn the_system_placement_keeps_a_long_tasks_summaries_in_the_system_prompt(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut client = server.client.clone();
    let policy = pb::Policy {
        summary_placement: Some(pb::SummaryPlacement::System as i32),
        ..window(4_000, 1_000)
    };
    create(&mut client, "s", policy).await;
    long_task(&mut client, "s", 3).await;
    append_steps(&mut client, "s", 3..20, true).await;
    let built = build(&mut client, "s", pb::OutputFormat::Neutral)
        .await
        .unwrap();
    assert!(!built.summaries.is_empty());
    for summary in &built.summaries {
        assert!(built.system_prompt.contains(&summary.content));
    }
    assert_eq!(built.messages[1].role, pb::Role::Assistant as i32);
    server.stop().await;
}
