//! What a pass folds each dump's keys into: an [`Aggregator`] (one a pool thread takes
//! keys into in any order, and one a chunk of the file fills with what depends on their
//! order, merged into the dump's in file order; then the dumps, all merged with `+=`),
//! built for keys from a [`Source`]. The aggregates (`aggregates`, `lint`) implement it; the
//! pass only drives it.

use crate::model::key_stats::KeyStats;
use crate::pass::totals::Totals;
use std::ops::AddAssign;

/// What a command folds keys into. Each key goes to `add` of a pool thread's aggregator,
/// with the part ([`Aggregator::InOrder`]) its chunk of the file fills: one call a key, so
/// what both sides read of a key (its pattern, its delimiters) is worked out once.
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
    /// Takes `key` into this aggregator and what depends on the order into `part`.
    fn add(&mut self, part: &mut Self::InOrder, key: &KeyStats<'_>);
    /// Takes what the part of the next chunk of the file holds, in file order, and leaves
    /// it empty, as [`Aggregator::in_order`] makes it: a part is used again, its vectors
    /// and indexes keeping their room, for a later chunk.
    fn merge_in_order(&mut self, part: &mut Self::InOrder);
    /// A dump's keys are all in: its heavy-hitter tables drop what they list beyond twice
    /// their capacity ([`crate::aggregates::groups::GroupTable::trim`]).
    fn trim(&mut self) {}
    fn totals(&self) -> &Totals;
}

/// What a chunk of the file fills in file order (so its merge need not be order-free):
/// a heavy-hitter table, keys looked up, what a command folds beside the report's
/// aggregates.
pub trait OrderedFold: AddAssign + Send + Sized {
    /// Empty, with the same settings: what a chunk of the file fills.
    fn like(&self) -> Self;
    fn add(&mut self, key: &KeyStats<'_>);
    /// A dump's keys are all in (see [`Aggregator::trim`]).
    fn trim(&mut self) {}
}

/// The aggregator of a command that folds one thing in file order: that, and the totals
/// of the per-file breakdown.
pub struct TotalsAnd<F> {
    pub totals: Totals,
    pub fold: F,
}

impl<F> TotalsAnd<F> {
    pub fn new(fold: F) -> Self {
        TotalsAnd {
            totals: Totals::default(),
            fold,
        }
    }
}

impl<F: OrderedFold> Aggregator for TotalsAnd<F> {
    type InOrder = F;

    fn in_order(&self) -> F {
        self.fold.like()
    }

    fn add(&mut self, fold: &mut F, key: &KeyStats<'_>) {
        self.totals.add(key);
        fold.add(key);
    }

    fn merge_in_order(&mut self, fold: &mut F) {
        self.fold += std::mem::replace(fold, fold.like());
    }

    fn trim(&mut self) {
        self.fold.trim();
    }

    fn totals(&self) -> &Totals {
        &self.totals
    }
}

impl<F: OrderedFold> AddAssign for TotalsAnd<F> {
    fn add_assign(&mut self, o: TotalsAnd<F>) {
        self.totals += o.totals;
        self.fold += o.fold;
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
