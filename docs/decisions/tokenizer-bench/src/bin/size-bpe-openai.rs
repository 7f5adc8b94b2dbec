//! Binary-size probe: counts both encodings with bpe-openai only.
fn main() {
    let text = std::env::args().nth(1).unwrap_or_default();
    println!(
        "{} {}",
        bpe_openai::o200k_base().count(&text),
        bpe_openai::cl100k_base().count(&text)
    );
}
