//! The per-key rows (`rdbscope keys`, `keys.csv` and `keys.parquet` of `report --out-dir`):
//! [`rows`] renders text rows (CSV, JSON Lines, redis-rdb-tools' CSV) with [`decimal`],
//! [`columns`] gathers them as Arrow columns of one schema, which [`parquet`] writes as a
//! column file and [`arrow`] as an Arrow IPC stream; [`sinks`] sends a run's rows to the
//! formats asked for in file order.
//!
//! The columns, their names and order come from `aggregates::key_columns`: each writer
//! expands that list into its per-row code, and says how it writes each value type.
//!
//! May import: the shared modules of `report` (escaping, human units), the pass's per-key
//! statistics (`model::key_stats::KeyStats`, `aggregates::key_columns`) and decode's types; no other
//! report.

pub mod arrow;
pub mod columns;
pub mod decimal;
pub mod parquet;
pub mod rows;
pub mod sinks;
