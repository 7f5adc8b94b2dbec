use ctxd_core::tokenize::{Counter, Tokenizer};
use std::time::Instant;
fn main() {
    let texts: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string("/tmp/corpus_texts.json").unwrap()).unwrap();
    let bytes: usize = texts.iter().map(|t| t.len()).sum();
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let only = std::env::var("ONLY").ok();
    for (name, tok) in [
        ("o200k", Tokenizer::O200kBase),
        ("cl100k", Tokenizer::Cl100kBase),
    ] {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let c = Counter::new(tok, 0);
        let t = Instant::now();
        c.text("x");
        let load = t.elapsed();
        let mut best = f64::MAX;
        let mut n = 0;
        for _ in 0..rounds {
            let t = Instant::now();
            n = corpus(&c, &texts);
            best = best.min(t.elapsed().as_secs_f64());
        }
        let a = "a".repeat(1 << 20);
        let t = Instant::now();
        c.text(&a);
        let ta = t.elapsed();
        println!(
            "{name} load {:.1}ms tokens {n} {:.1} MB/s, 1MB a {:.1} ms",
            load.as_secs_f64() * 1e3,
            bytes as f64 / 1e6 / best,
            ta.as_secs_f64() * 1e3
        );
    }
}
#[inline(never)]
fn corpus(c: &Counter, texts: &[String]) -> i64 {
    texts.iter().map(|x| c.text(x)).sum::<i64>()
}
