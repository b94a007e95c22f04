//! `rdbscope prefixes`: keys, memory and bytes per key prefix, or per key pattern with
//! `--patterns`, over every dump given.

use super::{keep_verdict, ListFormat, Outcome};
use crate::analyze::groups::SortBy;
use crate::analyze::patterns::Patterns;
use crate::analyze::prefixes::{PrefixConfig, Prefixes};
use crate::model::key_stats::KeyStats;
use crate::pass::analysis;
use crate::pass::fold::Aggregator;
use crate::pass::pipeline::Options;
use crate::pass::progress::{Progress, ProgressMode};
use crate::pass::totals::Totals;
use crate::report::run::notes::{cap_note, partial_banner, under_note};
use crate::report::run::summary::{
    file_json, sort_name, GroupTableJson, Head, PrefixesJson, RollupJson, RollupOptionsJson,
};
use crate::report::run::{csv_files, tables};
use crate::report::text_table::notes_section;
use crate::text::escape::escape_key;
use std::io::{self, Write};
use std::ops::AddAssign;
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

/// One of the two rollups (a run builds only the one asked for), and totals for the
/// per-file breakdown.
struct Rollup<R> {
    totals: Totals,
    groups: R,
}

/// What [`Rollup`] needs of the grouping it wraps.
trait Grouping: AddAssign + Send + Sized {
    fn like(&self) -> Self;
    fn trim(&mut self);
    fn add(&mut self, key: &KeyStats<'_>);
}

impl Grouping for Prefixes {
    fn like(&self) -> Self {
        Prefixes::like(self)
    }

    fn trim(&mut self) {
        Prefixes::trim(self);
    }

    fn add(&mut self, key: &KeyStats<'_>) {
        Prefixes::add(self, key);
    }
}

impl Grouping for Patterns {
    fn like(&self) -> Self {
        Patterns::like(self)
    }

    fn trim(&mut self) {
        Patterns::trim(self);
    }

    fn add(&mut self, key: &KeyStats<'_>) {
        Patterns::add(self, key);
    }
}

impl<R: Grouping> Aggregator for Rollup<R> {
    /// The groups: heavy-hitter tables.
    type InOrder = R;

    fn in_order(&self) -> R {
        self.groups.like()
    }

    fn add(&mut self, key: &KeyStats<'_>) {
        self.totals.add(key);
    }

    fn add_in_order(groups: &mut R, key: &KeyStats<'_>) {
        groups.add(key);
    }

    fn merge_in_order(&mut self, groups: R) {
        self.groups += groups;
    }

    fn trim(&mut self) {
        self.groups.trim();
    }

    fn totals(&self) -> &Totals {
        &self.totals
    }
}

impl<R: Grouping> AddAssign for Rollup<R> {
    fn add_assign(&mut self, o: Rollup<R>) {
        self.totals += o.totals;
        self.groups += o.groups;
    }
}

pub fn run(args: &Config, mut out: impl Write) -> io::Result<Outcome> {
    let (options, config, filtered) = (&args.options, &args.prefixes, args.filtered);
    let progress = Progress::for_files(args.progress, &args.dumps);
    let sort = args.sort;
    let view = tables::View {
        rows: args.rows,
        sort,
    };
    let json = |files: &[analysis::FileSummary], totals: &Totals, notes: Vec<String>| RollupJson {
        head: Head::new(files),
        options: RollupOptionsJson {
            delimiter: escape_key(&config.delimiter).into_owned(),
            depth: config.depth,
            max_prefixes: config.cap,
            under: (!config.under.is_empty()).then(|| escape_key(&config.under).into_owned()),
            sort: sort_name(sort),
            filtered,
        },
        files: files.iter().map(file_json).collect(),
        totals: totals.all().into(),
        prefixes: None,
        patterns: None,
        notes,
    };
    let mut text = String::new();
    let (failed, written) = if args.patterns {
        let a = analysis::analyze(&args.dumps, options, &progress, |_| Rollup {
            totals: Totals::default(),
            groups: Patterns::new(config),
        })?;
        let table = a.merged.groups.table();
        let notes = notes(
            &a.files,
            &config.under,
            cap_note("patterns", table, "; raise --max-prefixes"),
        );
        let written = match args.format {
            ListFormat::Csv => csv_files::write_patterns(&mut out, table, sort),
            ListFormat::Json => {
                let mut doc = json(&a.files, &a.merged.totals, notes);
                doc.patterns = Some(GroupTableJson::sorted(table, usize::MAX, sort));
                write_json(&mut out, &doc)
            }
            ListFormat::Table => {
                start(&mut text, &a.files);
                tables::group_section(
                    &mut text,
                    "Key patterns (ids collapsed to *)",
                    "pattern",
                    table,
                    view,
                    a.merged.totals.all().into(),
                );
                notes_section(&mut text, &notes);
                Ok(())
            }
        };
        (a.failed(), written)
    } else {
        let a = analysis::analyze(&args.dumps, options, &progress, |_| Rollup {
            totals: Totals::default(),
            groups: Prefixes::new(config),
        })?;
        let prefixes = &a.merged.groups;
        let caps = prefixes.tables().iter().enumerate().filter_map(|(i, t)| {
            cap_note(
                &format!("prefixes at depth {}", i + 1),
                t,
                "; raise --max-prefixes or try --patterns, which collapses ids",
            )
        });
        let notes = notes(&a.files, &config.under, caps);
        let written = match args.format {
            ListFormat::Csv => csv_files::write_prefixes(&mut out, prefixes, sort),
            ListFormat::Json => {
                let mut doc = json(&a.files, &a.merged.totals, notes);
                doc.prefixes = Some(PrefixesJson::new(prefixes, usize::MAX, sort));
                write_json(&mut out, &doc)
            }
            ListFormat::Table => {
                start(&mut text, &a.files);
                tables::prefix_sections(&mut text, prefixes, view, a.merged.totals.all().into());
                notes_section(&mut text, &notes);
                Ok(())
            }
        };
        (a.failed(), written)
    };
    let outcome = Outcome::of(failed, false);
    let written = written
        .and_then(|()| out.write_all(text.as_bytes()))
        .and_then(|()| out.flush());
    keep_verdict(written, outcome)
}

fn write_json(out: &mut impl Write, doc: &RollupJson) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, doc)
        .map_err(io::Error::from)
        .and_then(|()| out.write_all(b"\n"))
}

/// The per-file table when several dumps were merged.
fn start(text: &mut String, files: &[analysis::FileSummary]) {
    text.extend(partial_banner(files));
    if files.len() > 1 {
        tables::files_section(text, files);
    }
}

/// Notes about the dumps, the drill-down, then about the caps.
fn notes(
    files: &[analysis::FileSummary],
    under: &[u8],
    caps: impl IntoIterator<Item = String>,
) -> Vec<String> {
    let mut notes = crate::report::run::notes::file_notes(files);
    notes.extend(under_note(under));
    notes.extend(caps);
    notes
}
