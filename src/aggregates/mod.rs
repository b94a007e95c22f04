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
