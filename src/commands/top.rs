//! `rdbscope top`: the N biggest keys by one metric, over every dump given.

use super::ListFormat;
use super::{keep_verdict, Outcome};
use crate::aggregates::top::{Metric, TopN};
use crate::model::key_stats::KeyStats;
use crate::pass::analysis;
use crate::pass::fold::Aggregator;
use crate::pass::pipeline::Options;
use crate::pass::progress::{Progress, ProgressMode};
use crate::pass::totals::Totals;
use crate::report::run::notes::{file_notes, partial_banner};
use crate::report::run::summary::TopJson;
use crate::report::run::{csv_files, tables};
use crate::report::text_table::notes_section;
use std::io::{self, Write};
use std::ops::AddAssign;
use std::path::PathBuf;

/// What `top` was asked for.
pub struct Config {
    pub dumps: Vec<PathBuf>,
    /// How many keys.
    pub n: usize,
    pub by: Metric,
    pub format: ListFormat,
    pub options: Options,
    pub progress: ProgressMode,
}

/// The ranking, and totals for the per-file breakdown. Nothing depends on the order keys
/// come in: each pool thread ranks its keys, and the rankings merge with `+=`.
struct Ranking {
    totals: Totals,
    top: TopN,
}

impl Aggregator for Ranking {
    type InOrder = ();

    fn in_order(&self) {}

    fn add(&mut self, (): &mut (), key: &KeyStats<'_>) {
        self.totals.add(key);
        self.top.add(key);
    }

    fn merge_in_order(&mut self, (): &mut ()) {}

    fn totals(&self) -> &Totals {
        &self.totals
    }
}

impl AddAssign for Ranking {
    fn add_assign(&mut self, o: Ranking) {
        self.totals += o.totals;
        self.top += o.top;
    }
}

pub fn run(args: &Config, mut out: impl Write) -> io::Result<Outcome> {
    let options = &args.options;
    let progress = Progress::for_files(args.progress, &args.dumps);
    let a = analysis::analyze(&args.dumps, options, &progress, |source| Ranking {
        totals: Totals::default(),
        top: TopN::new(args.n, args.by, source.file),
    })?;
    let top = &a.merged.top;
    let outcome = Outcome::of(a.failed(), false);
    let filtered = !options.filter.is_empty();
    let mut notes = file_notes(&a.files);
    if top.sorted().is_empty() && a.merged.totals.all().keys > 0 {
        notes.extend(args.by.absent().map(String::from));
    }
    let written = match args.format {
        ListFormat::Csv => {
            csv_files::write_top(&mut out, [(args.by.ranking().to_string(), top)], &a.files)
        }
        ListFormat::Json => {
            let totals = a.merged.totals.all();
            let json = TopJson::new(top, args.n, &a.files, totals, filtered, notes);
            serde_json::to_writer_pretty(&mut out, &json)
                .map_err(io::Error::from)
                .and_then(|()| out.write_all(b"\n"))
        }
        ListFormat::Table => {
            let mut text = partial_banner(&a.files).unwrap_or_default();
            if a.files.len() > 1 {
                tables::files_section(&mut text, &a.files);
            }
            text.push_str(&format!(
                "{}\n{}\n\n",
                args.by.title(),
                tables::top_table(top, &a.files, args.n, a.merged.totals.all().into())
            ));
            notes_section(&mut text, &notes);
            out.write_all(text.as_bytes())
        }
    };
    keep_verdict(written.and_then(|()| out.flush()), outcome)
}
