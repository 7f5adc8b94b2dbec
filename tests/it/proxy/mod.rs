//! The provider endpoint: real agents through it (`agents`), against a fake model
//! (`fake`).
mod agents;
mod fake;
