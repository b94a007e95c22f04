//! Two runs read and compared, as `diff OLD NEW` and `report --baseline OLD` compare them:
//! each side read back as a run ([`super::read`]) — dumps are analysed here — and compared
//! ([`crate::report::diff::compare`]). When both sides are dumps, keys of at least
//! `--min-key-bytes` are compared key by key (a second pass looks up, on each side, the big
//! keys of the other it did not hold as big) and the keys that lost their TTL are counted
//! by hash join.

use super::files::write_whole;
use super::read::{analyse_dumps, read_summary, run_summary, DumpSettings, RunInput};
use crate::aggregates::key_join::{shared, BigKeys, KeyLookup, KeyName, TtlKeyHashes};
use crate::aggregates::top::TopKey;
use crate::aggregates::Aggregates;
use crate::lint::LintReport;
use crate::model::key_stats::KeyStats;
use crate::pass::analysis::{self, Analysis};
use crate::pass::fold::{OrderedFold, TotalsAnd};
use crate::pass::pipeline::Options;
use crate::pass::progress::Progress;
use crate::report::diff::compare::{compare, Diff, DiffOptions, ExactKeys, Side};
use crate::report::diff::tables as diff_tables;
use crate::report::run::summary::{SummaryJson, TopKeyJson};
use rustc_hash::FxHashSet;
use std::io::{self, Write};
use std::ops::AddAssign;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Most key hashes a side keeps to count the keys that lost their TTL (8 bytes each:
/// 128 MiB); beyond, that count is not given.
const TTL_JOIN_CAP: usize = 16 << 20;

/// Up to this many names, the lookup pass filters keys by name before decoding values.
const LOOKUP_FILTER_MAX: usize = 10_000;

/// `diff --rows` unless given, and the rows of each list of `report --baseline`.
pub const DIFF_ROWS: usize = 20;
/// `diff --min-key-bytes` unless given, and that of `report --baseline`.
pub const DIFF_MIN_KEY_BYTES: u64 = 1 << 20;

/// What `diff` folds beside the report's aggregates when both sides are dumps.
pub struct DiffKeys {
    big: BigKeys,
    ttl: TtlKeyHashes,
}

impl DiffKeys {
    /// For one side of dump `file`: with `compare_keys` (`(min_key_bytes, with_ttl)`, both
    /// sides dumps), its keys of at least `min_key_bytes` and the hashes of its keys with a
    /// TTL (OLD) or without (NEW); without, nothing.
    pub fn new(file: usize, compare_keys: Option<(u64, bool)>) -> Self {
        let (min_key_bytes, with_ttl) = compare_keys.unwrap_or((u64::MAX, false));
        let cap = if compare_keys.is_some() {
            TTL_JOIN_CAP
        } else {
            0
        };
        DiffKeys {
            big: BigKeys::new(min_key_bytes, file),
            ttl: TtlKeyHashes::new(with_ttl, cap),
        }
    }
}

impl OrderedFold for DiffKeys {
    fn like(&self) -> Self {
        DiffKeys {
            big: self.big.like(),
            ttl: self.ttl.like(),
        }
    }

    #[inline]
    fn add(&mut self, k: &KeyStats<'_>) {
        self.big.add(k);
        self.ttl.add(k);
    }
}

impl AddAssign for DiffKeys {
    fn add_assign(&mut self, o: DiffKeys) {
        self.big += o.big;
        self.ttl += o.ttl;
    }
}

/// One side, read back.
pub struct Loaded {
    summary: SummaryJson,
    side: Side,
    /// Some dump could not be read whole.
    failed: bool,
    /// When both sides are dumps: its big keys and TTL hashes.
    keys: Option<(Vec<TopKey>, Option<Vec<u64>>)>,
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

fn source(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| crate::pass::input::source_name(p))
        .collect::<Vec<_>>()
        .join(" ")
}

impl Loaded {
    /// Dumps analysed into `summary`; `keys` folded in the same pass when both sides are
    /// dumps.
    pub fn dumps(
        paths: &[PathBuf],
        summary: SummaryJson,
        failed: bool,
        keys: Option<DiffKeys>,
    ) -> Self {
        Loaded {
            side: Side {
                source: source(paths),
                kind: "dumps",
                files: summary.files.iter().map(|f| f.path.clone()).collect(),
                partial: summary.partial,
            },
            summary,
            failed,
            keys: keys.map(|k| (k.big.into_sorted(), k.ttl.into_sorted())),
        }
    }

    /// Some dump could not be read whole.
    pub fn failed(&self) -> bool {
        self.failed
    }
}

/// One side read back: a summary.json read, or dumps analysed (with `compare_keys`, see
/// [`DiffKeys::new`]). A side only part of whose dumps were read is refused unless
/// `--allow-partial`: what it missed would show as removed.
pub fn load(
    input: &RunInput,
    paths: &[PathBuf],
    settings: &DumpSettings<'_>,
    compare_keys: Option<(u64, bool)>,
) -> io::Result<Loaded> {
    let loaded = load_side(input, paths, settings, compare_keys)?;
    if loaded.summary.partial && !settings.options.allow_partial {
        return Err(invalid(format!(
            "{}: PARTIAL, only part of its dumps could be read: compared, what was not read \
             would show as removed (--allow-partial compares it anyway)",
            loaded.side.source
        )));
    }
    Ok(loaded)
}

fn load_side(
    input: &RunInput,
    paths: &[PathBuf],
    settings: &DumpSettings<'_>,
    compare_keys: Option<(u64, bool)>,
) -> io::Result<Loaded> {
    match input {
        RunInput::Summary(path) => {
            let summary = read_summary(path)?;
            Ok(Loaded {
                side: Side {
                    source: source(paths),
                    kind: "summary",
                    files: summary.files.iter().map(|f| f.path.clone()).collect(),
                    partial: summary.partial,
                },
                failed: summary.partial,
                summary,
                keys: None,
            })
        }
        RunInput::Dumps(dumps) => {
            let (summary, failed, keys) =
                analyse_dumps(dumps, settings, |s| DiffKeys::new(s.file, compare_keys))?;
            let keys = compare_keys.map(|_| keys);
            Ok(Loaded::dumps(paths, summary, failed, keys))
        }
    }
}

/// The lookup pass's keys.
impl OrderedFold for KeyLookup {
    fn like(&self) -> Self {
        KeyLookup::like(self)
    }

    fn add(&mut self, k: &KeyStats<'_>) {
        KeyLookup::add(self, k);
    }
}

/// A regex matching exactly the key names of `wanted` (any byte, escaped).
fn names_regex(wanted: &FxHashSet<KeyName>) -> Option<regex::bytes::Regex> {
    let mut names: Vec<&[u8]> = wanted.iter().map(|(_, k)| &k[..]).collect();
    names.sort_unstable();
    names.dedup();
    let mut re = String::from("(?s-u)^(?:");
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            re.push('|');
        }
        for b in name.iter() {
            re.push_str(&format!("\\x{b:02x}"));
        }
    }
    re.push_str(")$");
    regex::bytes::RegexBuilder::new(&re)
        .size_limit(64 << 20)
        .build()
        .ok()
}

/// The keys of `wanted` as `dumps` hold them (those it holds).
fn look_up(
    dumps: &[PathBuf],
    options: &Options,
    wanted: FxHashSet<KeyName>,
) -> io::Result<Vec<TopKey>> {
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let mut options = options.clone();
    // The user's filters still apply: a key they leave out is not on this side.
    if wanted.len() <= LOOKUP_FILTER_MAX {
        if let Some(re) = names_regex(&wanted) {
            options.filter.patterns.push(re);
        }
    }
    let wanted = Arc::new(wanted);
    let quiet = Progress::new(crate::pass::progress::ProgressMode::Never, 0);
    let a = analysis::analyze(dumps, &options, &quiet, |s| {
        TotalsAnd::new(KeyLookup::new(wanted.clone(), s.file))
    })?;
    Ok(a.merged.fold.into_found())
}

fn name_of(k: &TopKey) -> KeyName {
    (k.db, k.key.clone())
}

/// Every big key of each side and its state on the other side.
fn exact_keys(
    (old_dumps, old_big): (&[PathBuf], Vec<TopKey>),
    (new_dumps, new_big): (&[PathBuf], Vec<TopKey>),
    options: &Options,
    min_key_bytes: u64,
) -> io::Result<ExactKeys> {
    let names = |keys: &[TopKey]| keys.iter().map(name_of).collect::<FxHashSet<_>>();
    let (old_names, new_names) = (names(&old_big), names(&new_big));
    let missing_in_old: FxHashSet<KeyName> = new_names.difference(&old_names).cloned().collect();
    let missing_in_new: FxHashSet<KeyName> = old_names.difference(&new_names).cloned().collect();
    let (old_found, new_found) = rayon::join(
        || look_up(old_dumps, options, missing_in_old),
        || look_up(new_dumps, options, missing_in_new),
    );
    let owned = |keys: Vec<TopKey>, found: Vec<TopKey>| -> Vec<TopKeyJson> {
        keys.iter()
            .chain(&found)
            .map(|k| TopKeyJson::new(k, &[]))
            .collect()
    };
    Ok(ExactKeys {
        min_key_bytes,
        old: owned(old_big, old_found?),
        new: owned(new_big, new_found?),
    })
}

/// OLD compared with NEW: when both are dumps, their big keys key by key (a lookup pass with
/// `options`) and the keys that lost their TTL by hash join.
pub fn compare_sides(
    (old_input, mut old): (&RunInput, Loaded),
    (new_input, mut new): (&RunInput, Loaded),
    options: &Options,
    min_key_bytes: u64,
    diff_options: &DiffOptions,
) -> io::Result<Diff> {
    let (mut exact, mut lost_ttl) = (None, None);
    let both_dumps = matches!(
        (old_input, new_input),
        (RunInput::Dumps(_), RunInput::Dumps(_))
    );
    if let (RunInput::Dumps(od), RunInput::Dumps(nd), Some((ob, ot)), Some((nb, nt))) =
        (old_input, new_input, old.keys.take(), new.keys.take())
    {
        exact = Some(exact_keys((od, ob), (nd, nb), options, min_key_bytes)?);
        if let (Some(with_ttl), Some(without)) = (ot, nt) {
            lost_ttl = Some(shared(&with_ttl, &without));
        }
    }
    if let Some(warning) = SummaryJson::reconcile_elements(&mut old.summary, &mut new.summary) {
        eprintln!("rdbscope: warning: {warning}");
    }
    let mut diff = compare(
        (old.side, &old.summary),
        (new.side, &new.summary),
        exact.as_ref(),
        lost_ttl,
        diff_options,
    );
    if both_dumps && lost_ttl.is_none() {
        diff.notes.push(format!(
            "keys that lost their TTL are not counted key by key: a side holds more than {TTL_JOIN_CAP} keys to match"
        ));
    }
    Ok(diff)
}

/// diff.txt, diff.csv and diff.json in `dir` (which exists), each written whole: their
/// names, in that order.
pub fn write_files(dir: &Path, diff: &Diff) -> io::Result<[&'static str; 3]> {
    write_whole(&dir.join("diff.txt"), |w| {
        w.write_all(diff_tables::render(diff).as_bytes())
    })?;
    write_whole(&dir.join("diff.csv"), |w| diff_tables::write_csv(w, diff))?;
    write_whole(&dir.join("diff.json"), |w| {
        serde_json::to_writer_pretty(&mut *w, diff)?;
        w.write_all(b"\n")
    })?;
    Ok(["diff.txt", "diff.csv", "diff.json"])
}

/// OLD read, and what the report's pass folded of NEW, to compare once NEW is linted.
pub struct Baseline<'a> {
    pub input: RunInput,
    pub old: Loaded,
    pub new_dumps: &'a [PathBuf],
    pub new_keys: Option<DiffKeys>,
    pub settings: DumpSettings<'a>,
}

impl Baseline<'_> {
    /// OLD compared with the linted NEW as `diff` compares them, and whether OLD's dumps
    /// failed.
    pub fn compare(
        self,
        new: &Analysis<Aggregates>,
        lint: &LintReport,
    ) -> io::Result<(Diff, bool)> {
        let old_failed = self.old.failed();
        let new_summary = run_summary(new, lint, &self.settings);
        let new = Loaded::dumps(self.new_dumps, new_summary, new.failed(), self.new_keys);
        let diff_options = DiffOptions {
            rows: DIFF_ROWS,
            min_change: 0,
            fail_on_growth: None,
            fail_on_prefix_growth: None,
        };
        let diff = compare_sides(
            (&self.input, self.old),
            (&RunInput::Dumps(self.new_dumps.to_vec()), new),
            self.settings.options,
            DIFF_MIN_KEY_BYTES,
            &diff_options,
        )?;
        Ok((diff, old_failed))
    }
}
