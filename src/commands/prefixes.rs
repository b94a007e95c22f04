//! `rdbscope prefixes`: keys, memory and bytes per key prefix, or per key pattern with
//! `--patterns`, over every dump given.

use super::{keep_verdict, ListFormat, Outcome};
use crate::aggregates::groups::SortBy;
use crate::aggregates::patterns::Patterns;
use crate::aggregates::prefixes::{PrefixConfig, Prefixes};
use crate::model::key_stats::KeyStats;
use crate::pass::analysis;
use crate::pass::fold::Source;
use crate::pass::fold::{OrderedFold, TotalsAnd};
use crate::pass::pipeline::Options;
use crate::pass::progress::{Progress, ProgressMode};
use crate::report::run::notes::{cap_note, partial_banner, under_note};
use crate::report::run::summary::{
    file_json, sort_name, GroupTableJson, Head, PrefixesJson, RollupJson, RollupOptionsJson,
};
use crate::report::run::{csv_files, tables};
use crate::report::text_table::notes_section;
use crate::text::escape::escape_key;
use std::io::{self, Write};
use std::path::PathBuf;

/// What `prefixes` was asked for.
pub struct Config {
    pub dumps: Vec<PathBuf>,
    /// By key pattern instead of by prefix.
    pub patterns: bool,
    /// Table rows per depth.
    pub rows: usize,
    pub format: ListFormat,
    /// The grouping; with `--under`, `options` keeps only the keys under it.
    pub prefixes: PrefixConfig,
    pub sort: SortBy,
    pub options: Options,
    /// Whether a filter flag left keys out (`--under` says so in its own note).
    pub filtered: bool,
    pub progress: ProgressMode,
}

/// The two rollups (a run builds only the one asked for) fold in file order.
macro_rules! ordered_fold {
    ($($table:ident),*) => {$(
        impl OrderedFold for $table {
            fn like(&self) -> Self {
                $table::like(self)
            }

            fn add(&mut self, key: &KeyStats<'_>) {
                $table::add(self, key);
            }

            fn trim(&mut self) {
                $table::trim(self);
            }
        }
    )*};
}

ordered_fold!(Prefixes, Patterns);

pub fn run(args: &Config, mut out: impl Write) -> io::Result<Outcome> {
    let config = &args.prefixes;
    let mut text = String::new();
    let (failed, written) = if args.patterns {
        rollup(args, &mut out, &mut text, |_| Patterns::new(config))?
    } else {
        rollup(args, &mut out, &mut text, |_| Prefixes::new(config))?
    };
    let outcome = Outcome::of(failed, false);
    let written = written
        .and_then(|()| out.write_all(text.as_bytes()))
        .and_then(|()| out.flush());
    keep_verdict(written, outcome)
}

/// What the command shows of the rollup asked for.
trait Rollup: OrderedFold {
    /// The notes of tables that overflowed their capacity.
    fn cap_notes(&self) -> Vec<String>;
    fn write_csv(&self, out: &mut impl Write, sort: SortBy) -> io::Result<()>;
    /// Its section of the JSON document, every row held.
    fn fill_json(&self, doc: &mut RollupJson, sort: SortBy);
    fn write_tables(&self, text: &mut String, view: tables::View, whole: tables::Whole);
}

impl Rollup for Patterns {
    fn cap_notes(&self) -> Vec<String> {
        cap_note("patterns", self.table(), "; raise --max-prefixes")
            .into_iter()
            .collect()
    }

    fn write_csv(&self, out: &mut impl Write, sort: SortBy) -> io::Result<()> {
        csv_files::write_patterns(out, self.table(), sort)
    }

    fn fill_json(&self, doc: &mut RollupJson, sort: SortBy) {
        doc.patterns = Some(GroupTableJson::sorted(self.table(), usize::MAX, sort));
    }

    fn write_tables(&self, text: &mut String, view: tables::View, whole: tables::Whole) {
        tables::group_section(
            text,
            "Key patterns (ids collapsed to *)",
            "pattern",
            self.table(),
            view,
            whole,
        );
    }
}

impl Rollup for Prefixes {
    fn cap_notes(&self) -> Vec<String> {
        self.tables()
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                cap_note(
                    &format!("prefixes at depth {}", i + 1),
                    t,
                    "; raise --max-prefixes or try --patterns, which collapses ids",
                )
            })
            .collect()
    }

    fn write_csv(&self, out: &mut impl Write, sort: SortBy) -> io::Result<()> {
        csv_files::write_prefixes(out, self, sort)
    }

    fn fill_json(&self, doc: &mut RollupJson, sort: SortBy) {
        doc.prefixes = Some(PrefixesJson::new(self, usize::MAX, sort));
    }

    fn write_tables(&self, text: &mut String, view: tables::View, whole: tables::Whole) {
        tables::prefix_sections(text, self, view, whole);
    }
}

/// The dumps rolled up by what `make` builds, written in the format asked for (tables into
/// `text`): whether a dump failed, and how writing went.
fn rollup<R: Rollup>(
    args: &Config,
    out: &mut impl Write,
    text: &mut String,
    make: impl Fn(Source) -> R + Sync,
) -> io::Result<(bool, io::Result<()>)> {
    let (config, sort) = (&args.prefixes, args.sort);
    let progress = Progress::for_files(args.progress, &args.dumps);
    let a = analysis::analyze(&args.dumps, &args.options, &progress, |source| {
        TotalsAnd::new(make(source))
    })?;
    let rollup = &a.merged.fold;
    let notes = notes(&a.files, &config.under, rollup.cap_notes());
    let totals = a.merged.totals.all();
    let written = match args.format {
        ListFormat::Csv => rollup.write_csv(out, sort),
        ListFormat::Json => {
            let mut doc = RollupJson {
                head: Head::new(&a.files),
                options: RollupOptionsJson {
                    delimiter: escape_key(&config.delimiter).into_owned(),
                    depth: config.depth,
                    max_prefixes: config.cap,
                    under: (!config.under.is_empty())
                        .then(|| escape_key(&config.under).into_owned()),
                    sort: sort_name(sort),
                    filtered: args.filtered,
                },
                files: a.files.iter().map(file_json).collect(),
                totals: totals.into(),
                prefixes: None,
                patterns: None,
                notes,
            };
            rollup.fill_json(&mut doc, sort);
            write_json(out, &doc)
        }
        ListFormat::Table => {
            start(text, &a.files);
            let view = tables::View {
                rows: args.rows,
                sort,
            };
            rollup.write_tables(text, view, totals.into());
            notes_section(text, &notes);
            Ok(())
        }
    };
    Ok((a.failed(), written))
}

fn write_json(out: &mut impl Write, doc: &RollupJson) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, doc)
        .map_err(io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
}

/// The per-file table when several dumps were merged.
fn start(text: &mut String, files: &[analysis::FileOutcome]) {
    text.extend(partial_banner(files));
    if files.len() > 1 {
        tables::files_section(text, files);
    }
}

/// Notes about the dumps, the drill-down, then about the caps.
fn notes(
    files: &[analysis::FileOutcome],
    under: &[u8],
    caps: impl IntoIterator<Item = String>,
) -> Vec<String> {
    let mut notes = crate::report::run::notes::file_notes(files);
    notes.extend(under_note(under));
    notes.extend(caps);
    notes
}
