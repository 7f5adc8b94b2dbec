//! Which provider API a request path is, and the URL it goes to upstream.
use crate::format::Format;

/// What a path asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Call {
    /// A model call: built by ctxd, forwarded, its reply recorded.
    Generate { provider: Format, stream: bool },
    /// Anthropic's token count of a request: forwarded as the client sent it.
    CountTokens,
}

/// The call a POST to `path` is; `None` for a path the endpoint does not answer.
/// OpenAI paths are taken with or without their `/v1` (clients' base URLs differ).
pub(super) fn call(path: &str) -> Option<Call> {
    let generate = |provider, stream| Some(Call::Generate { provider, stream });
    match path {
        "/v1/chat/completions" | "/chat/completions" => generate(Format::OpenAiChat, false),
        "/v1/responses" | "/responses" => generate(Format::OpenAiResponses, false),
        "/v1/messages" => generate(Format::AnthropicMessages, false),
        "/v1/messages/count_tokens" => Some(Call::CountTokens),
        _ => {
            let model = path.strip_prefix("/v1beta/models/")?;
            let (name, method) = model.rsplit_once(':')?;
            if name.is_empty() || name.contains('/') {
                return None;
            }
            match method {
                "generateContent" => generate(Format::Gemini, false),
                "streamGenerateContent" => generate(Format::Gemini, true),
                _ => None,
            }
        }
    }
}

/// A path's template, for metrics: one value per API, whatever the model or the
/// client sent.
pub(super) fn template(path: &str) -> &'static str {
    match call(path) {
        Some(Call::Generate { provider, stream }) => match (provider, stream) {
            (Format::OpenAiChat, _) => "/v1/chat/completions",
            (Format::OpenAiResponses, _) => "/v1/responses",
            (Format::AnthropicMessages, _) => "/v1/messages",
            (Format::Gemini, false) => "/v1beta/models/{model}:generateContent",
            (Format::Gemini, true) => "/v1beta/models/{model}:streamGenerateContent",
        },
        Some(Call::CountTokens) => "/v1/messages/count_tokens",
        None => "other",
    }
}

/// The upstream path of a call: OpenAI's always under `/v1`.
pub(super) fn upstream_path(path: &str) -> String {
    if path.starts_with("/v1") {
        path.to_string()
    } else {
        format!("/v1{path}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_their_format() {
        assert_eq!(
            call("/v1/messages"),
            Some(Call::Generate {
                provider: Format::AnthropicMessages,
                stream: false
            })
        );
        assert_eq!(
            call("/chat/completions"),
            Some(Call::Generate {
                provider: Format::OpenAiChat,
                stream: false
            })
        );
        assert_eq!(
            call("/v1beta/models/gemini-2.5-flash:streamGenerateContent"),
            Some(Call::Generate {
                provider: Format::Gemini,
                stream: true
            })
        );
        assert_eq!(call("/v1beta/models/a/b:generateContent"), None);
        assert_eq!(call("/v1/models"), None);
        assert_eq!(upstream_path("/responses"), "/v1/responses");
    }
}
