//! Writers: they read statistics and never re-parse a dump.

pub mod decimal;
pub mod diff;
pub mod diff_tables;
pub mod escape;
pub mod html;
pub mod info;
pub mod key_rows;
pub mod keys;
pub mod lint;
pub mod notes;
pub mod parquet;
pub mod rollups;
pub mod run_state;
pub mod summary;
pub mod summary_read;
pub mod tables;
pub mod text_table;
