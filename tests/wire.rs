//! The wire format does not break by accident. Every message field (number, type,
//! label), enum value and RPC of proto/ as it is compiled into the server is written as
//! one line; proto/wire.txt holds the lines of the last recorded surface. A line there
//! that the proto no longer has — a field removed, renumbered or retyped, an enum value
//! or an RPC gone or changed — fails, unless proto/BREAKING.md names it (a recorded
//! break, with its reason). Lines the proto gained fail too until they are recorded, so
//! the file always holds the whole surface:
//! `CTXD_WIRE_RECORD=1 cargo test --test wire` writes it.
use std::collections::BTreeSet;
use std::path::Path;

use prost::Message as _;
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FileDescriptorSet};

/// The wire surface of the compiled proto, one sorted line per item.
fn surface() -> BTreeSet<String> {
    let set = FileDescriptorSet::decode(ctxd::pb::FILE_DESCRIPTOR_SET).expect("the descriptor set");
    let mut lines = BTreeSet::new();
    for file in &set.file {
        let package = file.package();
        for message in &file.message_type {
            describe_message(
                &format!("{package}.{}", message.name()),
                message,
                &mut lines,
            );
        }
        for enumeration in &file.enum_type {
            describe_enum(
                &format!("{package}.{}", enumeration.name()),
                enumeration,
                &mut lines,
            );
        }
        for service in &file.service {
            for method in &service.method {
                lines.insert(format!(
                    "rpc {package}.{}.{}({}{}) returns ({}{})",
                    service.name(),
                    method.name(),
                    if method.client_streaming() {
                        "stream "
                    } else {
                        ""
                    },
                    method.input_type().trim_start_matches('.'),
                    if method.server_streaming() {
                        "stream "
                    } else {
                        ""
                    },
                    method.output_type().trim_start_matches('.'),
                ));
            }
        }
    }
    lines
}

fn describe_message(name: &str, message: &DescriptorProto, lines: &mut BTreeSet<String>) {
    for field in &message.field {
        let label = match field.label() {
            Label::Repeated => "repeated ",
            _ if field.proto3_optional() => "optional ",
            _ => "",
        };
        let kind = match field.r#type() {
            Type::Message | Type::Enum => field.type_name().trim_start_matches('.').to_string(),
            other => other
                .as_str_name()
                .trim_start_matches("TYPE_")
                .to_lowercase(),
        };
        let oneof = match field.oneof_index {
            Some(index) if !field.proto3_optional() => {
                format!(" in oneof {}", message.oneof_decl[index as usize].name())
            }
            _ => String::new(),
        };
        lines.insert(format!(
            "field {name}.{} = {}: {label}{kind}{oneof}",
            field.name(),
            field.number()
        ));
    }
    // Nested messages, map entries among them (a map field's key and value types).
    for nested in &message.nested_type {
        describe_message(&format!("{name}.{}", nested.name()), nested, lines);
    }
    for enumeration in &message.enum_type {
        describe_enum(
            &format!("{name}.{}", enumeration.name()),
            enumeration,
            lines,
        );
    }
}

fn describe_enum(
    name: &str,
    enumeration: &prost_types::EnumDescriptorProto,
    lines: &mut BTreeSet<String>,
) {
    for value in &enumeration.value {
        lines.insert(format!("enum {name}.{} = {}", value.name(), value.number()));
    }
}

/// The lines proto/BREAKING.md names (each in backticks at the start of a list item).
fn recorded_breaks(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("- `"))
        .filter_map(|rest| rest.split('`').next())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_wire_format_keeps_every_recorded_field_enum_value_and_rpc() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let now = surface();
    let path = root.join("proto/wire.txt");
    if std::env::var_os("CTXD_WIRE_RECORD").is_some() {
        let text: String = now.iter().map(|line| format!("{line}\n")).collect();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let recorded: BTreeSet<String> = std::fs::read_to_string(&path)
        .expect("proto/wire.txt")
        .lines()
        .map(str::to_string)
        .collect();
    let breaks = recorded_breaks(&std::fs::read_to_string(root.join("proto/BREAKING.md")).unwrap());
    let broken: Vec<&String> = recorded
        .difference(&now)
        .filter(|line| !breaks.contains(*line))
        .collect();
    assert!(
        broken.is_empty(),
        "the wire format lost what clients may rely on (record a deliberate break in proto/BREAKING.md):\n{}",
        broken
            .iter()
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    let added: Vec<&String> = now.difference(&recorded).collect();
    assert!(
        added.is_empty(),
        "proto/ has items proto/wire.txt does not record; record them with `CTXD_WIRE_RECORD=1 cargo test --test wire`:\n{}",
        added
            .iter()
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn a_removed_or_renumbered_field_is_not_in_the_surface() {
    let now = surface();
    assert!(now.contains("field ctxd.v1.AppendTurnRequest.session_id = 1: string"));
    assert!(!now.contains("field ctxd.v1.AppendTurnRequest.session_id = 2: string"));
    assert!(
        now.iter()
            .any(|line| line.starts_with("rpc ctxd.v1.ContextService.ListSessions("))
    );
    let breaks = recorded_breaks("- `field a.B.c = 1: string` — why\n- not a break\n");
    assert_eq!(
        breaks.into_iter().collect::<Vec<_>>(),
        ["field a.B.c = 1: string"]
    );
}
