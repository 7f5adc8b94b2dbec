//! Binary-size probe: counts both encodings with the `tiktoken` crate only.
fn main() {
    let text = std::env::args().nth(1).unwrap_or_default();
    println!(
        "{} {}",
        tiktoken::get_encoding("o200k_base").unwrap().count(&text),
        tiktoken::get_encoding("cl100k_base").unwrap().count(&text)
    );
}
