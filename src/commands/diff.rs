//! `rdbscope diff OLD NEW`: the two runs read and compared ([`crate::runs::compare`]),
//! both sides at once on the pool, and the comparison written as a table, CSV or JSON, to
//! stdout and `--out-dir`; `--fail-on-growth` alerts make the exit code 1.

use super::{keep_verdict, Outcome};
use crate::aggregates::AggregateConfig;
use crate::lint::LintConfig;
use crate::pass::pipeline::Options;
use crate::pass::progress::{Progress, ProgressMode};
use crate::report::diff::compare::DiffOptions;
use crate::report::diff::tables as diff_tables;
use crate::runs::compare::{compare_sides, load, write_files};
use crate::runs::read::{DumpSettings, RunInput};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What `diff` prints on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffFormat {
    Table,
    Csv,
    Json,
}

/// What `diff` was asked for.
pub struct Config {
    /// OLD: a dump, a `report --out-dir` directory or a summary.json; or several dumps.
    pub old: Vec<PathBuf>,
    /// NEW, as OLD.
    pub new: Vec<PathBuf>,
    pub format: DiffFormat,
    /// Where diff.txt, diff.csv and diff.json are also written.
    pub out_dir: Option<PathBuf>,
    pub diff: DiffOptions,
    /// When both sides are dumps, keys of at least this memory are compared key by key.
    pub min_key_bytes: u64,
    /// What a dump analysed here aggregates and lints.
    pub aggregates: AggregateConfig,
    pub lint: LintConfig,
    pub options: Options,
    pub progress: ProgressMode,
    /// No alert messages on stderr.
    pub quiet: bool,
}

pub fn run(args: &Config, mut out: impl Write) -> io::Result<Outcome> {
    let (old_paths, new_paths) = (&args.old, &args.new);
    let old_input = RunInput::classify(old_paths)?;
    let new_input = RunInput::classify(new_paths)?;
    let stdin =
        |i: &RunInput| matches!(i, RunInput::Dumps(d) if d.iter().any(|p| p == Path::new("-")));
    if stdin(&old_input) && stdin(&new_input) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "only one side can be read from standard input (-)",
        ));
    }
    let options = &args.options;
    let config = &args.aggregates;
    let lint_config = Arc::new(args.lint.clone());
    let all_dumps: Vec<PathBuf> = [&old_input, &new_input]
        .into_iter()
        .filter_map(|i| match i {
            RunInput::Dumps(d) => Some(d.clone()),
            RunInput::Summary(_) => None,
        })
        .flatten()
        .collect();
    let progress = Progress::for_files(args.progress, &all_dumps);
    let settings = DumpSettings {
        options,
        config,
        lint: &lint_config,
        filtered: !options.filter.is_empty(),
        progress: &progress,
    };
    let both_dumps = matches!(
        (&old_input, &new_input),
        (RunInput::Dumps(_), RunInput::Dumps(_))
    );
    let compare_keys = |with_ttl| both_dumps.then_some((args.min_key_bytes, with_ttl));
    let (old, new) = rayon::join(
        || load(&old_input, old_paths, &settings, compare_keys(true)),
        || load(&new_input, new_paths, &settings, compare_keys(false)),
    );
    progress.finish();
    let (old, new) = (old?, new?);
    let (old_failed, new_failed) = (old.failed(), new.failed());
    let diff = compare_sides(
        (&old_input, old),
        (&new_input, new),
        options,
        args.min_key_bytes,
        &args.diff,
    )?;
    if let Some(dir) = &args.out_dir {
        fs::create_dir_all(dir)
            .map_err(|e| io::Error::new(e.kind(), format!("--out-dir {}: {e}", dir.display())))?;
        write_files(dir, &diff)?;
    }
    let outcome = Outcome::of(old_failed || new_failed, !diff.alerts.is_empty());
    if !args.quiet {
        for a in &diff.alerts {
            eprintln!("rdbscope: alert {}", a.describe());
        }
    }
    let written = match args.format {
        DiffFormat::Table => out.write_all(diff_tables::render(&diff).as_bytes()),
        DiffFormat::Csv => diff_tables::write_csv(&mut out, &diff),
        DiffFormat::Json => serde_json::to_writer_pretty(&mut out, &diff)
            .map_err(io::Error::from)
            .and_then(|()| out.write_all(b"\n")),
    };
    keep_verdict(written.and_then(|()| out.flush()), outcome)
}
