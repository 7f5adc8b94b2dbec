//! What building each tokenizer vocabulary costs: wall time and resident memory, each
//! built once in a fresh process, in the order given (default: all three).
//!
//!     cargo run --release -p ctxd-core --example vocabularies [o200k_base cl100k_base deepseek_v3]
use std::time::Instant;

use ctxd_core::tokenize::{self, Tokenizer};

/// This process's resident set, in MB (Linux; 0 elsewhere).
fn rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("VmRSS:"))
                .and_then(|line| line.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() {
    let mut names: Vec<String> = std::env::args().skip(1).collect();
    if names.is_empty() {
        names = ["o200k_base", "cl100k_base", "deepseek_v3"]
            .map(String::from)
            .to_vec();
    }
    println!("vocabulary | build ms | RSS before MB | RSS after MB | added MB");
    println!("---|---|---|---|---");
    for name in names {
        let tokenizer = match name.as_str() {
            "o200k_base" => Tokenizer::O200kBase,
            "cl100k_base" => Tokenizer::Cl100kBase,
            "deepseek_v3" => Tokenizer::DeepseekV3,
            other => panic!("unknown tokenizer {other}"),
        };
        let before = rss_mb();
        let start = Instant::now();
        tokenize::load(tokenizer);
        let took = start.elapsed();
        let after = rss_mb();
        println!(
            "{name} | {:.0} | {before:.1} | {after:.1} | {:.1}",
            took.as_secs_f64() * 1e3,
            after - before
        );
    }
}
