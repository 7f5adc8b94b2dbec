//! Compiles proto/ with protox (pure Rust, no system protoc) and generates the tonic
//! server and client. The encoded descriptor set is written next to the generated code
//! for gRPC server reflection.
use std::path::PathBuf;

use protox::prost::Message as _;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=../../proto");
    println!("cargo:rerun-if-changed=../../migrations");

    let fds = protox::compile(["ctxd/v1/ctxd.proto"], ["../../proto"])?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out_dir.join("ctxd_descriptor.bin"), fds.encode_to_vec())?;

    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // Undecodable requests answer INVALID_ARGUMENT, not INTERNAL (crates/server/src/codec.rs).
        .codec_path("crate::codec::ProtoCodec")
        // Written by hand, to send an event's message encoded once (crates/server/src/pb/event_stream.rs).
        .extern_path(
            ".ctxd.v1.SubscribeEventsResponse",
            "crate::pb::SubscribeEventsResponse",
        )
        .compile_fds(fds)?;
    Ok(())
}
