//! Search hits to the proto.

use super::timestamp;
use crate::pb;

pub(in crate::api) fn hit_to_pb(hit: crate::store::SearchHit) -> pb::SearchHit {
    pb::SearchHit {
        session_id: hit.external_id,
        seq: hit.seq,
        summary_id: hit.summary_id,
        depth: hit.depth,
        role: i32::from(hit.role),
        view_state: i32::from(hit.view_state),
        first_seq: hit.first_seq,
        last_seq: hit.last_seq,
        snippet: hit.snippet,
        rank: hit.rank,
        created_at: Some(timestamp(hit.created_at)),
        ledger_kind: i32::from(hit.ledger_kind),
        ledger_key: hit.ledger_key,
        source_tokens: hit.source_tokens,
    }
}
