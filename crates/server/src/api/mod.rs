//! The gRPC edge: converts between the wire types and the engine's, resolves the tenant,
//! and wraps every RPC in a span that records the session and the outcome.
//!
//! Each RPC's handler is in the file of its group (`sessions`, `turns`, `compaction`,
//! `revert` for RevertCompaction, `search`, `subscribe`, `native` for AppendNative,
//! `export` for ExportSession and ImportSession); the proto ⇄ core conversions are in `convert/`.
mod compaction;
mod convert;
mod export;
mod ledger;
mod native;
mod recall;
mod revert;
mod search;
mod sessions;
mod status;
mod subscribe;
mod turns;

use std::sync::Arc;

use tonic::{Request, Response, Status};
use tracing::Instrument;

use crate::auth::Auth;
use crate::engine::Engine;
use crate::error::Result;
use crate::fanout::Hub;
use crate::metrics::metrics;
use crate::pb;

pub use convert::tokenizer_to_pb;
pub use status::status;

pub struct ContextApi {
    engine: Engine,
    auth: Arc<Auth>,
    hub: Arc<Hub>,
}

impl ContextApi {
    pub fn new(engine: Engine, auth: Arc<Auth>, hub: Arc<Hub>) -> ContextApi {
        ContextApi { engine, auth, hub }
    }
}

/// A SubscribeEvents stream.
pub type EventStream = std::pin::Pin<
    Box<
        dyn futures::Stream<Item = std::result::Result<pb::SubscribeEventsResponse, Status>> + Send,
    >,
>;

/// Runs one RPC inside its span: resolves the tenant, admits the call under the
/// tenant's request rate (`quotas`), runs `body`, records the outcome
/// (in the span and in `rpc.server.duration`; for SubscribeEvents, the time to open the
/// stream).
async fn rpc<Req, T, F, Fut>(
    api: &ContextApi,
    name: &'static str,
    session_id: &str,
    request: Request<Req>,
    body: F,
) -> std::result::Result<Response<T>, Status>
where
    F: FnOnce(i64, Req) -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let span = tracing::info_span!(
        "rpc",
        rpc = name,
        session_id = %session_id,
        tenant_id = tracing::field::Empty,
        outcome = tracing::field::Empty,
    );
    crate::telemetry::continue_trace(&span, request.metadata());
    let started = std::time::Instant::now();
    async move {
        let result = async {
            let tenant = api.auth.tenant(request.metadata()).await?;
            tracing::Span::current().record("tenant_id", tenant);
            api.engine.quotas().admit_request(tenant).await?;
            body(tenant, request.into_inner()).await
        }
        .await;
        match result {
            Ok(response) => {
                tracing::Span::current().record("outcome", "ok");
                metrics().rpc_finished(name, tonic::Code::Ok, started.elapsed());
                Ok(Response::new(response))
            }
            Err(error) => {
                if let crate::error::Error::ResourceExhausted { limit, .. } = &error {
                    metrics().quota_rejected(limit);
                }
                let status = status(error);
                metrics().rpc_finished(name, status.code(), started.elapsed());
                tracing::Span::current().record("outcome", format!("{:?}", status.code()));
                if matches!(status.code(), tonic::Code::Internal | tonic::Code::Unavailable) {
                    tracing::warn!(code = ?status.code(), "rpc failed");
                } else {
                    tracing::info!(code = ?status.code(), message = status.message(), "rpc rejected");
                }
                Err(status)
            }
        }
    }
    .instrument(span)
    .await
}

#[tonic::async_trait]
impl pb::context_service_server::ContextService for ContextApi {
    type SubscribeEventsStream = EventStream;
    type ExportSessionStream = export::ExportStream;

    async fn export_session(
        &self,
        request: Request<pb::ExportSessionRequest>,
    ) -> std::result::Result<Response<export::ExportStream>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(
            self,
            "ExportSession",
            &session_id,
            request,
            |tenant, req| export::export_session(self, tenant, req),
        )
        .await
    }

    async fn import_session(
        &self,
        request: Request<tonic::Streaming<pb::ImportSessionRequest>>,
    ) -> std::result::Result<Response<pb::ImportSessionResponse>, Status> {
        rpc(self, "ImportSession", "", request, |tenant, stream| {
            export::import_session(self, tenant, stream)
        })
        .await
    }

    async fn subscribe_events(
        &self,
        request: Request<pb::SubscribeEventsRequest>,
    ) -> std::result::Result<Response<EventStream>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(
            self,
            "SubscribeEvents",
            &session_id,
            request,
            |tenant, req| subscribe::subscribe_events(self, tenant, req),
        )
        .await
    }

    async fn search(
        &self,
        request: Request<pb::SearchRequest>,
    ) -> std::result::Result<Response<pb::SearchResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(self, "Search", &session_id, request, |tenant, req| {
            search::search(self, tenant, req)
        })
        .await
    }

    async fn create_session(
        &self,
        request: Request<pb::CreateSessionRequest>,
    ) -> std::result::Result<Response<pb::CreateSessionResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(
            self,
            "CreateSession",
            &session_id,
            request,
            |tenant, req| sessions::create_session(self, tenant, req),
        )
        .await
    }

    async fn get_session(
        &self,
        request: Request<pb::GetSessionRequest>,
    ) -> std::result::Result<Response<pb::GetSessionResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(self, "GetSession", &session_id, request, |tenant, req| {
            sessions::get_session(self, tenant, req)
        })
        .await
    }

    async fn list_sessions(
        &self,
        request: Request<pb::ListSessionsRequest>,
    ) -> std::result::Result<Response<pb::ListSessionsResponse>, Status> {
        rpc(self, "ListSessions", "", request, |tenant, req| {
            sessions::list_sessions(self, tenant, req)
        })
        .await
    }

    async fn delete_session(
        &self,
        request: Request<pb::DeleteSessionRequest>,
    ) -> std::result::Result<Response<pb::DeleteSessionResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(
            self,
            "DeleteSession",
            &session_id,
            request,
            |tenant, req| sessions::delete_session(self, tenant, req),
        )
        .await
    }

    async fn finish_session(
        &self,
        request: Request<pb::FinishSessionRequest>,
    ) -> std::result::Result<Response<pb::FinishSessionResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(
            self,
            "FinishSession",
            &session_id,
            request,
            |tenant, req| sessions::finish_session(self, tenant, req),
        )
        .await
    }

    async fn fork_session(
        &self,
        request: Request<pb::ForkSessionRequest>,
    ) -> std::result::Result<Response<pb::ForkSessionResponse>, Status> {
        let session_id = request.get_ref().source_session_id.clone();
        rpc(self, "ForkSession", &session_id, request, |tenant, req| {
            sessions::fork_session(self, tenant, req)
        })
        .await
    }

    async fn append_turn(
        &self,
        request: Request<pb::AppendTurnRequest>,
    ) -> std::result::Result<Response<pb::AppendTurnResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(self, "AppendTurn", &session_id, request, |tenant, req| {
            turns::append_turn(self, tenant, req)
        })
        .await
    }

    async fn append_native(
        &self,
        request: Request<pb::AppendNativeRequest>,
    ) -> std::result::Result<Response<pb::AppendTurnResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(self, "AppendNative", &session_id, request, |tenant, req| {
            native::append_native(self, tenant, req)
        })
        .await
    }

    async fn build_messages(
        &self,
        request: Request<pb::BuildMessagesRequest>,
    ) -> std::result::Result<Response<pb::BuildMessagesResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(
            self,
            "BuildMessages",
            &session_id,
            request,
            |tenant, req| turns::build_messages(self, tenant, req),
        )
        .await
    }

    async fn check_budget(
        &self,
        request: Request<pb::CheckBudgetRequest>,
    ) -> std::result::Result<Response<pb::CheckBudgetResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(self, "CheckBudget", &session_id, request, |tenant, req| {
            turns::check_budget(self, tenant, req)
        })
        .await
    }

    async fn compact(
        &self,
        request: Request<pb::CompactRequest>,
    ) -> std::result::Result<Response<pb::CompactResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(self, "Compact", &session_id, request, |tenant, req| {
            compaction::compact(self, tenant, req)
        })
        .await
    }

    async fn revert_compaction(
        &self,
        request: Request<pb::RevertCompactionRequest>,
    ) -> std::result::Result<Response<pb::RevertCompactionResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(
            self,
            "RevertCompaction",
            &session_id,
            request,
            |tenant, req| revert::revert_compaction(self, tenant, req),
        )
        .await
    }

    async fn get_job(
        &self,
        request: Request<pb::GetJobRequest>,
    ) -> std::result::Result<Response<pb::Job>, Status> {
        rpc(self, "GetJob", "", request, |tenant, req| {
            compaction::get_job(self, tenant, req)
        })
        .await
    }

    async fn answer_recall(
        &self,
        request: Request<pb::AnswerRecallRequest>,
    ) -> std::result::Result<Response<pb::AppendTurnResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(self, "AnswerRecall", &session_id, request, |tenant, req| {
            recall::answer_recall(self, tenant, req)
        })
        .await
    }

    async fn update_ledger(
        &self,
        request: Request<pb::UpdateLedgerRequest>,
    ) -> std::result::Result<Response<pb::UpdateLedgerResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(self, "UpdateLedger", &session_id, request, |tenant, req| {
            ledger::update_ledger(self, tenant, req)
        })
        .await
    }

    async fn expand(
        &self,
        request: Request<pb::ExpandRequest>,
    ) -> std::result::Result<Response<pb::ExpandResponse>, Status> {
        let session_id = request.get_ref().session_id.clone();
        rpc(self, "Expand", &session_id, request, |tenant, req| {
            compaction::expand(self, tenant, req)
        })
        .await
    }
}
