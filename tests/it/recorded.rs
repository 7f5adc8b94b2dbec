//! The recorded agent sessions of tests/data/swe-trajectories, as proto messages.
//! Shared by the corpus replay tests and the benchmarks (`#[path]`-included there).
use std::path::{Path, PathBuf};

pub use ctxd::replay::Recorded;

pub fn corpus_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/swe-trajectories");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(".traj.json.gz"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 20, "the corpus has 20 sessions");
    files
}

pub fn load(path: &Path) -> Recorded {
    ctxd::replay::load(path).unwrap()
}
