//! Outputs: they read what the pass and the aggregates computed and never re-parse a dump.
//!
//! Organised by report, one axis: a folder (or a module) per thing reported, holding every
//! format it is written in. [`run`] is a run's aggregates (`report`, `top`, `prefixes`,
//! `merge`): summary.json, its merge state, the terminal tables, the CSV files. [`keys`] is
//! the per-key rows (CSV, JSON Lines, Parquet). [`diff`] is two runs compared (its tables,
//! CSV and JSON). [`lint`] and [`info`] are those commands' outputs. [`page`] is
//! report.html, the page a person opens, with a section per report it shows (a run, its
//! lint findings, what changed since a baseline). The modules at the top are what every
//! report writes with: [`human`] (sizes and times as people read them), [`text_table`]
//! (terminal tables); hostile key text is neutralised with [`crate::text::escape`].
//!
//! Layer: outputs. May import the layers below (decode `rdb`, `text`, the `model`, the `pass`,
//! the aggregates: `aggregates`, `lint`), never `runs`, `commands` or `flags`. Inside, the shared modules
//! import no report; a report imports the shared modules and only the reports before it in
//! this order: `info`, `lint`, `keys`, `run`, `diff`, `page`.

pub mod diff;
pub mod human;
pub mod info;
pub mod keys;
pub mod lint;
pub mod page;
pub mod run;
pub mod text_table;
