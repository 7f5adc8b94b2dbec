//! Measures the candidate tokenizer crates for ctxd: see ../0001-tokenizer.md.
//!
//! Reproduce (from this folder):
//!   CARGO_TARGET_DIR=/tmp/tokbench-target cargo build --release --bins
//!   CARGO_TARGET_DIR=/tmp/tokbench-target cargo run --release
//!
//! The first command also builds the `size-*` binaries used for the binary-size
//! estimate. The corpus is read from ../../../../shared/corpus/swe-trajectories
//! (override with TOKBENCH_CORPUS=DIR). Timings are the best of several runs
//! (the figures of interest were taken on a busy 2-core machine).
//!
//! Modes used internally (the program re-executes itself so that each lazy
//! static is built in a fresh process and so that a run that hangs on a
//! pathological input can be killed at 60 s):
//!   --startup CRATE ENC
//!   --patho CRATE ENC KIND BYTES

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------
// The candidates
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Crate {
    BpeOpenai,
    TiktokenRs,
    Tiktoken,
}

impl Crate {
    const ALL: [Crate; 3] = [Crate::BpeOpenai, Crate::TiktokenRs, Crate::Tiktoken];
    fn name(self) -> &'static str {
        match self {
            Crate::BpeOpenai => "bpe-openai",
            Crate::TiktokenRs => "tiktoken-rs",
            Crate::Tiktoken => "tiktoken",
        }
    }
    fn parse(s: &str) -> Crate {
        Crate::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .expect("crate name")
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Enc {
    O200k,
    Cl100k,
}

impl Enc {
    const ALL: [Enc; 2] = [Enc::O200k, Enc::Cl100k];
    fn name(self) -> &'static str {
        match self {
            Enc::O200k => "o200k_base",
            Enc::Cl100k => "cl100k_base",
        }
    }
    fn parse(s: &str) -> Enc {
        Enc::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .expect("encoding name")
    }
}

// Compile-time proof that every tokenizer can be shared across threads as a
// &'static reference.
#[allow(dead_code)]
fn assert_static_send_sync() {
    fn check<T: Send + Sync + ?Sized>(_: &'static T) {}
    check::<bpe_openai::Tokenizer>(bpe_openai::o200k_base());
    check::<bpe_openai::Tokenizer>(bpe_openai::cl100k_base());
    check::<tiktoken_rs::CoreBPE>(tiktoken_rs::o200k_base_singleton());
    check::<tiktoken_rs::CoreBPE>(tiktoken_rs::cl100k_base_singleton());
    check::<tiktoken::CoreBpe>(tiktoken::get_encoding("o200k_base").unwrap());
    check::<tiktoken::CoreBpe>(tiktoken::get_encoding("cl100k_base").unwrap());
}

/// Builds (or fetches) the tokenizer; the first call per process pays the vocabulary load.
fn construct(c: Crate, e: Enc) {
    match (c, e) {
        (Crate::BpeOpenai, Enc::O200k) => drop(bpe_openai::o200k_base()),
        (Crate::BpeOpenai, Enc::Cl100k) => drop(bpe_openai::cl100k_base()),
        (Crate::TiktokenRs, Enc::O200k) => drop(tiktoken_rs::o200k_base_singleton()),
        (Crate::TiktokenRs, Enc::Cl100k) => drop(tiktoken_rs::cl100k_base_singleton()),
        (Crate::Tiktoken, Enc::O200k) => drop(tiktoken::get_encoding("o200k_base").unwrap()),
        (Crate::Tiktoken, Enc::Cl100k) => drop(tiktoken::get_encoding("cl100k_base").unwrap()),
    }
}

/// The counting call each crate offers for plain text (special-token text such as
/// "<|endoftext|>" is counted as ordinary text, as ctxd must do for untrusted content).
#[inline]
fn count(c: Crate, e: Enc, s: &str) -> usize {
    match (c, e) {
        (Crate::BpeOpenai, Enc::O200k) => bpe_openai::o200k_base().count(s),
        (Crate::BpeOpenai, Enc::Cl100k) => bpe_openai::cl100k_base().count(s),
        (Crate::TiktokenRs, Enc::O200k) => tiktoken_rs::o200k_base_singleton().count_ordinary(s),
        (Crate::TiktokenRs, Enc::Cl100k) => tiktoken_rs::cl100k_base_singleton().count_ordinary(s),
        (Crate::Tiktoken, Enc::O200k) => tiktoken::get_encoding("o200k_base").unwrap().count(s),
        (Crate::Tiktoken, Enc::Cl100k) => tiktoken::get_encoding("cl100k_base").unwrap().count(s),
    }
}

fn encode(c: Crate, e: Enc, s: &str) -> Vec<u32> {
    match (c, e) {
        (Crate::BpeOpenai, Enc::O200k) => bpe_openai::o200k_base().encode(s),
        (Crate::BpeOpenai, Enc::Cl100k) => bpe_openai::cl100k_base().encode(s),
        (Crate::TiktokenRs, Enc::O200k) => tiktoken_rs::o200k_base_singleton().encode_ordinary(s),
        (Crate::TiktokenRs, Enc::Cl100k) => tiktoken_rs::cl100k_base_singleton().encode_ordinary(s),
        (Crate::Tiktoken, Enc::O200k) => tiktoken::get_encoding("o200k_base").unwrap().encode(s),
        (Crate::Tiktoken, Enc::Cl100k) => tiktoken::get_encoding("cl100k_base").unwrap().encode(s),
    }
}

// ---------------------------------------------------------------------------
// Corpus
// ---------------------------------------------------------------------------

fn corpus_dir() -> PathBuf {
    match std::env::var_os("TOKBENCH_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../../shared/corpus/swe-trajectories")
        }
    }
}

/// Every message content string and every tool-call `function.arguments` string.
fn load_corpus() -> (Vec<String>, usize, usize) {
    let dir = corpus_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|d| d.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".traj.json.gz"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    let mut unparsed_tool_calls = 0;
    for f in &files {
        let mut s = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(f).unwrap())
            .read_to_string(&mut s)
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        for m in v["messages"].as_array().expect("messages array") {
            match &m["content"] {
                serde_json::Value::String(c) => out.push(c.clone()),
                serde_json::Value::Array(parts) => {
                    for p in parts {
                        if let Some(t) = p["text"].as_str() {
                            out.push(t.to_owned());
                        }
                    }
                }
                _ => {}
            }
            // The corpus README warns tool_calls may be a Python-repr string; accept a
            // JSON array, a JSON string holding a JSON array, and count anything else.
            let calls = match &m["tool_calls"] {
                serde_json::Value::Array(a) => Some(a.clone()),
                serde_json::Value::String(s) => {
                    match serde_json::from_str::<serde_json::Value>(s) {
                        Ok(serde_json::Value::Array(a)) => Some(a),
                        _ => {
                            unparsed_tool_calls += 1;
                            None
                        }
                    }
                }
                _ => None,
            };
            for call in calls.unwrap_or_default() {
                if let Some(a) = call["function"]["arguments"].as_str() {
                    out.push(a.to_owned());
                }
            }
        }
    }
    (out, files.len(), unparsed_tool_calls)
}

/// Deterministic extra strings that stress the pre-tokenizers (the corpus is mostly ASCII):
/// random mixes of scripts, case changes, digits, apostrophes, whitespace runs, emoji,
/// combining marks, CRLF and special-token text.
fn synthetic_strings(n: usize) -> Vec<String> {
    const ATOMS: &[&str] = &[
        " ",
        "  ",
        "   ",
        "\t",
        "\n",
        "\r\n",
        "\n\n",
        " \n ",
        "a",
        "b",
        "Z",
        "Hello",
        "WORLD",
        "camelCase",
        "snake_case",
        "'s",
        "'T",
        "'re",
        "'LL",
        "'d",
        "0",
        "12",
        "345",
        "67890",
        ".",
        ",",
        "!!",
        "...",
        "/",
        "//",
        "://",
        "(",
        ")",
        "{",
        "}",
        "\"",
        "'",
        "`",
        "-",
        "--",
        "_",
        "=",
        "==",
        "<|endoftext|>",
        "<|fim_prefix|>",
        "é",
        "e\u{301}",
        "ß",
        "Ⅻ",
        "①",
        "½",
        "٣",
        "日本語",
        "中文",
        "한국어",
        "кириллица",
        "Ελληνικά",
        "עברית",
        "العربية",
        "हिन्दी",
        "ไทย",
        "😀",
        "🦀",
        "👨‍👩‍👧",
        "🇫🇷",
        "\u{200b}",
        "\u{a0}",
        "\u{3000}",
        "\u{feff}",
        "\u{1f}",
        "\u{7f}",
        "ﬁ",
        "Ǆ",
        "ǅ",
        "ʰ",
        "ᾈ",
        "\u{300}",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    (0..n)
        .map(|_| {
            let len = 1 + rng.below(40) as usize;
            (0..len)
                .map(|_| ATOMS[rng.below(ATOMS.len() as u64) as usize])
                .collect()
        })
        .collect()
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

// ---------------------------------------------------------------------------
// Pathological inputs
// ---------------------------------------------------------------------------

const KINDS: [&str; 5] = [
    "a-repeated",
    "alnum-random",
    "lower-random",
    "emoji-repeated",
    "spaces",
];

fn patho_input(kind: &str, bytes: usize) -> String {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    match kind {
        "a-repeated" => "a".repeat(bytes),
        "alnum-random" => {
            const A: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
            (0..bytes)
                .map(|_| A[rng.below(A.len() as u64) as usize] as char)
                .collect()
        }
        // One letter run with no case change: a single pre-token of `bytes` bytes in both
        // encodings, with no repetition to memoise.
        "lower-random" => (0..bytes)
            .map(|_| (b'a' + rng.below(26) as u8) as char)
            .collect(),
        "emoji-repeated" => "😀".repeat(bytes / 4),
        "spaces" => " ".repeat(bytes),
        _ => panic!("unknown kind {kind}"),
    }
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn min_med(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[0], v[v.len() / 2])
}

enum Child {
    Done(String),
    TimedOut,
    /// The child exited unsuccessfully (e.g. the crate panicked); first panic line.
    Failed(String),
}

/// Runs this program again with `args`; kills it after `limit`.
fn run_child(args: &[&str], limit: Duration) -> Child {
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drain stderr on a thread so a chatty child cannot block on a full pipe.
    let mut err_pipe = child.stderr.take().unwrap();
    let err_reader = std::thread::spawn(move || {
        let mut e = String::new();
        err_pipe.read_to_string(&mut e).ok();
        e
    });
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut out = String::new();
            child
                .stdout
                .take()
                .unwrap()
                .read_to_string(&mut out)
                .unwrap();
            let err = err_reader.join().unwrap();
            if status.success() {
                return Child::Done(out);
            }
            let why = err
                .lines()
                .skip_while(|l| !l.contains("panicked"))
                .nth(1)
                .unwrap_or("exited unsuccessfully")
                .trim()
                .to_string();
            return Child::Failed(why);
        }
        if start.elapsed() > limit {
            child.kill().ok();
            child.wait().ok();
            return Child::TimedOut;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `f` on a fresh thread (so thread-local caches, e.g. tiktoken's piece memo, start cold).
fn on_fresh_thread<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::spawn(f).join().unwrap()
}

// ---------------------------------------------------------------------------
// Modes
// ---------------------------------------------------------------------------

fn child_startup(c: Crate, e: Enc) {
    let rss0 = rss_kib();
    let t = Instant::now();
    construct(c, e);
    let build = t.elapsed();
    let rss1 = rss_kib();
    let t = Instant::now();
    let n = count(c, e, "hello world");
    let first_count = t.elapsed();
    assert_eq!(n, 2);
    println!(
        "{} {} {}",
        secs(build),
        secs(first_count),
        rss1.saturating_sub(rss0)
    );
}

fn child_patho(c: Crate, e: Enc, kind: &str, bytes: usize) {
    let text = patho_input(kind, bytes);
    construct(c, e);
    // Up to 5 runs, each on a fresh thread, stopping once 10 s have been spent.
    let mut best = f64::INFINITY;
    let mut tokens = 0;
    let all = Instant::now();
    for _ in 0..5 {
        let text = text.clone();
        let (d, n) = on_fresh_thread(move || {
            let t = Instant::now();
            let n = count(c, e, &text);
            (t.elapsed(), n)
        });
        best = best.min(secs(d));
        tokens = n;
        if all.elapsed() > Duration::from_secs(10) {
            break;
        }
    }
    println!("{best} {tokens}");
}

fn size_report() {
    let dir = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let size = |name: &str| std::fs::metadata(dir.join(name)).ok().map(|m| m.len());
    println!(
        "\n## 4b. Binary size (stripped release binaries that count both encodings with one crate)"
    );
    let Some(base) = size("size-none") else {
        println!("size-* binaries not built: run `cargo build --release --bins` first");
        return;
    };
    println!(
        "baseline (std only, same main): {:.2} MB",
        base as f64 / 1e6
    );
    for (c, bin) in [
        (Crate::BpeOpenai, "size-bpe-openai"),
        (Crate::TiktokenRs, "size-tiktoken-rs"),
        (Crate::Tiktoken, "size-tiktoken"),
    ] {
        if let Some(s) = size(bin) {
            println!(
                "{:12} total {:6.2} MB, added {:6.2} MB",
                c.name(),
                s as f64 / 1e6,
                (s as f64 - base as f64) / 1e6
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("--startup") => return child_startup(Crate::parse(&args[2]), Enc::parse(&args[3])),
        Some("--patho") => {
            return child_patho(
                Crate::parse(&args[2]),
                Enc::parse(&args[3]),
                &args[4],
                args[5].parse().unwrap(),
            );
        }
        _ => {}
    }

    println!("# tokenizer-bench");
    println!(
        "cores (available_parallelism): {:?}",
        std::thread::available_parallelism().map(|n| n.get())
    );

    // 4. Startup: each (crate, encoding) built first thing in a fresh process, 5 times.
    println!(
        "\n## 4. Startup: first construction in a fresh process (best / median of 5 processes)"
    );
    println!(
        "{:12} {:12} {:>12} {:>12} {:>14} {:>12}",
        "crate", "encoding", "build best", "build med", "first count", "RSS +MiB"
    );
    for c in Crate::ALL {
        for e in Enc::ALL {
            let mut builds = Vec::new();
            let mut firsts = Vec::new();
            let mut rss = Vec::new();
            for _ in 0..5 {
                let Child::Done(out) =
                    run_child(&["--startup", c.name(), e.name()], Duration::from_secs(120))
                else {
                    panic!("startup child failed or timed out");
                };
                let f: Vec<f64> = out.split_whitespace().map(|x| x.parse().unwrap()).collect();
                builds.push(f[0]);
                firsts.push(f[1]);
                rss.push(f[2]);
            }
            let (b, bm) = min_med(builds);
            let (fc, _) = min_med(firsts);
            let (r, _) = min_med(rss);
            println!(
                "{:12} {:12} {:>9.1} ms {:>9.1} ms {:>11.1} µs {:>12.1}",
                c.name(),
                e.name(),
                b * 1e3,
                bm * 1e3,
                fc * 1e6,
                r / 1024.0
            );
        }
    }
    size_report();

    // Load everything once in this process for the corpus measurements.
    for c in Crate::ALL {
        for e in Enc::ALL {
            construct(c, e);
        }
    }
    let (corpus, files, unparsed) = load_corpus();
    let bytes: usize = corpus.iter().map(String::len).sum();
    println!(
        "\n## Corpus: {} files, {} strings (contents + tool-call arguments), {:.2} MB; tool_calls fields not parseable: {}",
        files,
        corpus.len(),
        bytes as f64 / 1e6,
        unparsed
    );

    // 1. Identical counts (and identical token ids), reference = tiktoken-rs.
    println!("\n## 1. Agreement with tiktoken-rs (OpenAI's tiktoken core, vendored), per string");
    let synth = synthetic_strings(20_000);
    for (label, set) in [("corpus", &corpus), ("synthetic", &synth)] {
        for e in Enc::ALL {
            let reference: Vec<Vec<u32>> = set
                .iter()
                .map(|s| encode(Crate::TiktokenRs, e, s))
                .collect();
            let total: usize = reference.iter().map(Vec::len).sum();
            println!("{label:9} {:12} tiktoken-rs total tokens {total}", e.name());
            for c in [Crate::BpeOpenai, Crate::Tiktoken] {
                let mut count_diff = 0;
                let mut ids_diff = 0;
                let mut examples = Vec::new();
                for (s, r) in set.iter().zip(&reference) {
                    let n = count(c, e, s);
                    let ids = encode(c, e, s);
                    if n != r.len() {
                        count_diff += 1;
                        if examples.len() < 3 {
                            let head: String = s.chars().take(80).collect();
                            examples.push(format!("      {} vs {} tokens: {:?}", n, r.len(), head));
                        }
                    }
                    if &ids != r {
                        ids_diff += 1;
                    }
                }
                println!(
                    "{label:9} {:12} {:12} strings with different count: {count_diff} / {}, different ids: {ids_diff}",
                    e.name(),
                    c.name(),
                    set.len()
                );
                for ex in examples {
                    println!("{ex}");
                }
            }
        }
    }

    // 2. Throughput over the whole corpus, count only.
    println!(
        "\n## 2. Throughput, counting every corpus string ({:.2} MB), MB/s",
        bytes as f64 / 1e6
    );
    println!(
        "   cold = each pass on a fresh thread (thread-local caches empty); warm = 5 passes on one thread after one warm-up pass"
    );
    println!(
        "{:12} {:12} {:>10} {:>10} {:>10} {:>10}",
        "crate", "encoding", "cold best", "cold med", "warm best", "warm med"
    );
    let corpus = std::sync::Arc::new(corpus);
    for e in Enc::ALL {
        for c in Crate::ALL {
            let mut cold = Vec::new();
            for _ in 0..5 {
                let corpus = corpus.clone();
                let d = on_fresh_thread(move || {
                    let t = Instant::now();
                    let n: usize = corpus.iter().map(|s| count(c, e, s)).sum();
                    std::hint::black_box(n);
                    t.elapsed()
                });
                cold.push(bytes as f64 / 1e6 / secs(d));
            }
            let corpus2 = corpus.clone();
            let warm = on_fresh_thread(move || {
                let mut v = Vec::new();
                for i in 0..6 {
                    let t = Instant::now();
                    let n: usize = corpus2.iter().map(|s| count(c, e, s)).sum();
                    std::hint::black_box(n);
                    if i > 0 {
                        v.push(bytes as f64 / 1e6 / secs(t.elapsed()));
                    }
                }
                v
            });
            // For MB/s the best is the maximum.
            let (cb, cm) = min_med(cold.iter().map(|x| -x).collect());
            let (wb, wm) = min_med(warm.iter().map(|x| -x).collect());
            println!(
                "{:12} {:12} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
                c.name(),
                e.name(),
                -cb,
                -cm,
                -wb,
                -wm
            );
        }
    }

    // 3. Pathological inputs, each in a child process killed at 60 s.
    println!(
        "\n## 3. Pathological input: seconds to count (best of up to 5 runs, fresh thread each; child killed at 60 s)"
    );
    println!(
        "{:12} {:12} {:15} {:>9} {:>9} {:>9} {:>9}   tokens@largest",
        "crate", "encoding", "input", "10 KB", "100 KB", "1 MB", "10 MB"
    );
    let mut failures = Vec::new();
    for kind in KINDS {
        for e in Enc::ALL {
            for c in Crate::ALL {
                let mut cells = Vec::new();
                let mut tokens = String::from("-");
                let mut gave_up = false;
                for size in [10_000usize, 100_000, 1_000_000, 10_000_000] {
                    if gave_up {
                        cells.push("skipped".to_string());
                        continue;
                    }
                    let sz = size.to_string();
                    match run_child(
                        &["--patho", c.name(), e.name(), kind, &sz],
                        Duration::from_secs(60),
                    ) {
                        Child::Done(out) => {
                            let mut it = out.split_whitespace();
                            let t: f64 = it.next().unwrap().parse().unwrap();
                            tokens = it.next().unwrap().to_string();
                            cells.push(format!("{t:.4}"));
                        }
                        Child::TimedOut => {
                            cells.push("> 60 s".to_string());
                            tokens = "-".into();
                            gave_up = true;
                        }
                        Child::Failed(why) => {
                            cells.push("panic".to_string());
                            failures.push(format!(
                                "      {} {} {kind} {size} B: {why}",
                                c.name(),
                                e.name()
                            ));
                            tokens = "-".into();
                        }
                    }
                }
                println!(
                    "{:12} {:12} {:15} {:>9} {:>9} {:>9} {:>9}   {}",
                    c.name(),
                    e.name(),
                    kind,
                    cells[0],
                    cells[1],
                    cells[2],
                    cells[3],
                    tokens
                );
            }
        }
    }
    for f in failures {
        println!("{f}");
    }
}
