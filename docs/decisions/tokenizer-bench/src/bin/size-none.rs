//! Baseline for the binary-size estimate: same shape, no tokenizer.
fn main() {
    let text = std::env::args().nth(1).unwrap_or_default();
    println!("{} {}", text.len(), text.split_whitespace().count());
}
