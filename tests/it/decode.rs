//! Requests the server cannot decode are the client's fault: INVALID_ARGUMENT with a
//! short sentence, not INTERNAL with the protobuf decoder's text. The bytes go through
//! a real gRPC call with a codec that sends them as they are.
use ctxd::pb;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use prost::Message as _;
use prost::bytes::{Buf, BufMut};
use sqlx::PgPool;
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

use crate::harness::*;
use crate::hostile::check;

/// Sends and receives message bytes unchanged.
#[derive(Debug, Clone, Copy, Default)]
struct RawCodec;

impl Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = RawCodec;
    type Decoder = RawCodec;

    fn encoder(&mut self) -> RawCodec {
        RawCodec
    }

    fn decoder(&mut self) -> RawCodec {
        RawCodec
    }
}

impl Encoder for RawCodec {
    type Item = Vec<u8>;
    type Error = Status;

    fn encode(&mut self, item: Vec<u8>, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        buf.put_slice(&item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Vec<u8>;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        Ok(Some(buf.copy_to_bytes(buf.remaining()).to_vec()))
    }
}

async fn call_raw(server: &TestServer, method: &str, body: Vec<u8>) -> Result<Vec<u8>, Status> {
    let mut grpc = tonic::client::Grpc::new(channel(server.addr).await);
    grpc.ready().await.unwrap();
    let path = tonic::codegen::http::uri::PathAndQuery::try_from(format!(
        "/ctxd.v1.ContextService/{method}"
    ))
    .unwrap();
    grpc.unary(tonic::Request::new(body), path, RawCodec)
        .await
        .map(tonic::Response::into_inner)
}

/// Bytes from a fixed linear congruential sequence.
fn noise(len: usize) -> Vec<u8> {
    let mut state: u32 = 0x2545_f491;
    (0..len)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (state >> 24) as u8
        })
        .collect()
}

#[sqlx::test]
async fn undecodable_requests_are_invalid_argument_without_decoder_text(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let random = noise(64);
    // Field 1 (session_id, a string) holding bytes that are not UTF-8.
    let invalid_utf8 = vec![0x0a, 0x02, 0xff, 0xfe];
    // Field 1 as a varint where a length-delimited string belongs.
    let wrong_wire_type = vec![0x08, 0x01];
    let cases = [
        ("GetSession", "random bytes", random.clone()),
        ("AppendTurn", "random bytes", random),
        ("GetSession", "invalid UTF-8", invalid_utf8),
        ("GetSession", "wrong wire type", wrong_wire_type),
    ];
    for (method, what, body) in cases {
        if method == "GetSession" {
            assert!(
                pb::GetSessionRequest::decode(&body[..]).is_err(),
                "{what} must not decode"
            );
        } else {
            assert!(pb::AppendTurnRequest::decode(&body[..]).is_err(), "{what}");
        }
        let status = call_raw(&server, method, body).await.unwrap_err();
        assert_eq!(
            status.code(),
            tonic::Code::InvalidArgument,
            "{method} with {what}: {status:?}"
        );
        let message = status.message().to_lowercase();
        assert!(
            !message.contains("decode") && !message.contains("prost"),
            "{method} with {what}: {message}"
        );
        assert!(
            message.contains("request"),
            "{method} with {what}: {message}"
        );
        assert!(message.len() < 2048, "{method} with {what}: {message}");
    }

    // The same path with a valid encoding reaches the handler (an unknown session).
    let valid = pb::GetSessionRequest {
        session_id: "no-such-session".into(),
        include_view: false,
    }
    .encode_to_vec();
    let status = call_raw(&server, "GetSession", valid).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::NotFound, "{status:?}");
    server.stop().await;
}

/// The unary methods of the service, by path.
const UNARY: [&str; 14] = [
    "CreateSession",
    "GetSession",
    "DeleteSession",
    "FinishSession",
    "ForkSession",
    "AppendTurn",
    "BuildMessages",
    "CheckBudget",
    "Expand",
    "Compact",
    "RevertCompaction",
    "GetJob",
    "Search",
    "UpdateLedger",
];

/// Random bytes, invalid UTF-8 and wrong wire types as the body of every unary RPC: never
/// INTERNAL, never over 2 KiB of error.
#[sqlx::test]
async fn every_unary_rpc_refuses_undecodable_bodies(pool: PgPool) {
    let server = TestServer::start(pool).await;
    let mut runner = TestRunner::new(Config::default());
    let bodies = prop::collection::vec(any::<u8>(), 0..256);
    let mut fixed: Vec<Vec<u8>> = vec![
        // Field 1 (session_id), length 2, not UTF-8.
        vec![0x0a, 0x02, 0xff, 0xfe],
        // Field 1 as a varint: the wrong wire type for a string.
        vec![0x08, 0x01],
        // A length running past the end.
        vec![0x0a, 0x7f, b'a'],
        // A field number of 0.
        vec![0x00, 0x00],
    ];
    for _ in 0..40 {
        fixed.push(bodies.new_tree(&mut runner).unwrap().current());
    }
    for method in UNARY {
        for (index, body) in fixed.iter().enumerate() {
            let outcome = call_raw(&server, method, body.clone()).await.map(drop);
            let what = format!("{method} body {index} {body:02x?}");
            check(&what, outcome.clone());
            // Field 1 of GetJobRequest is an integer: a varint there is valid.
            let valid = method == "GetJob" && index == 1;
            if index < 4 && !valid {
                let status = outcome.expect_err(&what);
                assert_eq!(status.code(), tonic::Code::InvalidArgument, "{what}");
                assert!(
                    !status.message().contains("decode") && !status.message().contains("prost"),
                    "{what}: the decoder's text reached the client: {}",
                    status.message()
                );
            }
        }
    }
    server.stop().await;
}
