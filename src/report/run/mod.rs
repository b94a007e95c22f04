//! A run's aggregates (`report`, `top`, `prefixes`, `merge`), in each of its formats:
//! [`summary`] (summary.json) and [`state`] (its `state`, what `merge` merges), [`tables`]
//! (the terminal tables), [`csv_files`] (prefixes.csv, patterns.csv, top.csv, slots.csv),
//! and [`notes`], the caveats all of them state.
//!
//! May import: the shared modules of `report`, the `info` report (a dump's allocator as
//! summary.json shows it), the pass (`pass::analysis`, `pass::scan`) and the aggregates (`aggregates`,
//! `lint`); not `diff` or `page`, which read it.

pub mod csv_files;
pub mod notes;
pub mod read_back;
pub mod state;
pub mod summary;
pub mod tables;
