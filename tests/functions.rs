//! No function over 100 lines in the service's and the core's non-test code: a function
//! a newcomer reads at once. Reads the sources (no build needed). A function's length
//! runs from its `fn` line to its closing brace, found by matching braces in the text
//! with comments, strings and character literals blanked; test code (`tests.rs`,
//! `*_tests.rs`, a `#[cfg(test)] mod … {` block) and generated code (`crates/server/src/pb/`'s
//! included files live in the build directory) are left out.
use std::path::{Path, PathBuf};

const LIMIT: usize = 100;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read a source folder") {
        let path = entry.expect("read a source folder").path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if name != "tests" {
                sources(&path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
            out.push(path);
        }
    }
}

/// `text` with comments, strings and character literals turned to spaces (newlines
/// kept), so that braces in them do not count.
fn blank(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let clear = |out: &mut Vec<u8>, from: usize, to: usize| {
        for byte in &mut out[from..to.min(bytes.len())] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    };
    while i < bytes.len() {
        let rest = &bytes[i..];
        let end = if rest.starts_with(b"//") {
            i + rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len())
        } else if rest.starts_with(b"/*") {
            i + 2 + find(&rest[2..], b"*/").map_or(rest.len(), |at| at + 2)
        } else if let Some(hashes) = raw_string_start(bytes, i) {
            let close: Vec<u8> = std::iter::once(b'"').chain(vec![b'#'; hashes]).collect();
            let open = i + 2 + hashes;
            open + find(&bytes[open..], &close).map_or(bytes.len(), |at| at + close.len())
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            i + j + 1
        } else if rest[0] == b'\'' {
            char_literal(rest).map_or(i + 1, |len| i + len)
        } else {
            i += 1;
            continue;
        };
        if !(rest[0] == b'\'' && end == i + 1) {
            clear(&mut out, i, end);
        }
        i = end;
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// `r"` or `r#…"` at `i` (not inside an identifier): its number of `#`.
fn raw_string_start(bytes: &[u8], i: usize) -> Option<usize> {
    if bytes[i] != b'r' || (i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'))
    {
        return None;
    }
    let hashes = bytes[i + 1..].iter().take_while(|&&b| b == b'#').count();
    (bytes.get(i + 1 + hashes) == Some(&b'"')).then_some(hashes)
}

/// The length of a character literal at the start of `rest` (a lifetime is none).
fn char_literal(rest: &[u8]) -> Option<usize> {
    if rest.get(1) == Some(&b'\\') {
        let close = rest[2..].iter().take(12).position(|&b| b == b'\'')?;
        return Some(close + 3);
    }
    let width = std::str::from_utf8(&rest[1..rest.len().min(5)])
        .ok()
        .or_else(|| std::str::from_utf8(&rest[1..rest.len().min(2)]).ok())
        .and_then(|s| s.chars().next())
        .map_or(1, char::len_utf8);
    (rest.get(1 + width) == Some(&b'\'')).then_some(width + 2)
}

/// Where `#[cfg(test)] mod … {` blocks start: the rest of the file is test code.
fn test_start(text: &[u8]) -> usize {
    let text = String::from_utf8_lossy(text);
    let mut at = 0;
    while let Some(found) = text[at..].find("#[cfg(test)]") {
        let after = &text[at + found + 12..];
        let head: String = after.trim_start().chars().take(40).collect();
        if head.starts_with("mod ")
            || head.starts_with("pub mod ")
            || head.starts_with("pub(crate) mod ")
        {
            return at + found;
        }
        at += found + 12;
    }
    text.len()
}

/// Each function's (first line, length in lines, name) in `text`.
fn functions(text: &str) -> Vec<(usize, usize, String)> {
    let blanked = blank(text);
    let end = test_start(&blanked);
    let code = &blanked[..end];
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = find(&code[at..], b"fn ") {
        let start = at + found;
        at = start + 3;
        if start > 0 && (code[start - 1].is_ascii_alphanumeric() || code[start - 1] == b'_') {
            continue;
        }
        let name: String = code[at..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .map(|&b| char::from(b))
            .collect();
        if name.is_empty() {
            continue;
        }
        let Some(close) = body_end(code, at) else {
            continue;
        };
        let line = |offset: usize| code[..offset].iter().filter(|&&b| b == b'\n').count() + 1;
        out.push((line(start), line(close) - line(start) + 1, name));
    }
    out
}

/// The offset of the closing brace of the body of the function whose signature starts
/// at `from`; none for a declaration without a body.
fn body_end(code: &[u8], from: usize) -> Option<usize> {
    let mut nesting = 0i32;
    let mut open = None;
    for (offset, &byte) in code.iter().enumerate().skip(from) {
        match byte {
            b'(' | b'<' | b'[' => nesting += 1,
            b')' | b'>' | b']' => nesting -= 1,
            b';' if nesting <= 0 => return None,
            b'{' if nesting <= 0 => {
                open = Some(offset);
                break;
            }
            _ => {}
        }
    }
    let mut depth = 0;
    for (offset, &byte) in code.iter().enumerate().skip(open?) {
        match byte {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(offset);
                }
            }
            _ => {}
        }
    }
    None
}

#[test]
fn no_function_is_over_100_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    sources(&root.join("crates"), &mut files);
    let mut long = Vec::new();
    let mut count = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read a source file");
        for (line, length, name) in functions(&text) {
            count += 1;
            if length > LIMIT {
                let shown = file.strip_prefix(root).unwrap().display();
                long.push(format!("{shown}:{line} {name}: {length} lines"));
            }
        }
    }
    assert!(count > 1000, "the scan found only {count} functions");
    assert!(
        long.is_empty(),
        "functions over {LIMIT} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn a_long_function_is_found_and_strings_do_not_count() {
    let body = "    let x = 1;\n".repeat(120);
    let text = format!(
        "fn short() {{ let s = \"}} {{ fn fake() {{\"; let c = '{{'; }}\n// fn commented() {{\nfn long<'a>(a: &'a str) -> Vec<u8> {{\n{body}}}\nfn declared(x: u8);\n#[cfg(test)]\nmod tests {{ fn huge() {{\n{body}}} }}\n"
    );
    let found = functions(&text);
    let names: Vec<(&str, usize)> = found
        .iter()
        .map(|(_, n, name)| (name.as_str(), *n))
        .collect();
    assert_eq!(names, [("short", 1), ("long", 122)]);
}
