//! One module per command; each returns how the run ended, `main` turns that into an exit code.

pub mod info;
pub mod keys;
pub mod lint;
pub mod prefixes;
pub mod report;
pub mod top;

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Everything read and reported.
    Clean,
    /// Reported, but findings at or above the failure level (lint).
    Findings,
    /// At least one dump could not be read whole; what was read was reported.
    Failed,
}
