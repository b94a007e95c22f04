//! Two runs compared (`rdbscope diff`, `report --baseline`), each as its summary.json
//! ([`SummaryJson`](crate::report::run::summary::SummaryJson): read back, or the one a
//! dump's analysis gives): [`compare`] computes
//! what changed, [`tables`] writes it as terminal tables and CSV (its JSON is the
//! [`compare::Diff`] itself).
//!
//! May import: the shared modules of `report`, the `run` report (summary.json's types, the
//! tables' rows) and the aggregates' types; not `page`, which shows a diff.

pub mod compare;
pub mod tables;
