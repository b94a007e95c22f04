//! What a pass folds each dump's keys into: an [`Aggregator`] (one taking the keys in file
//! order and one a pool thread taking them in any order for each dump, then the dumps, all
//! merged with `+=`), built for keys from a [`Source`]. The aggregates (`analyze`, `lint`)
//! implement it; the pass only drives it.

use crate::model::key_stats::KeyStats;
use crate::pass::totals::Totals;
use std::ops::AddAssign;

/// What a command folds keys into. Each key goes to `add_in_order` of the dump's one
/// aggregator, in file order, and to `add` of a pool thread's; `+=` merges a value built
/// from other keys (a thread's share, another dump) in any order, so whatever `add` feeds
/// must merge the same whatever the order (sums, histograms, totally ordered rankings),
/// and whatever depends on the order keys come in (heavy-hitter tables) goes in
/// `add_in_order`. `totals` feeds the per-file breakdown.
pub trait Aggregator: AddAssign + Send + Sized {
    fn add(&mut self, key: &KeyStats<'_>);
    fn add_in_order(&mut self, key: &KeyStats<'_>);
    fn totals(&self) -> &Totals;
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
