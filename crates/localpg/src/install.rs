//! Finding the PostgreSQL server binaries (`initdb`, `postgres`) of one installation:
//! on PATH (resolved through symlinks), then the newest `/usr/lib/postgresql/*/bin`.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The directory holding `initdb` and `postgres` of one installation; the
/// PATH entry is resolved through symlinks so helpers from the same version are used.
pub(super) fn find_bin_dir() -> Option<PathBuf> {
    let has_server =
        |d: &Path| is_executable(&d.join("initdb")) && is_executable(&d.join("postgres"));
    if let Some(path) = std::env::var_os("PATH") {
        for entry in std::env::split_paths(&path) {
            let initdb = entry.join("initdb");
            if !is_executable(&initdb) {
                continue;
            }
            let real = fs::canonicalize(&initdb).ok();
            if let Some(d) = real.as_deref().and_then(Path::parent)
                && has_server(d)
            {
                return Some(d.to_path_buf());
            }
            if has_server(&entry) {
                return Some(entry);
            }
        }
    }
    let mut versions: Vec<(Vec<u64>, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_owned();
            let version = name
                .split('.')
                .map(|p| p.parse::<u64>().ok())
                .collect::<Option<Vec<_>>>()?;
            let bin = e.path().join("bin");
            has_server(&bin).then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn is_executable(p: &Path) -> bool {
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0)
}
