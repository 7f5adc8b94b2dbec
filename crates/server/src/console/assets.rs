//! The page's files, compiled in: nothing to build with npm to run ctxd.

/// (path, content type, body) of each file the console serves.
pub(super) const FILES: [(&str, &str, &str); 3] = [
    (
        "/",
        "text/html; charset=utf-8",
        include_str!("assets/index.html"),
    ),
    (
        "/console.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/console.js"),
    ),
    (
        "/console.css",
        "text/css; charset=utf-8",
        include_str!("assets/console.css"),
    ),
];
