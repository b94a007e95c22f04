//! Per-key statistics computed from the decoder's records, and the aggregators that fold
//! them: plain structs with `add(&KeyStats)` and `+=`, bounded in memory.
//!
//! Layer: aggregates. May import the decoder (`rdb`), the `model`, the `pass` and
//! `invisible`; never `lint`, `report`, `commands` or `flags`.

#![deny(
    clippy::arithmetic_side_effects,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss
)]

pub mod aggregates;
pub mod distribution;
pub mod encodings;
pub mod figure;
pub mod groups;
pub mod idle_freq;
pub mod key_columns;
pub mod key_join;
pub mod key_stats;
pub mod patterns;
pub mod prefetch;
pub mod prefixes;
pub mod slots;
pub mod state_fields;
pub mod top;
pub mod totals;
pub mod ttl;

pub use aggregates::{AggregateConfig, Aggregates, Aggregator, Source};
pub use key_stats::KeyStats;
