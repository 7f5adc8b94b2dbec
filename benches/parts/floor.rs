//! The transport floor: a ContextService that does no work of its own — BuildMessages
//! answers with a response built beforehand, AppendTurn runs the raw SQL baseline's one
//! statement — served and called exactly as ctxd is (tonic on loopback, one connection
//! per client, in the same process), so a run shows what gRPC and the database alone
//! cost on the machine beside what ctxd costs. The second floor for BuildMessages adds
//! what any correct build must do with the database, shared by many replicas: one
//! indexed single-row read of the session per call (its primary key).
use std::collections::HashMap;
use std::net::SocketAddr;

use ctxd::pb;
use ctxd::pb::context_service_server::{ContextService, ContextServiceServer};
use sqlx::PgPool;
use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

/// What the floor answers with.
pub struct Floor {
    /// The response to every BuildMessages.
    pub build: pb::BuildMessagesResponse,
    /// The database, and the session row id of each session id, for AppendTurn (and
    /// for BuildMessages when `read_row`).
    pub pool: PgPool,
    pub sessions: HashMap<String, i64>,
    /// BuildMessages reads the session's row (by its primary key) before answering.
    pub read_row: bool,
}

/// Serves `floor` on 127.0.0.1, on a port of its own, until the process ends.
pub async fn serve(floor: Floor) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let service = ContextServiceServer::new(floor)
        .max_decoding_message_size(usize::MAX)
        .max_encoding_message_size(usize::MAX);
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming(TcpIncoming::from(listener).with_nodelay(Some(true))),
    );
    addr
}

/// The least an append can write: the message row and the session's counters, one
/// statement in its own durable transaction.
pub async fn raw_append(pool: &PgPool, session_pk: i64, message: &pb::Message) {
    let tool_calls = (!message.tool_calls.is_empty()).then(|| {
        serde_json::to_string(
            &message
                .tool_calls
                .iter()
                .map(|c| serde_json::json!({"id": c.id, "name": c.name, "arguments": c.arguments_json}))
                .collect::<Vec<_>>(),
        )
        .unwrap()
    });
    sqlx::query(
        "with s as (update sessions set version = version + 1,
            message_count = message_count + 1, updated_at = now()
            where id = $1 returning message_count, tenant_id)
         insert into messages (session_id, seq, turn, role, content, tool_calls,
            tool_call_id, token_count, view_tokens, tenant_id)
         select $1, s.message_count, 1, $2, $3, $4::jsonb, $5, $6, $6, s.tenant_id from s",
    )
    .bind(session_pk)
    .bind(message.role as i16)
    .bind(&message.content)
    .bind(tool_calls)
    .bind(&message.tool_call_id)
    .bind((message.content.len() / 4) as i32)
    .execute(pool)
    .await
    .expect("raw append");
}

fn no_work<T>() -> Result<Response<T>, Status> {
    Err(Status::unimplemented(
        "the floor serves BuildMessages and AppendTurn only",
    ))
}

#[tonic::async_trait]
impl ContextService for Floor {
    async fn create_session(
        &self,
        _: Request<pb::CreateSessionRequest>,
    ) -> Result<Response<pb::CreateSessionResponse>, Status> {
        no_work()
    }

    async fn get_session(
        &self,
        _: Request<pb::GetSessionRequest>,
    ) -> Result<Response<pb::GetSessionResponse>, Status> {
        no_work()
    }

    async fn list_sessions(
        &self,
        _: Request<pb::ListSessionsRequest>,
    ) -> Result<Response<pb::ListSessionsResponse>, Status> {
        no_work()
    }

    async fn delete_session(
        &self,
        _: Request<pb::DeleteSessionRequest>,
    ) -> Result<Response<pb::DeleteSessionResponse>, Status> {
        no_work()
    }

    async fn finish_session(
        &self,
        _: Request<pb::FinishSessionRequest>,
    ) -> Result<Response<pb::FinishSessionResponse>, Status> {
        no_work()
    }

    async fn fork_session(
        &self,
        _: Request<pb::ForkSessionRequest>,
    ) -> Result<Response<pb::ForkSessionResponse>, Status> {
        no_work()
    }

    async fn append_turn(
        &self,
        request: Request<pb::AppendTurnRequest>,
    ) -> Result<Response<pb::AppendTurnResponse>, Status> {
        let request = request.into_inner();
        let session_pk = self.sessions[&request.session_id];
        for message in &request.messages {
            raw_append(&self.pool, session_pk, message).await;
        }
        Ok(Response::new(pb::AppendTurnResponse::default()))
    }

    async fn append_native(
        &self,
        _: Request<pb::AppendNativeRequest>,
    ) -> Result<Response<pb::AppendTurnResponse>, Status> {
        no_work()
    }

    async fn build_messages(
        &self,
        request: Request<pb::BuildMessagesRequest>,
    ) -> Result<Response<pb::BuildMessagesResponse>, Status> {
        if self.read_row {
            let session_pk = self.sessions[&request.get_ref().session_id];
            let version: i64 = sqlx::query_scalar("select version from sessions where id = $1")
                .bind(session_pk)
                .fetch_one(&self.pool)
                .await
                .expect("the floor's row read");
            std::hint::black_box(version);
        }
        Ok(Response::new(self.build.clone()))
    }

    async fn check_budget(
        &self,
        _: Request<pb::CheckBudgetRequest>,
    ) -> Result<Response<pb::CheckBudgetResponse>, Status> {
        no_work()
    }

    async fn expand(
        &self,
        _: Request<pb::ExpandRequest>,
    ) -> Result<Response<pb::ExpandResponse>, Status> {
        no_work()
    }

    async fn revert_compaction(
        &self,
        _: Request<pb::RevertCompactionRequest>,
    ) -> Result<Response<pb::RevertCompactionResponse>, Status> {
        no_work()
    }

    async fn compact(
        &self,
        _: Request<pb::CompactRequest>,
    ) -> Result<Response<pb::CompactResponse>, Status> {
        no_work()
    }

    async fn get_job(&self, _: Request<pb::GetJobRequest>) -> Result<Response<pb::Job>, Status> {
        no_work()
    }

    async fn search(
        &self,
        _: Request<pb::SearchRequest>,
    ) -> Result<Response<pb::SearchResponse>, Status> {
        no_work()
    }

    async fn answer_recall(
        &self,
        _: Request<pb::AnswerRecallRequest>,
    ) -> Result<Response<pb::AppendTurnResponse>, Status> {
        no_work()
    }

    async fn update_ledger(
        &self,
        _: Request<pb::UpdateLedgerRequest>,
    ) -> Result<Response<pb::UpdateLedgerResponse>, Status> {
        no_work()
    }

    type ExportSessionStream = futures::stream::Empty<Result<pb::ExportSessionChunk, Status>>;

    async fn export_session(
        &self,
        _: Request<pb::ExportSessionRequest>,
    ) -> Result<Response<Self::ExportSessionStream>, Status> {
        no_work()
    }

    async fn import_session(
        &self,
        _: Request<tonic::Streaming<pb::ImportSessionRequest>>,
    ) -> Result<Response<pb::ImportSessionResponse>, Status> {
        no_work()
    }

    type SubscribeEventsStream =
        futures::stream::Empty<Result<pb::SubscribeEventsResponse, Status>>;

    async fn subscribe_events(
        &self,
        _: Request<pb::SubscribeEventsRequest>,
    ) -> Result<Response<Self::SubscribeEventsStream>, Status> {
        no_work()
    }
}
