//! The protobuf codec of the generated server and client: prost's, except that a
//! request the server cannot decode is the client's fault (INVALID_ARGUMENT with a
//! short sentence naming the message), not INTERNAL with the decoder's text.
use std::marker::PhantomData;

use tonic::Status;
use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder};
use tonic_prost::{ProstCodec, ProstEncoder};

/// [`ProstCodec`] with client-facing decode errors.
#[derive(Debug, Clone)]
pub struct ProtoCodec<T, U> {
    _pd: PhantomData<(T, U)>,
}

impl<T, U> Default for ProtoCodec<T, U> {
    fn default() -> Self {
        ProtoCodec { _pd: PhantomData }
    }
}

impl<T, U> Codec for ProtoCodec<T, U>
where
    T: prost::Message + Send + 'static,
    U: prost::Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = ProtoDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstCodec::<T, U>::default().encoder()
    }

    fn decoder(&mut self) -> Self::Decoder {
        ProtoDecoder { _pd: PhantomData }
    }
}

/// Decodes `U`; see [`decode_error`] for its errors.
#[derive(Debug, Clone)]
pub struct ProtoDecoder<U> {
    _pd: PhantomData<U>,
}

impl<U: prost::Message + Default> Decoder for ProtoDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        U::decode(buf)
            .map(Some)
            .map_err(|error| decode_error(message_name::<U>(), &error))
    }

    fn buffer_settings(&self) -> BufferSettings {
        BufferSettings::default()
    }
}

/// The unqualified Rust name of a message type (`GetSessionRequest`).
fn message_name<U>() -> &'static str {
    let path = std::any::type_name::<U>();
    path.rsplit("::").next().unwrap_or(path)
}

/// The status of a message that did not decode. The server decodes requests (every
/// RPC's input is named `…Request`, which a unit test checks against the proto): their
/// errors are the client's, INVALID_ARGUMENT. The client decodes responses: an
/// undecodable one is INTERNAL. The decoder's own text is logged at debug, not sent.
pub fn decode_error(name: &str, error: &prost::DecodeError) -> Status {
    tracing::debug!(message = name, error = %error, "undecodable protobuf message");
    if name.ends_with("Request") {
        Status::invalid_argument(format!("the request is not a valid {name} message"))
    } else {
        Status::internal(format!("the {name} received is not a valid message"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message as _;

    /// The request/response split of [`decode_error`] holds for every RPC in the proto.
    #[test]
    fn every_rpc_input_and_no_output_is_named_request() {
        let set = prost_types::FileDescriptorSet::decode(crate::pb::FILE_DESCRIPTOR_SET).unwrap();
        let methods: Vec<_> = set
            .file
            .iter()
            .flat_map(|file| &file.service)
            .flat_map(|service| &service.method)
            .collect();
        assert!(!methods.is_empty());
        for method in methods {
            assert!(method.input_type().ends_with("Request"), "{method:?}");
            assert!(!method.output_type().ends_with("Request"), "{method:?}");
        }
    }

    #[test]
    fn names_the_message_without_the_decoders_text() {
        let error =
            crate::pb::GetSessionRequest::decode(&[0x0a, 0x02, 0xff, 0xfe][..]).unwrap_err();
        let status = decode_error(message_name::<crate::pb::GetSessionRequest>(), &error);
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        assert_eq!(
            status.message(),
            "the request is not a valid GetSessionRequest message"
        );
        let error = crate::pb::Job::decode(&[0xff][..]).unwrap_err();
        assert_eq!(
            decode_error(message_name::<crate::pb::Job>(), &error).code(),
            tonic::Code::Internal
        );
    }
}
