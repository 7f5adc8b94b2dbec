//! A provider's wire format: the one name ingest (bodies read into messages), render
//! (messages written as a provider's body), the provider endpoint and the summarizer's
//! model client share. The gRPC API's `OutputFormat` maps onto it at the edge.

/// A provider's JSON shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// OpenAI Chat Completions (`messages`).
    OpenAiChat,
    /// OpenAI Responses (`input` items).
    OpenAiResponses,
    /// Anthropic Messages (`messages` with content blocks).
    AnthropicMessages,
    /// Gemini `generateContent` (`contents` with parts).
    Gemini,
}
