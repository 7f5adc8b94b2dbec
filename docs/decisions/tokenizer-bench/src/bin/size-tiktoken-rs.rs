//! Binary-size probe: counts both encodings with tiktoken-rs only.
fn main() {
    let text = std::env::args().nth(1).unwrap_or_default();
    println!(
        "{} {}",
        tiktoken_rs::o200k_base_singleton().count_ordinary(&text),
        tiktoken_rs::cl100k_base_singleton().count_ordinary(&text)
    );
}
