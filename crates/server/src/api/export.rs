//! ExportSession (the file streamed in chunks) and ImportSession (the file read from a
//! client's stream, bounded, then handed to the engine whole).
use tonic::Streaming;

use super::ContextApi;
use super::convert::session_to_pb;
use crate::error::{Error, Result};
use crate::export::max_file_bytes;
use crate::pb;

/// Bytes of the file per ExportSession message.
const CHUNK_BYTES: usize = 1 << 20;

/// An ExportSession stream.
pub type ExportStream = std::pin::Pin<
    Box<
        dyn futures::Stream<Item = std::result::Result<pb::ExportSessionChunk, tonic::Status>>
            + Send,
    >,
>;

pub(super) async fn export_session(
    api: &ContextApi,
    tenant: i64,
    req: pb::ExportSessionRequest,
) -> Result<ExportStream> {
    let file = api.engine.export_session(tenant, &req.session_id).await?;
    let chunks: Vec<_> = file
        .chunks(CHUNK_BYTES)
        .map(|chunk| {
            Ok(pb::ExportSessionChunk {
                data: chunk.to_vec(),
            })
        })
        .collect();
    Ok(Box::pin(futures::stream::iter(chunks)))
}

pub(super) async fn import_session(
    api: &ContextApi,
    tenant: i64,
    mut stream: Streaming<pb::ImportSessionRequest>,
) -> Result<pb::ImportSessionResponse> {
    let max_session_bytes = api.engine.limits().max_session_bytes;
    let limit = max_file_bytes(max_session_bytes);
    let mut file = Vec::new();
    let mut session_id = None;
    while let Some(chunk) = stream
        .message()
        .await
        .map_err(|_| Error::invalid("data", "the stream of chunks broke off before its end"))?
    {
        session_id.get_or_insert(chunk.session_id);
        if file.len() + chunk.data.len() > limit {
            return Err(Error::ResourceExhausted {
                limit: "max_session_bytes",
                message: format!(
                    "the file is over {limit} bytes, the most this server reads \
                     (max_session_bytes {max_session_bytes} x 4 + 16 MiB)"
                ),
                retry_after: None,
            });
        }
        file.extend_from_slice(&chunk.data);
    }
    let imported = api
        .engine
        .import_session(tenant, &session_id.unwrap_or_default(), &file)
        .await?;
    Ok(pb::ImportSessionResponse {
        session: Some(session_to_pb(&imported.info)),
        messages: imported.messages,
        summaries: imported.summaries,
        ledger_entries: imported.ledger_entries,
    })
}
