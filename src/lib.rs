//! rdbscope: an offline analyzer for Redis and Valkey RDB dumps.
//!
//! The layers, in the order data flows; each imports only those before it, and each
//! folder's module doc says what it may import:
//! 1. decode, [`rdb`]: zero-copy, bounds-checked readers of the on-disk structures;
//! 2. model, [`model`]: what the server that loads a dump makes of each value (its
//!    encoding, the memory it holds);
//! 3. pass, [`pass`]: each dump read once and its keys analysed on the pool, the per-key
//!    results folded into the aggregates and written as rows in file order;
//! 4. aggregates, [`aggregates`] and [`lint`]: the folds of the per-key statistics, and the
//!    key-design rules;
//! 5. outputs, [`report`]: summary.json, CSV, JSON Lines, Parquet, tables, report.html;
//! 6. runs, [`runs`]: what several commands share about a run (dumps analysed now, or a
//!    summary.json read back): reading it, comparing two, writing its files whole;
//! 7. commands, [`commands`]: one module per command, driving the layers below.
//!
//! Beside them: [`text`], below every layer that writes text, neutralises untrusted key
//! text (what lint flags, what every output and message escapes); [`flags`] builds the
//! commands' configurations from the command line (for `main` alone).

pub mod rdb;
pub mod text;

pub mod model;

pub mod pass;

pub mod aggregates;
pub mod lint;

pub mod report;

pub mod runs;

pub mod commands;

pub mod flags;
