//! `rdbscope lint`: the key-design rules (docs/lint.md) over one or more dumps, as a
//! summary and findings table, one JSON object or CSV rows. Exit 1 when a finding is at
//! or above `--fail-on`, 2 when a dump could not be read whole.

use super::{keep_verdict, Outcome};
use crate::aggregates::prefixes::PrefixConfig;
use crate::aggregates::AggregateConfig;
use crate::lint::{self, LintConfig, Linted, Severity};
use crate::pass::analysis;
use crate::pass::pipeline::Options;
use crate::pass::progress::{Progress, ProgressMode};
use crate::report::lint as output;
use crate::report::run::notes::partial_banner;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;

/// What `lint` prints on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LintFormat {
    Table,
    Json,
    Csv,
}

/// What `lint` was asked for.
pub struct Config {
    pub dumps: Vec<PathBuf>,
    pub format: LintFormat,
    /// Exit 1 when a finding is at or above this.
    pub fail_on: Severity,
    pub lint: LintConfig,
    /// How keys are grouped, for the rules over prefixes and patterns.
    pub prefixes: PrefixConfig,
    pub options: Options,
    pub progress: ProgressMode,
}

pub fn run(args: &Config, mut out: impl Write) -> io::Result<Outcome> {
    let config = Arc::new(args.lint.clone());
    // The group rules read the rollups; the top-N lists are not needed.
    let aggregates = AggregateConfig {
        top_n: 1,
        prefixes: args.prefixes.clone(),
    };
    let progress = Progress::for_files(args.progress, &args.dumps);
    let analysis = analysis::analyze(&args.dumps, &args.options, &progress, |source| {
        Linted::new(&aggregates, &config, source)
    })?;
    let (analysis, report) = lint::evaluate(analysis);
    let outcome = Outcome::of(analysis.failed(), report.fails(args.fail_on));
    let written = match args.format {
        LintFormat::Table => out.write_all(
            (partial_banner(&analysis.files).unwrap_or_default() + &output::tables(&report))
                .as_bytes(),
        ),
        LintFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &output::LintJson::new(&report, None))
                .map_err(io::Error::from)
                .and_then(|()| out.write_all(b"\n"))
        }
        LintFormat::Csv => output::write_csv(&mut out, &report),
    };
    keep_verdict(written.and_then(|()| out.flush()), outcome)
}
