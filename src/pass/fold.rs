//! What a pass folds each dump's keys into: an [`Aggregator`] (one per dump, the keys in
//! file order, dumps merged with `+=`), built for keys from a [`Source`]. The aggregates (`analyze`, `lint`)
//! implement it; the pass only drives it.

use crate::model::key_stats::KeyStats;
use crate::pass::pipeline::InOrder;
use crate::pass::totals::Totals;
use std::ops::AddAssign;

/// What a command folds keys into. `+=` merges a value built from other keys (another
/// dump); `totals` feeds the per-file breakdown.
pub trait Aggregator: AddAssign + Send + Sized {
    fn add(&mut self, key: &KeyStats<'_>);
    /// `key` will be added next but one: start fetching the memory `add` will touch.
    fn prefetch(&self, _key: &KeyStats<'_>) {}
    fn totals(&self) -> &Totals;
}

impl<A: Aggregator> InOrder for A {
    const FOLDS: bool = true;

    #[inline]
    fn add(&mut self, key: &KeyStats<'_>) {
        Aggregator::add(self, key);
    }

    #[inline]
    fn prefetch(&self, key: &KeyStats<'_>) {
        Aggregator::prefetch(self, key);
    }
}

/// Where the keys being added come from.
#[derive(Clone, Copy, Debug)]
pub struct Source {
    /// Index of the dump on the command line.
    pub file: usize,
    /// Unix ms TTLs are measured from: the dump's `ctime`.
    pub reference_ms: i64,
    /// The server the dump's keys are modelled on, with the user's overrides; `None` for
    /// an aggregate that only receives merges. Rules comparing keys with the server's
    /// encoding limits read it while folding.
    pub profile: Option<crate::model::server::ServerProfile>,
}
