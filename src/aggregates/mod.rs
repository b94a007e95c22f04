//! The aggregators that fold the per-key statistics ([`crate::model::key_stats`]): plain
//! structs with `add(&KeyStats)` and `+=`, bounded in memory, implementing the pass's
//! [`crate::pass::fold::Aggregator`]; and the per-key columns every row writer follows.
//!
//! Layer: aggregates. May import the decoder (`rdb`), `text`, the `model` and the `pass`;
//! never `lint`, `report`, `commands` or `flags`.

#![deny(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]

pub mod distribution;
pub mod encodings;
pub mod figure;
pub mod groups;
pub mod idle_freq;
pub mod key_columns;
pub mod key_join;
pub mod patterns;
pub mod prefixes;
pub mod report;
pub mod slots;
pub mod state_fields;
pub mod top;
pub mod ttl;

pub use report::{AggregateConfig, Aggregates};

use std::cmp::Ordering;

/// Puts the `n` first rows by `order` at the front, sorted; the others follow in no
/// particular order. A table shows its top rows without sorting all of them.
pub fn sort_first<T>(rows: &mut [T], n: usize, order: impl Fn(&T, &T) -> Ordering) {
    let top = match n.checked_sub(1) {
        Some(last) if last < rows.len() => {
            rows.select_nth_unstable_by(last, &order);
            &mut rows[..=last]
        }
        Some(_) => rows,
        None => &mut [],
    };
    top.sort_unstable_by(order);
}
