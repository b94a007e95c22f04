//! Writers: they read statistics and never re-parse a dump.

pub mod escape;
pub mod info;
pub mod keys;
