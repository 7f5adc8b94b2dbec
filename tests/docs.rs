//! The README and the architecture document name only files that exist: every path they
//! mention (`src/…`, `crates/…`, `docs/…`, or a bare `name.rs` / `name.sql`) is the end of
//! some file's path in the repository. Reads the files; builds nothing.
use std::path::{Path, PathBuf};

/// Every file of the repository (not build output, dependencies or version control),
/// as `/`-separated paths relative to its root.
fn repository_files(root: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("read a directory") {
            let path: PathBuf = entry.expect("read a directory entry").path();
            let name = path.file_name().unwrap().to_string_lossy();
            if matches!(name.as_ref(), "target" | "node_modules" | ".git" | ".ctxd") {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let relative = path.strip_prefix(root).unwrap();
                out.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}

/// The file-like names in `text`: runs of path characters ending in a source, SQL,
/// Markdown, manifest or script extension.
fn named_files(text: &str) -> Vec<String> {
    const EXTENSIONS: [&str; 8] = [
        ".rs", ".sql", ".md", ".toml", ".yml", ".proto", ".py", ".sh",
    ];
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '-' | '.');
    let mut names = Vec::new();
    for word in text.split(|c: char| !is_path_char(c)) {
        let word = word.trim_matches('.');
        // A URL's path (after "https:"), a hidden file or an extension alone.
        if word.starts_with("//") || word.starts_with('.') {
            continue;
        }
        if EXTENSIONS.iter().any(|ext| word.ends_with(ext)) && word.len() > 3 {
            names.push(word.to_string());
        }
    }
    names
}

/// Files the documents name that are a user's, or a pattern of names, not the
/// repository's.
const USERS_FILES: [&str; 2] = ["ctxd.toml", "NNNN_contract_MMMM_what.sql"];

/// Whether `name` is a file of the repository: the end of some file's path, at a `/`.
fn exists(files: &[String], name: &str) -> bool {
    let name = name.trim_start_matches("./").trim_start_matches('/');
    if USERS_FILES.contains(&name) {
        return true;
    }
    files
        .iter()
        .any(|file| file == name || file.ends_with(&format!("/{name}")))
}

/// The README and the documents it sends a reader to.
const DOCS: [&str; 9] = [
    "README.md",
    "docs/architecture.md",
    "docs/api.md",
    "docs/compaction.md",
    "docs/configuration.md",
    "docs/development.md",
    "docs/endpoint.md",
    "docs/glossary.md",
    "docs/operations.md",
];

/// The relative links of a Markdown text: (path, anchor), either possibly empty.
fn links(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for piece in text.split("](").skip(1) {
        let Some(target) = piece.split(')').next() else {
            continue;
        };
        if target.contains("://") || target.starts_with("mailto:") || target.contains(' ') {
            continue;
        }
        let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
        out.push((path.to_string(), anchor.to_string()));
    }
    out
}

/// The anchors a Markdown text's headings get (GitHub's rule: lower case, spaces to
/// hyphens, other punctuation dropped).
fn anchors(text: &str) -> Vec<String> {
    text.lines()
        .filter(|line| line.starts_with('#'))
        .map(|line| {
            line.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

#[test]
fn every_link_of_the_docs_finds_its_file_and_heading() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut broken = Vec::new();
    for doc in DOCS {
        let text = std::fs::read_to_string(root.join(doc)).expect("read a document");
        let dir = root.join(doc).parent().unwrap().to_path_buf();
        for (path, anchor) in links(&text) {
            let target = if path.is_empty() {
                root.join(doc)
            } else {
                dir.join(&path)
            };
            if !target.exists() {
                broken.push(format!("{doc}: {path}"));
                continue;
            }
            if !anchor.is_empty() {
                let headings = std::fs::read_to_string(&target).unwrap_or_default();
                if !anchors(&headings).contains(&anchor) {
                    broken.push(format!("{doc}: {path}#{anchor}"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_and_the_docs_name_only_files_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = repository_files(root);
    assert!(
        exists(&files, "crates/core/src/budget.rs"),
        "read the repository"
    );
    let mut missing = Vec::new();
    for doc in DOCS {
        let text = std::fs::read_to_string(root.join(doc)).expect("read a document");
        for name in named_files(&text) {
            if !exists(&files, &name) {
                missing.push(format!("{doc}: {name}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "documents name files that do not exist:\n{}",
        missing.join("\n")
    );
}

/// The README's TypeScript agent loop is the example the TypeScript client's tests
/// type-check, word for word.
#[test]
fn the_readmes_typescript_loop_is_the_checked_example() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let example =
        std::fs::read_to_string(root.join("clients/typescript/examples/agent-loop.ts")).unwrap();
    let block = readme
        .split("```ts\n")
        .nth(1)
        .and_then(|rest| rest.split("```\n").next())
        .expect("a TypeScript block in the README");
    assert_eq!(
        block, example,
        "README.md's TypeScript loop differs from the example"
    );
}

#[test]
fn a_missing_file_is_found() {
    let files = vec!["src/store/append.rs".to_string(), "README.md".to_string()];
    assert!(exists(&files, "append.rs"));
    assert!(exists(&files, "store/append.rs"));
    assert!(!exists(&files, "pend.rs"));
    assert!(!exists(&files, "src/writer.rs"));
    assert_eq!(
        named_files("see `src/writer.rs`, sql/jobs/*.sql and https://x.io/a.md."),
        vec!["src/writer.rs".to_string()]
    );
}
