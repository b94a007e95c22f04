//! Runs: what several commands share about a run — the dumps of one snapshot analysed
//! now, or a summary.json read back. [`read`] is what a command argument naming a run
//! stands for and the run analysed or read back; [`compare`] is two runs read and compared
//! as `diff` and `report --baseline` compare them; [`written`] is a report written where
//! it was asked for (`report`, `merge`); [`files`] is output files written whole or not at
//! all.
//!
//! Layer: runs, between the outputs and the commands. May import every layer below
//! (decode `rdb`, `text`, the `model`, the `pass`, the aggregates, the outputs), never
//! `commands` or `flags`. Inside: `files` and `read` import no other of these modules,
//! `compare` imports both, `written` the three.

pub mod compare;
pub mod files;
pub mod read;
pub mod written;
