//! Reading a provider body parsed as JSON, field by field: each step knows its JSON
//! path, so a wrong type or a missing field is a sentence naming where it is, with a
//! clipped echo of the value. The readers of every provider format use it.
use serde_json::{Map, Value};

use super::IngestError;
pub(super) use crate::error::quoted;
use crate::validate::NUL_REASON;

pub(super) type Object = Map<String, Value>;

/// The body, `what` naming what it should be (`a ChatCompletion`) for the error.
pub(super) fn parse(json: &str, what: &str) -> Result<Value, IngestError> {
    serde_json::from_str(json).map_err(|error| {
        IngestError::new(
            "$",
            format!(
                "is not valid JSON (line {}, column {}); send {what} as the provider \
                 returned it",
                error.line(),
                error.column()
            ),
        )
    })
}

/// What a value is, for an error: its type and a clipped echo.
pub(super) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(flag) => format!("the boolean {flag}"),
        // A parsed number is an i64, a u64 or an f64: a few dozen characters at most.
        Value::Number(number) => format!("the number {number}"),
        Value::String(text) => format!("the string {}", quoted(text)),
        Value::Array(items) => format!("an array of {}", items.len()),
        Value::Object(_) => "an object".to_string(),
    }
}

pub(super) fn at(path: &str, key: &str) -> String {
    format!("{path}.{key}")
}

pub(super) fn index(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

pub(super) fn object<'v>(value: &'v Value, path: &str) -> Result<&'v Object, IngestError> {
    value.as_object().ok_or_else(|| {
        IngestError::new(
            path,
            format!("must be a JSON object, got {}", describe(value)),
        )
    })
}

pub(super) fn array<'v>(value: &'v Value, path: &str) -> Result<&'v [Value], IngestError> {
    match value {
        Value::Array(items) => Ok(items),
        _ => Err(IngestError::new(
            path,
            format!("must be a JSON array, got {}", describe(value)),
        )),
    }
}

/// A body of request items: a JSON array holding at least one.
pub(super) fn item_array(root: &Value) -> Result<&[Value], IngestError> {
    let items = array(root, "$")?;
    if items.is_empty() {
        return Err(IngestError::new(
            "$",
            "is an empty array: leave items_json empty when there are no items",
        ));
    }
    Ok(items)
}

/// A field that is present and not null.
pub(super) fn field<'v>(map: &'v Object, key: &str) -> Option<&'v Value> {
    map.get(key).filter(|value| !value.is_null())
}

pub(super) fn required<'v>(
    map: &'v Object,
    key: &str,
    path: &str,
) -> Result<&'v Value, IngestError> {
    field(map, key).ok_or_else(|| IngestError::new(at(path, key), "is missing"))
}

/// A string; one holding a NUL character is refused here, where its path is known (the
/// store cannot keep it).
pub(super) fn string<'v>(value: &'v Value, path: &str) -> Result<&'v str, IngestError> {
    let text = value.as_str().ok_or_else(|| {
        IngestError::new(path, format!("must be a string, got {}", describe(value)))
    })?;
    if text.contains('\0') {
        return Err(IngestError::new(path, NUL_REASON));
    }
    Ok(text)
}

/// A string field that may be absent or null.
pub(super) fn optional_string<'v>(
    map: &'v Object,
    key: &str,
    path: &str,
) -> Result<Option<&'v str>, IngestError> {
    field(map, key)
        .map(|value| string(value, &at(path, key)))
        .transpose()
}

pub(super) fn required_string<'v>(
    map: &'v Object,
    key: &str,
    path: &str,
) -> Result<&'v str, IngestError> {
    string(required(map, key, path)?, &at(path, key))
}

/// A required, non-empty string: an id or a name.
pub(super) fn non_empty<'v>(
    map: &'v Object,
    key: &str,
    path: &str,
) -> Result<&'v str, IngestError> {
    let text = required_string(map, key, path)?;
    if text.is_empty() {
        return Err(IngestError::new(at(path, key), "must not be empty"));
    }
    Ok(text)
}

/// A string field that must equal `expected` when present.
pub(super) fn expect(
    map: &Object,
    key: &str,
    expected: &str,
    path: &str,
) -> Result<(), IngestError> {
    match optional_string(map, key, path)? {
        Some(found) if found != expected => Err(IngestError::new(
            at(path, key),
            format!("must be \"{expected}\", got {}", quoted(found)),
        )),
        _ => Ok(()),
    }
}

/// A boolean field; absent or null is false.
pub(super) fn flag(map: &Object, key: &str, path: &str) -> Result<bool, IngestError> {
    match field(map, key) {
        None => Ok(false),
        Some(Value::Bool(flag)) => Ok(*flag),
        Some(value) => Err(IngestError::new(
            at(path, key),
            format!("must be a boolean, got {}", describe(value)),
        )),
    }
}

/// A token count: a non-negative integer, absent or null read as none.
pub(super) fn count(map: &Object, key: &str, path: &str) -> Result<Option<i64>, IngestError> {
    let Some(value) = field(map, key) else {
        return Ok(None);
    };
    match value.as_u64().and_then(|count| i64::try_from(count).ok()) {
        Some(count) => Ok(Some(count)),
        None => Err(IngestError::new(
            at(path, key),
            format!("must be a non-negative integer, got {}", describe(value)),
        )),
    }
}

pub(super) fn required_count(map: &Object, key: &str, path: &str) -> Result<i64, IngestError> {
    count(map, key, path)?.ok_or_else(|| IngestError::new(at(path, key), "is missing"))
}

/// Tool-call arguments: a JSON text holding an object (empty is read as no arguments).
pub(super) fn arguments(text: &str, path: &str) -> Result<(), IngestError> {
    if text.is_empty() {
        return Ok(());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(_)) => Ok(()),
        Ok(other) => Err(IngestError::new(
            path,
            format!(
                "must be a JSON object in a string, got {}",
                describe(&other)
            ),
        )),
        Err(_) => Err(IngestError::new(
            path,
            format!("is not valid JSON: {}", quoted(text)),
        )),
    }
}

/// Arbitrary JSON values, with the keys the readers look for, for never-panic properties.
#[cfg(test)]
pub(crate) fn arbitrary() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let key = prop::sample::select(vec![
        // OpenAI Chat and Responses.
        "role",
        "content",
        "type",
        "id",
        "call_id",
        "tool_call_id",
        "tool_calls",
        "function",
        "name",
        "arguments",
        "choices",
        "message",
        "usage",
        "output",
        "text",
        "summary",
        "image_url",
        "url",
        "prompt_tokens",
        "input_tokens",
        // Anthropic.
        "thinking",
        "signature",
        "data",
        "input",
        "tool_use_id",
        "is_error",
        "source",
        "media_type",
        // Gemini.
        "candidates",
        "parts",
        "thought",
        "functionCall",
        "functionResponse",
        "args",
        "response",
        "inlineData",
        "fileData",
        "mimeType",
        "fileUri",
        "usageMetadata",
        "x",
    ]);
    let word = prop_oneof![
        Just("assistant"),
        Just("user"),
        Just("tool"),
        Just("system"),
        Just("function"),
        Just("message"),
        Just("function_call"),
        Just("function_call_output"),
        Just("reasoning"),
        Just("output_text"),
        Just("input_text"),
        Just("input_image"),
        Just("text"),
        Just("image_url"),
        Just("model"),
        Just("tool_use"),
        Just("tool_result"),
        Just("image"),
        Just("base64"),
        Just("{}"),
        Just(""),
        Just("{\"a\":1}"),
    ]
    .prop_map(|word| Value::String(word.to_string()));
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,8}".prop_map(Value::String),
        word,
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..6).prop_map(|fields| {
                Value::Object(
                    fields
                        .into_iter()
                        .map(|(key, value)| (key.to_string(), value))
                        .collect(),
                )
            }),
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ECHO_CHARS;

    proptest::proptest! {
        #[test]
        fn any_value_is_described_within_the_echo_bound(text in "\\PC{0,200}", number in proptest::num::f64::ANY) {
            let bound = "the string ".len() + ECHO_CHARS * 10 + "\"…\"".len();
            proptest::prop_assert!(describe(&Value::String(text)).chars().count() <= bound);
            proptest::prop_assert!(describe(&Value::from(number)).len() < 40);
        }
    }

    #[test]
    fn echoes_are_clipped_and_escaped() {
        let long = Value::String("x".repeat(10_000));
        assert!(describe(&long).len() < ECHO_CHARS + 20);
        assert_eq!(
            describe(&Value::String("a\"b".into())),
            "the string \"a\\\"b\""
        );
    }
}
