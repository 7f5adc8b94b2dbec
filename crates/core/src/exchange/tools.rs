//! Tools ctxd adds to a client's request (the recall tools, behind the endpoint): the
//! client's `tools` field with ctxd's definitions after its own, in the provider's shape.
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::{ClientRequest, value};
use crate::format::Format;
use crate::ingest::IngestError;
use crate::render;
use crate::tokenize::ToolDefinition;

/// The request's `tools` field with `added` after the client's own; an error names a
/// client tool whose name starts with `reserved`.
pub fn offering(
    request: &ClientRequest,
    added: &[ToolDefinition],
    reserved: &str,
) -> Result<Box<RawValue>, IngestError> {
    let mut tools = client_tools(request)?;
    check_names(&tools, reserved)?;
    let rendered = render::body(request.provider, "", [], added, 0);
    let rendered: Value = serde_json::from_str(&rendered).unwrap_or(Value::Null);
    let new = rendered["tools"].as_array().cloned().unwrap_or_default();
    match request.provider {
        Format::Gemini => add_declarations(&mut tools, new),
        _ => tools.extend(new),
    }
    RawValue::from_string(Value::Array(tools).to_string())
        .map_err(|_| IngestError::new("$.tools", "could not be extended"))
}

/// An error naming a client tool whose name starts with `reserved`.
pub fn check_reserved(request: &ClientRequest, reserved: &str) -> Result<(), IngestError> {
    check_names(&client_tools(request)?, reserved)
}

fn client_tools(request: &ClientRequest) -> Result<Vec<Value>, IngestError> {
    match request.rest.get("tools").map(|raw| value(raw)) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(tools)) => Ok(tools),
        Some(_) => Err(IngestError::new("$.tools", "is not an array")),
    }
}

fn check_names(tools: &[Value], reserved: &str) -> Result<(), IngestError> {
    match names(tools).find(|(_, name)| name.starts_with(reserved)) {
        Some((path, name)) => Err(IngestError::new(
            path,
            format!(
                "{:?}: names starting {reserved} are ctxd's own tools behind this endpoint",
                name.chars().take(100).collect::<String>()
            ),
        )),
        None => Ok(()),
    }
}

/// Gemini groups function declarations: ctxd's join the client's first group of them.
fn add_declarations(tools: &mut Vec<Value>, new: Vec<Value>) {
    let declarations: Vec<Value> = new
        .iter()
        .filter_map(|group| group["functionDeclarations"].as_array())
        .flatten()
        .cloned()
        .collect();
    for key in ["functionDeclarations", "function_declarations"] {
        if let Some(group) = tools
            .iter_mut()
            .find_map(|tool| tool.get_mut(key).and_then(Value::as_array_mut))
        {
            group.extend(declarations);
            return;
        }
    }
    tools.push(json!({ "functionDeclarations": declarations }));
}

/// Every tool name a `tools` array holds, with its path, in any provider's shape.
fn names(tools: &[Value]) -> impl Iterator<Item = (String, &str)> {
    tools.iter().enumerate().flat_map(|(index, tool)| {
        let mut found = Vec::new();
        let at = |suffix: &str| format!("$.tools[{index}]{suffix}");
        if let Some(name) = tool["name"].as_str() {
            found.push((at(".name"), name));
        }
        for kind in ["function", "custom"] {
            if let Some(name) = tool[kind]["name"].as_str() {
                found.push((at(&format!(".{kind}.name")), name));
            }
        }
        for key in ["functionDeclarations", "function_declarations"] {
            for (inner, declaration) in tool[key].as_array().into_iter().flatten().enumerate() {
                if let Some(name) = declaration["name"].as_str() {
                    found.push((at(&format!(".{key}[{inner}].name")), name));
                }
            }
        }
        found
    })
}
