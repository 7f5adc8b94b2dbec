//! ForkSession's bad input.
