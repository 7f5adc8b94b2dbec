//! Random trees of forks.
