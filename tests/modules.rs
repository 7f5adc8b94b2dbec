//! No module cycles: in each crate of the workspace, the modules (one per file of its
//! `src/`) depend on each other one way; and the crates themselves depend one way. Reads the sources, no database, no build of the crate needed.
//!
//! The graph is the one `modcycles.py` builds. A file's module is its path under `src/`
//! (`foo/mod.rs` is `foo`, `lib.rs` the root; `main.rs` is the binary's own crate, which
//! reaches the library by `ctxd::`, so it is left out). Its edges are the paths it names:
//!
//! * `crate::a::b`, `super::a`, `self::a` and a declared child's `x::a` (after `mod x;`),
//!   braced `use` groups expanded, each to the longest prefix that is a module's file;
//! * not: a child naming its own ancestors (`use super::Store` in `store/append.rs`: a
//!   module folder is built that way), itself, re-exports (`pub use …;`, a facade rather
//!   than a use), `//` comments, and a `#[cfg(test)] mod … {` block (the rest of the file
//!   from there on);
//! * a parent naming a child's items (`append::RowCache` in `store/mod.rs`) does count;
//!   `mod x;` alone does not.
//!
//! `super` and `self` follow Rust (in `foo/mod.rs`, `super` is the root), where the
//! script takes `foo`; no file here uses either where that differs. A cycle is a
//! strongly connected group of two or more modules; the test names each, with one
//! closed path through it.
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

type Module = Vec<String>;

/// The crate's modules and their files: `(module, file name shown, text)`.
fn read_crate(src: &Path) -> Vec<(Module, String, String)> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read src/") {
            let path = entry.expect("read src/").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(src, &mut files);
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let relative = path.strip_prefix(src).unwrap();
            let shown = format!("src/{}", relative.display()).replace('\\', "/");
            if shown == "src/main.rs" {
                return None;
            }
            let text = std::fs::read_to_string(&path).expect("read a source file");
            Some((module_of(&shown), shown, text))
        })
        .collect()
}

/// `src/store/append.rs` → `store::append`; `src/store/mod.rs` → `store`; `src/lib.rs` → root.
fn module_of(file: &str) -> Module {
    let mut segments: Module = file
        .trim_start_matches("src/")
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if matches!(
        segments.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        segments.pop();
    }
    segments
}

/// The text that counts: up to a `#[cfg(test)] mod … {` block, without `//` comments
/// and without `pub use …;` re-exports.
fn counted_text(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut kept = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim() == "#[cfg(test)]" {
            let next = lines[i + 1..]
                .iter()
                .map(|l| l.trim())
                .find(|l| !l.is_empty());
            if let Some(next) = next {
                let declared = next
                    .strip_prefix("pub ")
                    .or_else(|| next.strip_prefix("pub(crate) "))
                    .or_else(|| next.strip_prefix("pub(super) "))
                    .unwrap_or(next);
                if declared.starts_with("mod ") && declared.ends_with('{') {
                    break;
                }
            }
        }
        kept.push(line.split("//").next().unwrap_or(""));
    }
    let text = kept.join("\n");
    // Drop `pub use …;` and `pub(…) use …;`.
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = find_word(rest, "pub") {
        let after = &rest[at + 3..];
        let after_vis = match after.strip_prefix('(') {
            Some(inner) => match inner.find(')') {
                Some(close) if inner[..close].chars().all(|c| c.is_ascii_lowercase()) => {
                    &inner[close + 1..]
                }
                _ => after,
            },
            None => after,
        };
        let trimmed = after_vis.trim_start();
        let is_use = trimmed.len() < after_vis.len()
            && trimmed.starts_with("use")
            && trimmed[3..].starts_with(char::is_whitespace);
        if is_use && let Some(end) = trimmed.find(';') {
            out.push_str(&rest[..at]);
            rest = &trimmed[end + 1..];
        } else {
            out.push_str(&rest[..at + 3]);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The first `word` in `text` not inside a longer identifier.
fn find_word(text: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = text[from..].find(word) {
        let at = from + found;
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        if !before.is_some_and(is_ident_char) && !after.is_some_and(is_ident_char) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// The paths a path expression starting at `text` names (`a::{b, c::d}` → `a::b`, `a::c::d`),
/// each as segments; globs and `as` renames dropped.
fn expand(text: &str) -> Vec<Module> {
    fn ident(text: &str) -> (&str, &str) {
        let end = text.find(|c: char| !is_ident_char(c)).unwrap_or(text.len());
        (&text[..end], &text[end..])
    }
    // Parses one tree at `text`; returns the paths and the rest.
    fn tree<'a>(text: &'a str, prefix: &Module, out: &mut Vec<Module>) -> &'a str {
        let mut path = prefix.clone();
        let mut rest = text.trim_start();
        loop {
            if let Some(group) = rest.strip_prefix('{') {
                let mut inner = group;
                loop {
                    inner = tree(inner, &path, out).trim_start();
                    match inner.strip_prefix(',').map(str::trim_start) {
                        // A trailing comma.
                        Some(next) if next.starts_with('}') => return &next[1..],
                        Some(next) => inner = next,
                        None => return inner.strip_prefix('}').unwrap_or(inner),
                    }
                }
            }
            if let Some(glob) = rest.strip_prefix('*') {
                out.push(path);
                return glob;
            }
            let (segment, after) = ident(rest);
            if segment.is_empty() {
                out.push(path);
                return rest;
            }
            if segment != "self" {
                path.push(segment.to_string());
            }
            let after_ws = after.trim_start();
            match after_ws.strip_prefix("::") {
                Some(next) => rest = next.trim_start(),
                None => {
                    out.push(path);
                    // `x as y`: the rename is not a path.
                    return match after_ws.strip_prefix("as ") {
                        Some(renamed) => ident(renamed.trim_start()).1,
                        None => after,
                    };
                }
            }
        }
    }
    let mut out = Vec::new();
    tree(text, &Vec::new(), &mut out);
    out
}

/// The modules `text` (the file of `own`) names, absolute, before resolving to files.
fn named_paths(own: &Module, text: &str) -> Vec<Module> {
    let text = counted_text(text);
    let children: BTreeSet<String> = text
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let line = ["pub ", "pub(crate) ", "pub(super) "]
                .iter()
                .find_map(|p| line.strip_prefix(p))
                .unwrap_or(line);
            let name = line.strip_prefix("mod ")?.strip_suffix(';')?.trim();
            name.chars().all(is_ident_char).then(|| name.to_string())
        })
        .collect();
    let mut found = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        let (word_len, _) = rest
            .char_indices()
            .find(|(_, c)| !is_ident_char(*c))
            .map_or((rest.len(), ()), |(i, _)| (i, ()));
        let previous = text[..at].chars().next_back();
        let starts_path = word_len > 0
            && rest[word_len..].starts_with("::")
            && !previous.is_some_and(|c| is_ident_char(c) || c == ':');
        if starts_path {
            let word = &rest[..word_len];
            let base: Option<Module> = match word {
                "crate" => Some(Vec::new()),
                "self" => Some(own.clone()),
                "super" => Some(own[..own.len().saturating_sub(1)].to_vec()),
                child if children.contains(child) => {
                    let mut base = own.clone();
                    base.push(child.to_string());
                    Some(base)
                }
                _ => None,
            };
            if let Some(mut base) = base {
                let mut tail = &rest[word_len + 2..];
                // `super::super::x`
                while let Some(next) = tail.strip_prefix("super::").filter(|_| word == "super") {
                    base.pop();
                    tail = next;
                }
                for path in expand(tail) {
                    let mut full = base.clone();
                    full.extend(path);
                    found.push(full);
                }
            }
            at += word_len + 2;
        } else {
            at += rest.chars().next().map_or(1, char::len_utf8).max(word_len);
        }
    }
    found
}

/// Edges between files: `file → files it depends on`, by the rules above.
fn graph(files: &[(Module, String, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let by_module: HashMap<&Module, &String> = files.iter().map(|(m, f, _)| (m, f)).collect();
    let mut graph = BTreeMap::new();
    for (own, file, text) in files {
        let mut targets = BTreeSet::new();
        for path in named_paths(own, text) {
            let target = (0..=path.len())
                .rev()
                .find(|n| by_module.contains_key(&path[..*n].to_vec()))
                .map(|n| path[..n].to_vec());
            if let Some(target) = target
                && target != *own
                && !own.starts_with(&target)
            {
                targets.insert(by_module[&target].clone());
            }
        }
        graph.insert(file.clone(), targets);
    }
    graph
}

/// Each cycle: a strongly connected group of two or more files, with one closed path
/// through its first file, e.g. `src/a.rs → src/b.rs → src/a.rs`.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    // Tarjan's algorithm; the graph is small, so recursion is fine.
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: HashMap<&'a str, usize>,
        low: HashMap<&'a str, usize>,
        stack: Vec<&'a str>,
        groups: Vec<Vec<&'a str>>,
    }
    fn strong<'a>(state: &mut State<'a>, v: &'a str) {
        let i = state.index.len();
        state.index.insert(v, i);
        state.low.insert(v, i);
        state.stack.push(v);
        for w in state.graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !state.index.contains_key(w) {
                strong(state, w);
                let low = state.low[v].min(state.low[w]);
                state.low.insert(v, low);
            } else if state.stack.contains(&w) {
                let low = state.low[v].min(state.index[w]);
                state.low.insert(v, low);
            }
        }
        if state.low[v] == state.index[v] {
            let at = state.stack.iter().rposition(|x| *x == v).unwrap();
            let mut group = state.stack.split_off(at);
            if group.len() > 1 {
                group.sort();
                state.groups.push(group);
            }
        }
    }
    let mut state = State {
        graph,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        groups: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v.as_str()) {
            strong(&mut state, v);
        }
    }
    let mut groups = state.groups;
    groups.sort();
    groups
        .iter()
        .map(|group| {
            format!(
                "{} (for one: {})",
                group.join(" <-> "),
                closed_path(graph, group).join(" → ")
            )
        })
        .collect()
}

/// The shortest path from the group's first file back to it, inside the group.
fn closed_path(graph: &BTreeMap<String, BTreeSet<String>>, group: &[&str]) -> Vec<String> {
    let start = group[0];
    let mut came_from: HashMap<&str, &str> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for w in graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !group.contains(&w) {
                continue;
            }
            if w == start {
                let mut path = vec![start.to_string()];
                let mut at = v;
                while at != start {
                    path.push(at.to_string());
                    at = came_from[at];
                }
                path.push(start.to_string());
                path.reverse();
                return path;
            }
            if !came_from.contains_key(w) {
                came_from.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    unreachable!("a strongly connected group has a closed path")
}

/// Each crate of the workspace: its folder, and a file that must be read (so a move of
/// the sources cannot leave the test reading nothing).
const CRATES: &[(&str, &str)] = &[
    ("crates/core/src", "src/budget.rs"),
    ("crates/server/src", "src/store/append.rs"),
    ("crates/tools/src", "src/replay.rs"),
    ("crates/localpg/src", "src/spawn.rs"),
    ("src", "src/lib.rs"),
];

#[test]
fn no_crate_has_module_cycles() {
    for (folder, known) in CRATES {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
        let files = read_crate(&src);
        assert!(
            files.iter().any(|(_, f, _)| f == known),
            "read the sources of {folder}"
        );
        let found = cycles(&graph(&files));
        assert!(
            found.is_empty(),
            "module cycles in {folder} (see docs/architecture.md: dependencies point one way):\n{}",
            found.join("\n")
        );
    }
}

/// A file's room: the top-level module it belongs to (`src/store/batch/mod.rs` and
/// `src/store.rs` alike → `store`); `src/lib.rs` is the crate's root.
fn room(file: &str) -> String {
    let inner = file.trim_start_matches("src/");
    let top = inner.split('/').next().unwrap_or(inner);
    top.trim_end_matches(".rs").to_string()
}

/// The file graph collapsed to rooms: an edge between two rooms when a file of one
/// names a file of the other.
fn rooms(graph: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, BTreeSet<String>> {
    let mut rooms: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, targets) in graph {
        let from = room(file);
        let edges = rooms.entry(from.clone()).or_default();
        edges.extend(targets.iter().map(|t| room(t)).filter(|to| *to != from));
    }
    rooms
}

/// No loop between folders either (one the file graph cannot show: `store/x.rs` naming
/// `events/y.rs` while `events/z.rs` names `store/w.rs`).
#[test]
fn no_crate_has_folder_cycles() {
    for (folder, _) in CRATES {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
        let found = cycles(&rooms(&graph(&read_crate(&src))));
        assert!(
            found.is_empty(),
            "cycles between the folders of {folder}:\n{}",
            found.join("\n")
        );
    }
    // The check itself: two folders that name each other through different files.
    let files = synthetic(&[
        ("src/lib.rs", "pub mod store;\npub mod events;\n"),
        ("src/store/mod.rs", "mod x;\n"),
        ("src/store/x.rs", "use crate::events::y::Y;\n"),
        ("src/events/mod.rs", "pub mod y;\npub mod z;\n"),
        ("src/events/y.rs", "pub struct Y;\n"),
        ("src/events/z.rs", "use crate::store::x;\n"),
    ]);
    assert!(cycles(&graph(&files)).is_empty(), "no file cycle");
    assert_eq!(cycles(&rooms(&graph(&files))).len(), 1, "a folder cycle");
}

/// The crates depend on each other one way: the binary on the tools, the tools on the
/// server, the server on the core and the launcher; the core and the launcher on no
/// other crate of ctxd.
#[test]
fn the_crates_depend_one_way() {
    let reaches = |package: &str, other: &str| dependency_tree(package).contains(other);
    for (package, below) in [
        (
            "ctxd-core",
            &["ctxd-localpg", "ctxd-server", "ctxd-tools"][..],
        ),
        (
            "ctxd-localpg",
            &["ctxd-core", "ctxd-server", "ctxd-tools"][..],
        ),
        ("ctxd-server", &["ctxd-tools"][..]),
    ] {
        for other in below {
            assert!(!reaches(package, other), "{package} depends on {other}");
        }
    }
    assert!(reaches("ctxd-tools", "ctxd-server"), "read the tree");
    assert!(reaches("ctxd", "ctxd-tools"), "read the tree");
}

/// Crates that do I/O (network, database, async runtime, processes): none may reach the
/// core, directly or through another dependency.
const IO_CRATES: &[&str] = &[
    "tonic",
    "sqlx",
    "sqlx-core",
    "sqlx-postgres",
    "tokio",
    "reqwest",
    "hyper",
    "h2",
    "mio",
    "socket2",
    "tower",
    "async-std",
    "smol",
    "libc",
    "opentelemetry",
    "tracing",
];

/// The crates in a package's dependency tree (normal and build dependencies), by name.
fn dependency_tree(package: &str) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = std::process::Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            "normal,build",
            "--prefix",
            "none",
        ])
        .args(["--format", "{p}", "-p", package])
        .output()
        .expect("run cargo tree");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("cargo tree prints UTF-8")
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// The first of `forbidden` in `tree`, if any.
fn forbidden_in<'a>(tree: &BTreeSet<String>, forbidden: &[&'a str]) -> Vec<&'a str> {
    forbidden
        .iter()
        .copied()
        .filter(|name| tree.contains(*name))
        .collect()
}

#[test]
fn the_core_depends_on_no_io_crate() {
    let core = dependency_tree("ctxd-core");
    assert!(
        core.contains("ctxd-core") && core.contains("serde"),
        "{core:?}"
    );
    let found = forbidden_in(&core, IO_CRATES);
    assert!(
        found.is_empty(),
        "crates/core must stay pure, but its dependency tree holds {found:?}"
    );
    // The check itself: the service's own tree holds them.
    let service = dependency_tree("ctxd");
    assert!(
        forbidden_in(&service, IO_CRATES).len() >= 5,
        "the service's tree should show what the check looks for: {service:?}"
    );
}

/// The rules, on a small crate made up for the purpose.
fn synthetic(files: &[(&str, &str)]) -> Vec<(Module, String, String)> {
    files
        .iter()
        .map(|(file, text)| (module_of(file), file.to_string(), text.to_string()))
        .collect()
}

#[test]
fn a_cycle_is_found_and_named() {
    let files = synthetic(&[
        ("src/lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        ("src/a.rs", "use crate::b::B;\npub struct A;\n"),
        ("src/b.rs", "pub struct B(crate::c::C);\n"),
        ("src/c.rs", "use crate::{a::A, b};\npub struct C;\n"),
    ]);
    assert_eq!(
        cycles(&graph(&files)),
        vec![
            "src/a.rs <-> src/b.rs <-> src/c.rs (for one: src/a.rs → src/b.rs → src/c.rs → src/a.rs)"
                .to_string()
        ]
    );
}

#[test]
fn what_is_not_an_edge() {
    let files = synthetic(&[
        ("src/lib.rs", "pub mod store;\npub mod engine;\n"),
        (
            "src/store/mod.rs",
            // A parent using its children, a facade re-export, a comment.
            "mod append;\nmod rows;\npub use rows::Row;\n// crate::engine::Engine\n\
             pub struct Store(append::Cache);\n",
        ),
        // Children using their parent and each other one way.
        ("src/store/rows.rs", "use super::Store;\npub struct Row;\n"),
        (
            "src/store/append.rs",
            "use super::{Store, rows::Row};\npub struct Cache;\n\
             #[cfg(test)]\nmod tests {\n    use crate::engine::Engine;\n}\n",
        ),
        ("src/engine/mod.rs", "use crate::store::Store;\n"),
    ]);
    let graph = graph(&files);
    assert!(cycles(&graph).is_empty(), "{graph:?}");
    let edges = |file: &str| graph[file].iter().cloned().collect::<Vec<_>>();
    assert_eq!(
        edges("src/store/mod.rs"),
        vec!["src/store/append.rs".to_string()]
    );
    assert_eq!(
        edges("src/store/append.rs"),
        vec!["src/store/rows.rs".to_string()]
    );
    assert!(edges("src/store/rows.rs").is_empty());
    assert_eq!(
        edges("src/engine/mod.rs"),
        vec!["src/store/mod.rs".to_string()]
    );
}

#[test]
fn a_child_and_its_parent_can_still_make_a_cycle_through_a_third_module() {
    let files = synthetic(&[
        ("src/lib.rs", "pub mod store;\npub mod events;\n"),
        (
            "src/store/mod.rs",
            "mod jobs;\npub struct Store(jobs::Job);\n",
        ),
        (
            "src/store/jobs.rs",
            "use crate::events::Detail;\npub struct Job;\n",
        ),
        (
            "src/events.rs",
            "use crate::store::Store;\npub struct Detail;\n",
        ),
    ]);
    assert_eq!(
        cycles(&graph(&files)),
        vec![
            "src/events.rs <-> src/store/jobs.rs <-> src/store/mod.rs \
             (for one: src/events.rs → src/store/mod.rs → src/store/jobs.rs → src/events.rs)"
                .to_string()
        ]
    );
}
