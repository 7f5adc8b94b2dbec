//! Steps through a provider body parsed as JSON, each step knowing its JSON path, so a
//! wrong type or a missing field is a sentence naming where it is.
use serde_json::{Map, Value};

use super::IngestError;

/// The most characters of a client's value an error repeats.
const ECHO_CHARS: usize = 40;

pub(super) fn parse(json: &str, what: &str) -> Result<Value, IngestError> {
    serde_json::from_str(json).map_err(|error| {
        IngestError::new(
            "$",
            format!(
                "is not valid JSON (line {}, column {}); send {what} as the provider returned it",
                error.line(),
                error.column()
            ),
        )
    })
}

/// What a JSON value is, for an error sentence.
pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A client's text, cut short enough to repeat in an error.
pub(super) fn clip(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(ECHO_CHARS).collect();
    if chars.next().is_some() {
        format!("\"{head}…\"")
    } else {
        format!("\"{head}\"")
    }
}

fn wrong(path: &str, want: &str, value: &Value) -> IngestError {
    IngestError::new(path, format!("must be {want}, got {}", kind(value)))
}

pub(super) fn object<'a>(
    value: &'a Value,
    path: &str,
) -> Result<&'a Map<String, Value>, IngestError> {
    value
        .as_object()
        .ok_or_else(|| wrong(path, "an object", value))
}

pub(super) fn array<'a>(value: &'a Value, path: &str) -> Result<&'a [Value], IngestError> {
    match value {
        Value::Array(items) => Ok(items),
        _ => Err(wrong(path, "an array", value)),
    }
}

pub(super) fn string<'a>(value: &'a Value, path: &str) -> Result<&'a str, IngestError> {
    value.as_str().ok_or_else(|| wrong(path, "a string", value))
}

/// A field that must be present (and not null).
pub(super) fn field<'a>(
    map: &'a Map<String, Value>,
    path: &str,
    key: &str,
) -> Result<&'a Value, IngestError> {
    match map.get(key) {
        Some(Value::Null) | None => Err(IngestError::new(
            format!("{path}.{key}"),
            "is missing; the provider's reference requires it",
        )),
        Some(value) => Ok(value),
    }
}

/// A string field that must be present and not empty.
pub(super) fn name<'a>(
    map: &'a Map<String, Value>,
    path: &str,
    key: &str,
) -> Result<&'a str, IngestError> {
    let text = string(field(map, path, key)?, &format!("{path}.{key}"))?;
    if text.is_empty() {
        return Err(IngestError::new(
            format!("{path}.{key}"),
            "must not be empty",
        ));
    }
    Ok(text)
}

/// A string field that may be absent or null.
pub(super) fn optional_string<'a>(
    map: &'a Map<String, Value>,
    path: &str,
    key: &str,
) -> Result<Option<&'a str>, IngestError> {
    match map.get(key) {
        Some(Value::Null) | None => Ok(None),
        Some(value) => string(value, &format!("{path}.{key}")).map(Some),
    }
}

/// A boolean field; absent or null is false.
pub(super) fn flag(map: &Map<String, Value>, path: &str, key: &str) -> Result<bool, IngestError> {
    match map.get(key) {
        Some(Value::Null) | None => Ok(false),
        Some(Value::Bool(flag)) => Ok(*flag),
        Some(value) => Err(wrong(&format!("{path}.{key}"), "a boolean", value)),
    }
}

/// A token count: absent or null is 0; otherwise a non-negative integer.
pub(super) fn count(map: &Map<String, Value>, path: &str, key: &str) -> Result<i64, IngestError> {
    match map.get(key) {
        Some(Value::Null) | None => Ok(0),
        Some(value) => value
            .as_u64()
            .and_then(|count| i64::try_from(count).ok())
            .ok_or_else(|| wrong(&format!("{path}.{key}"), "a non-negative integer", value)),
    }
}

/// A `data:` URI for base64 bytes, as ctxd stores inline media.
pub(super) fn data_uri(mime_type: &str, data: &str) -> String {
    format!("data:{mime_type};base64,{data}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_cuts_long_values() {
        assert_eq!(clip("abc"), "\"abc\"");
        let long = "é".repeat(100);
        assert_eq!(clip(&long).chars().count(), ECHO_CHARS + 3);
    }
}
