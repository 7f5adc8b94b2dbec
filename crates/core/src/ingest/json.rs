//! Reading a parsed JSON body field by field, each error naming the JSON path of what
//! is wrong with a sentence a person can act on and a clipped echo of the value.
use serde_json::{Map, Value};

use super::IngestError;
use crate::validate::NUL_REASON;

/// The most characters of a value an error echoes.
const ECHO_CHARS: usize = 40;

pub(super) type Object = Map<String, Value>;

pub(super) fn parse(json: &str) -> Result<Value, IngestError> {
    serde_json::from_str(json).map_err(|error| {
        IngestError::new(
            "$",
            format!(
                "is not valid JSON (line {}, column {}); send the body as the provider \
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
        Value::Number(number) => format!("the number {}", clip(&number.to_string())),
        Value::String(text) => format!("the string {}", quoted(text)),
        Value::Array(items) => format!("an array of {}", items.len()),
        Value::Object(_) => "an object".to_string(),
    }
}

/// A text in quotes, clipped to a few dozen characters.
pub(super) fn quoted(text: &str) -> String {
    format!("\"{}\"", clip(text))
}

fn clip(text: &str) -> String {
    match text.char_indices().nth(ECHO_CHARS) {
        Some((end, _)) => format!("{}…", text[..end].escape_debug()),
        None => text.escape_debug().to_string(),
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
pub(super) fn id<'v>(map: &'v Object, key: &str, path: &str) -> Result<&'v str, IngestError> {
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

/// The media type of an image reference: the type a `data:` URI declares, else the one
/// its file extension names, else `image/*` (an image of unknown type).
pub(super) fn image_type(uri: &str) -> String {
    if let Some(rest) = uri.strip_prefix("data:") {
        let declared = rest.split([';', ',']).next().unwrap_or_default();
        if is_media_type(declared) {
            return declared.to_ascii_lowercase();
        }
        return "image/*".to_string();
    }
    let path = uri.split(['?', '#']).next().unwrap_or_default();
    let name = path.rsplit('/').next().unwrap_or_default();
    let extension = name
        .rsplit_once('.')
        .map(|(_, extension)| extension.to_ascii_lowercase());
    match extension.as_deref() {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        _ => "image/*",
    }
    .to_string()
}

fn is_media_type(text: &str) -> bool {
    let Some((kind, sub)) = text.split_once('/') else {
        return false;
    };
    let token = |part: &str| {
        !part.is_empty()
            && part.len() <= 64
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    token(kind) && token(sub)
}

/// Arbitrary JSON values, with the keys the readers look for, for never-panic properties.
#[cfg(test)]
pub(crate) fn arbitrary() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let key = prop_oneof![
        Just("role"),
        Just("content"),
        Just("type"),
        Just("id"),
        Just("call_id"),
        Just("tool_call_id"),
        Just("tool_calls"),
        Just("function"),
        Just("name"),
        Just("arguments"),
        Just("choices"),
        Just("message"),
        Just("usage"),
        Just("output"),
        Just("text"),
        Just("summary"),
        Just("image_url"),
        Just("url"),
        Just("image_url"),
        Just("prompt_tokens"),
        Just("input_tokens"),
        Just("output"),
        Just("x"),
    ];
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

    #[test]
    fn image_types_come_from_data_uris_then_extensions() {
        assert_eq!(image_type("data:image/png;base64,QUJD"), "image/png");
        assert_eq!(image_type("data:IMAGE/JPEG,raw"), "image/jpeg");
        assert_eq!(image_type("data:;base64,QUJD"), "image/*");
        assert_eq!(
            image_type("https://x.test/a/b.JPG?size=2#top"),
            "image/jpeg"
        );
        assert_eq!(image_type("https://x.test/a.webp"), "image/webp");
        assert_eq!(image_type("https://x.test/image"), "image/*");
        assert_eq!(image_type("file_123"), "image/*");
    }

    proptest::proptest! {
        #[test]
        fn any_uri_and_text_is_typed_and_echoed_without_panic(text in "\\PC{0,80}") {
            let mime_type = image_type(&text);
            proptest::prop_assert!(mime_type.starts_with("image/") || mime_type.contains('/'));
            proptest::prop_assert!(quoted(&text).chars().count() <= ECHO_CHARS * 2 + 3);
        }
    }

    #[test]
    fn echoes_are_clipped() {
        let long = Value::String("x".repeat(10_000));
        assert!(describe(&long).len() < 60);
        assert_eq!(
            describe(&Value::String("a\"b".into())),
            "the string \"a\\\"b\""
        );
    }
}
