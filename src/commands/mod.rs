//! One module per command; each returns how the run ended, `main` turns that into an exit code.
//!
//! Layer: commands, the top of the library. A command takes its `Config` (plain values,
//! built from the command line by `crate::flags`, which nothing here imports) and may
//! import every layer below: decode, model, the pass, aggregates, outputs and runs. A
//! command imports no other command: what several share is in [`crate::runs`].

pub mod diff;
pub mod info;
pub mod keys;
pub mod lint;
pub mod merge;
pub mod prefixes;
pub mod report;
pub mod top;

use crate::runs::written::Written;
use std::error::Error;
use std::io::{self, Write};

/// A command and everything its flags asked for.
pub enum Command {
    Report(report::Config),
    Top(top::Config),
    Prefixes(prefixes::Config),
    Keys(keys::Config),
    Info(info::Config),
    Lint(lint::Config),
    Diff(diff::Config),
    Merge(merge::Config),
}

impl Command {
    /// Runs the command, its report to `out`.
    pub fn run(&self, out: impl Write + Send) -> io::Result<Outcome> {
        match self {
            Command::Report(c) => report::run(c, out),
            Command::Top(c) => top::run(c, out),
            Command::Prefixes(c) => prefixes::run(c, out),
            Command::Keys(c) => keys::run(c, out),
            Command::Info(c) => info::run(c, out),
            Command::Lint(c) => lint::run(c, out),
            Command::Diff(c) => diff::run(c, out),
            Command::Merge(c) => merge::run(c, out),
        }
    }
}

/// What `top` and `prefixes` print on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListFormat {
    Table,
    Csv,
    /// One JSON document with summary.json's field names (docs/summary-json.md).
    Json,
}

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

impl Outcome {
    /// How a run ended: `failed`, some dump was not read whole (exit code 2, before all
    /// else); `findings`, some at or above the failure level (1).
    pub fn of(failed: bool, findings: bool) -> Self {
        match (failed, findings) {
            (true, _) => Outcome::Failed,
            (false, true) => Outcome::Findings,
            (false, false) => Outcome::Clean,
        }
    }
}

/// Whether `e`, or an error it wraps (the csv crate's, serde_json's), is a write to a pipe
/// whose reader has gone (`| head`).
pub fn is_closed_pipe(e: &io::Error) -> bool {
    let mut current: Option<&(dyn Error + 'static)> = e.get_ref().map(|inner| inner as _);
    if e.kind() == io::ErrorKind::BrokenPipe {
        return true;
    }
    while let Some(err) = current {
        let wrapped_io = err.downcast_ref::<io::Error>().or_else(|| {
            match err.downcast_ref::<csv::Error>()?.kind() {
                csv::ErrorKind::Io(io) => Some(io),
                _ => None,
            }
        });
        if wrapped_io.is_some_and(is_closed_pipe) {
            return true;
        }
        current = err.source();
    }
    false
}

/// The outcome of a report written by [`write_report`](crate::runs::written::write_report).
pub fn report_outcome(written: Written) -> io::Result<Outcome> {
    keep_verdict(written.stdout, Outcome::of(written.failed, false))
}

/// The outcome of a run whose report `written` went to stdout: a reader that closed the
/// pipe early does not change the verdict (`lint … | head` still exits 1 on findings).
pub fn keep_verdict(written: io::Result<()>, outcome: Outcome) -> io::Result<Outcome> {
    match written {
        Err(e) if !is_closed_pipe(&e) => Err(e),
        _ => Ok(outcome),
    }
}
