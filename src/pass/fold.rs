//! What a pass folds each dump's keys into: an [`Aggregator`] (one a pool thread takes
//! keys into in any order, and one a chunk of the file fills with what depends on their
//! order, merged into the dump's in file order; then the dumps, all merged with `+=`),
//! built for keys from a [`Source`]. The aggregates (`analyze`, `lint`) implement it; the
//! pass only drives it.

use crate::model::key_stats::KeyStats;
use crate::pass::totals::Totals;
use std::ops::AddAssign;

/// What a command folds keys into. Each key goes to `add` of a pool thread's aggregator,
/// and to `add_in_order` of the part ([`Aggregator::InOrder`]) its chunk of the file fills.
/// `+=` merges a value built from other keys (a thread's share, another dump) in any order,
/// so whatever `add` feeds must merge the same whatever the order (sums, histograms,
/// totally ordered rankings); whatever depends on the order keys come in (heavy-hitter
/// tables, lists in file order) goes in the part, which `merge_in_order` takes in file
/// order, a chunk's keys at a time. `totals` feeds the per-file breakdown.
pub trait Aggregator: AddAssign + Send + Sized {
    /// What a chunk of the file's keys fill of what depends on the order keys come in.
    type InOrder: Send;
    /// An empty part, built like this aggregator's.
    fn in_order(&self) -> Self::InOrder;
    fn add(&mut self, key: &KeyStats<'_>);
    fn add_in_order(part: &mut Self::InOrder, key: &KeyStats<'_>);
    /// Takes the part of the next chunk of the file, in file order.
    fn merge_in_order(&mut self, part: Self::InOrder);
    /// A dump's keys are all in: its heavy-hitter tables drop what they list beyond twice
    /// their capacity ([`crate::analyze::groups::GroupTable::trim`]).
    fn trim(&mut self) {}
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
