//! Starts a server over a pool and hands out clients.
use std::time::Duration;

use ctxd::engine::{Engine, EngineConfig};
use ctxd::jobs::WorkerConfig;
use ctxd::pb;
use ctxd::pb::context_service_client::ContextServiceClient;
use ctxd::policy::Policy;
use ctxd::server::ServeOptions;
use ctxd::store::Store;
use sqlx::PgPool;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tonic::transport::Channel;

pub type Client = ContextServiceClient<Channel>;

pub struct TestServer {
    pub addr: std::net::SocketAddr,
    pub client: ContextServiceClient<Channel>,
    shutdown: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl TestServer {
    pub async fn start(pool: PgPool) -> TestServer {
        TestServer::start_with(pool, EngineConfig::new(Policy::default(), 1024 * 1024)).await
    }

    /// A server that reads every view from the table (no view cache).
    pub async fn start_uncached(pool: PgPool) -> TestServer {
        let config = EngineConfig::new(Policy::default(), 1024 * 1024);
        TestServer::start_on(Store::new(pool).view_cache_bytes(0), config).await
    }

    /// A server with its own job workers (two, polling every 100 ms).
    pub async fn start_with(pool: PgPool, config: EngineConfig) -> TestServer {
        TestServer::start_on(Store::new(pool), config).await
    }

    /// A server on `store` (as `Store::connect` made it: on a Citus cluster, writing as
    /// ctxd does there).
    pub async fn start_on_store(store: Store) -> TestServer {
        TestServer::start_on(store, TestServer::default_config()).await
    }

    /// A server writing appends by `ctxd_append`, as on a Citus cluster.
    pub async fn start_by_function(pool: PgPool) -> TestServer {
        let store = Store::new(pool).append_by_function(true);
        TestServer::start_on(store, TestServer::default_config()).await
    }

    /// The engine settings tests start from: default policy, 1 MiB messages.
    pub fn default_config() -> EngineConfig {
        EngineConfig::new(Policy::default(), 1024 * 1024)
    }

    /// A server with its own serving options (access, connections).
    pub async fn start_with_options(
        pool: PgPool,
        config: EngineConfig,
        options: ServeOptions,
    ) -> TestServer {
        TestServer::start_serving(Store::new(pool), config, options).await
    }

    async fn start_on(store: Store, config: EngineConfig) -> TestServer {
        TestServer::start_serving(store, config, ServeOptions::default()).await
    }

    async fn start_serving(
        store: Store,
        config: EngineConfig,
        options: ServeOptions,
    ) -> TestServer {
        // CTXD_APPEND_BY_FUNCTION=true runs every test on the cluster's write path.
        let store = match std::env::var("CTXD_APPEND_BY_FUNCTION").as_deref() {
            Ok("true" | "1") => store.append_by_function(true),
            _ => store,
        };
        let job_done = config.job_done.clone();
        // A TLS server's tests make their own clients; this one is never connected.
        let tls = options.tls.is_some();
        let engine = Engine::new(store, config);
        let shutdown = CancellationToken::new();
        let mut jobs = ctxd::jobs::start(
            engine.clone(),
            WorkerConfig {
                workers: 2,
                lease: Duration::from_secs(30),
                poll_interval: Duration::from_millis(100),
                retention: Duration::from_secs(3600),
            },
            job_done,
            shutdown.clone(),
        );
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let token = shutdown.clone();
        let task = tokio::spawn(async move {
            ctxd::server::serve(engine, listener, options, token)
                .await
                .expect("server failed");
            while jobs.join_next().await.is_some() {}
        });
        let channel = if tls {
            tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
                .unwrap()
                .connect_lazy()
        } else {
            channel(addr).await
        };
        TestServer {
            addr,
            client: ContextServiceClient::new(channel),
            shutdown,
            task: Some(task),
        }
    }

    pub async fn stop(mut self) {
        self.shutdown.cancel();
        if let Some(task) = self.task.take() {
            task.await.unwrap();
        }
    }
}

pub async fn channel(addr: std::net::SocketAddr) -> Channel {
    tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_timeout(Duration::from_secs(5))
        .connect()
        .await
        .unwrap()
}

pub fn text(role: pb::Role, content: &str) -> pb::Message {
    pb::Message {
        role: role as i32,
        content: content.to_string(),
        ..Default::default()
    }
}

pub fn user(content: &str) -> pb::Message {
    text(pb::Role::User, content)
}

pub fn assistant(content: &str) -> pb::Message {
    text(pb::Role::Assistant, content)
}

pub fn call(ids: &[&str]) -> pb::Message {
    pb::Message {
        role: pb::Role::Assistant as i32,
        tool_calls: ids
            .iter()
            .map(|id| pb::ToolCall {
                id: id.to_string(),
                name: "bash".into(),
                arguments_json: r#"{"command":"ls"}"#.into(),
            })
            .collect(),
        ..Default::default()
    }
}

pub fn result(id: &str, content: &str) -> pb::Message {
    pb::Message {
        role: pb::Role::Tool as i32,
        tool_call_id: id.to_string(),
        content: content.to_string(),
        ..Default::default()
    }
}

pub fn bash_tool() -> pb::Tools {
    pb::Tools {
        tools: Some(pb::tools::Tools::Definitions(pb::ToolDefinitionList {
            items: vec![pb::ToolDefinition {
                name: "bash".into(),
                description: "Execute a bash command".into(),
                parameters_json_schema: r#"{"type": "object", "properties": {"command": {"type": "string", "description": "The bash command to execute"}}, "required": ["command"]}"#.into(),
            }],
        })),
    }
}

pub async fn create(
    client: &mut ContextServiceClient<Channel>,
    id: &str,
    policy: pb::Policy,
) -> pb::Session {
    client
        .create_session(pb::CreateSessionRequest {
            session_id: id.into(),
            policy: Some(policy),
            metadata: Default::default(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap()
}

pub async fn append(
    client: &mut ContextServiceClient<Channel>,
    id: &str,
    messages: Vec<pb::Message>,
) -> Result<pb::AppendTurnResponse, tonic::Status> {
    client
        .append_turn(pb::AppendTurnRequest {
            session_id: id.into(),
            messages,
            ..Default::default()
        })
        .await
        .map(tonic::Response::into_inner)
}

pub async fn build(
    client: &mut ContextServiceClient<Channel>,
    id: &str,
    format: pb::OutputFormat,
) -> Result<pb::BuildMessagesResponse, tonic::Status> {
    client
        .build_messages(pb::BuildMessagesRequest {
            session_id: id.into(),
            system_prompt: "You are a careful coding agent.".into(),
            tools: Some(bash_tool()),
            max_output_tokens: None,
            format: format as i32,
        })
        .await
        .map(tonic::Response::into_inner)
}

/// Appends `recorded`'s first `limit` messages one at a time, building before each
/// assistant message as an agent would (so the session compacts), each with its
/// recorded usage.
pub async fn append_as_agent(
    client: &mut Client,
    id: &str,
    recorded: &ctxd::replay::Recorded,
    limit: usize,
) {
    for (message, usage) in recorded.messages.iter().take(limit) {
        if message.role == pb::Role::Assistant as i32 {
            build(client, id, pb::OutputFormat::OpenaiChat)
                .await
                .unwrap();
        }
        client
            .append_turn(pb::AppendTurnRequest {
                session_id: id.into(),
                messages: vec![message.clone()],
                usage: usage.map(|input_tokens| pb::Usage {
                    input_tokens,
                    ..Default::default()
                }),
                ..Default::default()
            })
            .await
            .unwrap();
    }
}

pub fn window(window: i64, output: i64) -> pb::Policy {
    pb::Policy {
        context_window_tokens: Some(window),
        max_output_tokens: Some(output),
        ..Default::default()
    }
}

/// The fields an InvalidArgument status names in its BadRequest details.
pub fn violated_fields(status: &tonic::Status) -> Vec<String> {
    use tonic_types::StatusExt;
    status
        .get_error_details()
        .bad_request()
        .map(|bad| {
            bad.field_violations
                .iter()
                .map(|v| v.field.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// Checks that every tool call in `messages` is answered right after its step and
/// every result follows its call (the last step may be open).
pub fn assert_provider_valid(messages: &[pb::Message]) {
    let mut index = 0;
    while index < messages.len() {
        let message = &messages[index];
        if message.role == pb::Role::Tool as i32 {
            panic!(
                "orphaned tool result at {index}: {:?}",
                message.tool_call_id
            );
        }
        if message.tool_calls.is_empty() {
            index += 1;
            continue;
        }
        let mut wanted: std::collections::HashSet<&str> =
            message.tool_calls.iter().map(|c| c.id.as_str()).collect();
        let mut end = index + 1;
        while end < messages.len() && messages[end].role == pb::Role::Tool as i32 {
            assert!(
                wanted.remove(messages[end].tool_call_id.as_str()),
                "tool result {:?} does not answer the step at {index}",
                messages[end].tool_call_id
            );
            end += 1;
        }
        assert!(
            wanted.is_empty() || end == messages.len(),
            "step at {index} has unanswered calls {wanted:?}"
        );
        index = end;
    }
}

/// A new, migrated database on the server DATABASE_URL points at, for tests that run
/// outside `#[sqlx::test]` (property tests with their own runtime, the corpus replay).
pub async fn fresh_database(prefix: &str) -> PgPool {
    fresh_database_with_options(prefix).await.0
}

/// A new, migrated database, and its URL (for a `ctxd` process of a test's own).
pub async fn fresh_database_url(prefix: &str) -> (PgPool, String) {
    let (pool, options) = fresh_database_with_options(prefix).await;
    let url = url_of_database(options.get_database().unwrap());
    (pool, url)
}

/// A new database without the schema (the first `ctxd` to start migrates it), and its
/// URL.
pub async fn empty_database_url(prefix: &str) -> String {
    let (_, name) = create_database(prefix).await;
    url_of_database(&name)
}

/// DATABASE_URL with its database replaced by `name`.
fn url_of_database(name: &str) -> String {
    let url = std::env::var("DATABASE_URL").unwrap();
    // The URL's database path replaced, its query (e.g. a socket directory) kept.
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base.to_string(), format!("?{query}")),
        None => (url.clone(), String::new()),
    };
    let server = match base.rfind('/') {
        Some(at) if at > "postgres://".len() => &base[..at],
        _ => base.as_str(),
    };
    format!("{server}/{name}{query}")
}

/// Creates a database on the server DATABASE_URL points at: the server's options and
/// the new database's name.
async fn create_database(prefix: &str) -> (sqlx::postgres::PgConnectOptions, String) {
    use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
    let url =
        std::env::var("DATABASE_URL").expect("DATABASE_URL must be set (scripts/test sets it)");
    let options: PgConnectOptions = url.parse().unwrap();
    let admin = PgPoolOptions::new()
        .max_connections(1)
        .connect_with(options.clone())
        .await
        .unwrap();
    let name = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
    sqlx::query(sqlx::AssertSqlSafe(format!("create database {name}")))
        .execute(&admin)
        .await
        .unwrap();
    admin.close().await;
    (options, name)
}

async fn fresh_database_with_options(prefix: &str) -> (PgPool, sqlx::postgres::PgConnectOptions) {
    use sqlx::postgres::PgPoolOptions;
    let (options, name) = create_database(prefix).await;
    let options = options.database(&name);
    let pool = PgPoolOptions::new()
        .max_connections(16)
        .connect_with(options.clone())
        .await
        .unwrap();
    ctxd::store::MIGRATOR.run(&pool).await.unwrap();
    (pool, options)
}

/// Every message 1..=last_seq is in the built request exactly once: in the history or
/// inside one summary; every summary is smaller than what it replaced.
pub fn assert_summaries_cover_once(built: &pb::BuildMessagesResponse, last_seq: i64) {
    let mut seen = vec![0u32; last_seq as usize + 1];
    for summary in &built.summaries {
        assert!(summary.token_count < summary.source_tokens, "{summary:?}");
        for seq in summary.first_seq..=summary.last_seq {
            seen[seq as usize] += 1;
        }
    }
    for message in &built.messages {
        seen[message.seq as usize] += 1;
    }
    assert!(
        seen[1..].iter().all(|&n| n == 1),
        "coverage by seq: {:?}",
        &seen[1..]
    );
}

/// The session as GetSession returns it.
pub async fn session(client: &mut Client, id: &str) -> pb::Session {
    get_session(client, id, false).await.session.unwrap()
}

/// GetSession's whole response; `include_view` adds the summaries and the budget.
pub async fn get_session(
    client: &mut Client,
    id: &str,
    include_view: bool,
) -> pb::GetSessionResponse {
    client
        .get_session(pb::GetSessionRequest {
            session_id: id.into(),
            include_view,
        })
        .await
        .unwrap()
        .into_inner()
}

/// GetSession with the view: the active summaries, the reverted ones, the budget.
pub async fn session_view(client: &mut Client, id: &str) -> pb::GetSessionResponse {
    get_session(client, id, true).await
}

/// The URL of a test's database (`#[sqlx::test]` makes one per test), for a `ctxd`
/// process: DATABASE_URL with the database name replaced.
pub fn database_url(pool: &PgPool) -> String {
    let base =
        std::env::var("DATABASE_URL").expect("DATABASE_URL must be set (scripts/test sets it)");
    let name = pool
        .connect_options()
        .get_database()
        .expect("a test pool names its database")
        .to_string();
    let (head, query) = match base.split_once('?') {
        Some((head, query)) => (head, format!("?{query}")),
        None => (base.as_str(), String::new()),
    };
    let authority = head.find("://").map_or(0, |at| at + 3);
    let path = head[authority..]
        .find('/')
        .map_or(head.len(), |at| authority + at);
    format!("{}/{name}{query}", &head[..path])
}

/// AppendNative with a provider's response body and request items (either may be empty).
pub async fn append_native(
    client: &mut Client,
    id: &str,
    format: pb::OutputFormat,
    response: &str,
    items: &str,
) -> Result<pb::AppendTurnResponse, tonic::Status> {
    client
        .append_native(pb::AppendNativeRequest {
            session_id: id.into(),
            format: format as i32,
            response_json: response.into(),
            items_json: items.into(),
            ..Default::default()
        })
        .await
        .map(tonic::Response::into_inner)
}

/// The JSON body BuildMessages gives in `format`.
pub async fn json_body(
    client: &mut Client,
    id: &str,
    format: pb::OutputFormat,
) -> serde_json::Value {
    let built = build(client, id, format).await.unwrap();
    serde_json::from_str(&built.json).unwrap()
}
