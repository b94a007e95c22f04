//! `rdbscope report`: every aggregate from one pass, as tables or `summary.json` on stdout,
//! and with `--out-dir` also as files (`keys.csv` and/or `keys.parquet` streamed during the
//! same pass, or the keys as an Arrow stream on stdout in place of the tables). With `--baseline OLD`, the run is compared with OLD as `diff OLD DUMPS` would
//! compare them ([`super::diff`]): the HTML report shows it, `--out-dir` gets the diff files.

use super::diff::{
    compare_sides, load, write_files, DiffKeys, Loaded, DIFF_MIN_KEY_BYTES, DIFF_ROWS,
};
use super::replace::{replace_files, rewind, write_settled, write_whole};
use super::runs::{
    analyse_linted, run_summary, summary_with_lint, DumpSettings, KeyFold, NoExtra, RunInput,
};
use super::{keep_verdict, Outcome};
use crate::analyze::groups::SortBy;
use crate::analyze::top::Metric;
use crate::analyze::{AggregateConfig, Aggregates};
use crate::lint::{self, LintConfig, LintReport, Linted};
use crate::pass::analysis::{self, Analysis};
use crate::pass::fold::Source;
use crate::pass::pipeline::Options;
use crate::pass::progress::{Progress, ProgressMode};
use crate::rdb::RedisType;
use crate::report::diff::compare::{Diff, DiffOptions};
use crate::report::keys::rows::RowFormat;
use crate::report::keys::sinks::{ColumnFormat, RowSinks};
use crate::report::lint as lint_output;
use crate::report::page;
use crate::report::run::state::{self, RunSettings};
use crate::report::run::summary::Summary;
use crate::report::run::{csv_files, tables};
use crate::text::words::and_list;
use std::cell::LazyCell;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What a report prints on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    Table,
    Json,
}

/// Which per-key files `report --out-dir` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeysFiles {
    Csv,
    Parquet,
    Both,
    None,
    /// No file: an Arrow IPC stream on stdout, in place of the tables (one process gives
    /// a dump's rows to a reader as they come and its summary.json in `--out-dir`).
    Arrow,
}

impl KeysFiles {
    pub fn csv(self) -> bool {
        matches!(self, KeysFiles::Csv | KeysFiles::Both)
    }

    pub fn parquet(self) -> bool {
        matches!(self, KeysFiles::Parquet | KeysFiles::Both)
    }
}

/// What `report` was asked for.
pub struct Config {
    pub dumps: Vec<PathBuf>,
    /// Where summary.json, report.html, the CSVs and the per-key files also go.
    pub out_dir: Option<PathBuf>,
    pub keys_files: KeysFiles,
    pub html: Option<PathBuf>,
    /// OLD's paths (`--baseline`), none for no comparison.
    pub baseline: Vec<PathBuf>,
    pub format: ReportFormat,
    /// What the pass aggregates; with `--under`, `options` keeps only the keys under it.
    pub aggregates: AggregateConfig,
    pub lint: LintConfig,
    pub options: Options,
    /// Whether a filter flag left keys out (`--under` says so in its own note).
    pub filtered: bool,
    /// The filter flags as given, one flag and its value each (runs merge only alike).
    pub filters: Vec<String>,
    pub sort: SortBy,
    /// Rows of each table on stdout (`--rows`), when given.
    pub rows: Option<usize>,
    pub progress: ProgressMode,
    /// No progress bar and no message about the files written.
    pub quiet: bool,
}

/// `--baseline OLD`: what it names.
struct BaselineInput {
    paths: Vec<PathBuf>,
    input: RunInput,
}

impl BaselineInput {
    /// When both runs are dumps, the keys each side folds for the key-by-key comparison
    /// (`with_ttl` for OLD).
    fn compare_keys(&self, with_ttl: bool) -> Option<(u64, bool)> {
        matches!(self.input, RunInput::Dumps(_)).then_some((DIFF_MIN_KEY_BYTES, with_ttl))
    }
}

/// OLD read, and what the report's pass folded of NEW, to compare once NEW is linted.
pub struct Baseline<'a> {
    input: RunInput,
    old: Loaded,
    new_dumps: &'a [PathBuf],
    new_keys: Option<DiffKeys>,
    settings: DumpSettings<'a>,
}

impl Baseline<'_> {
    /// OLD compared with the linted NEW as `diff` compares them, and whether OLD's dumps
    /// failed.
    fn compare(self, new: &Analysis<Aggregates>, lint: &LintReport) -> io::Result<(Diff, bool)> {
        let old_failed = self.old.failed();
        let new_summary = run_summary(new, lint, self.new_dumps, &self.settings)?;
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

/// The report's pass: the dumps analysed with lint, the per-key files of `--out-dir` (or
/// the Arrow stream to `stdout`) written in the same pass, and `extra` fed the same keys.
fn pass<E: KeyFold>(
    args: &Config,
    settings: &DumpSettings<'_>,
    key_files: &mut Vec<&'static str>,
    stdout: &mut (dyn Write + Send),
    extra: impl Fn(Source) -> E + Sync,
) -> io::Result<(Analysis<Linted>, E)> {
    let Some(dir) = &args.out_dir else {
        return analyse_linted(&args.dumps, settings, None, extra);
    };
    // Nothing is written for dumps that cannot be read (unless --allow-partial).
    analysis::check_dumps(&args.dumps, settings.options)?;
    let created = !dir.exists();
    create_out_dir(dir)?;
    let passed = pass_into(args, settings, key_files, stdout, dir, extra);
    if passed.is_err() && created {
        // A dump refused once read (standard input, a compressed file, a live source that
        // is not an RDB) leaves no directory behind; one with files in it stays.
        let _ = fs::remove_dir(dir);
    }
    passed
}

/// [`pass`] once `dir` exists.
fn pass_into<E: KeyFold>(
    args: &Config,
    settings: &DumpSettings<'_>,
    key_files: &mut Vec<&'static str>,
    stdout: &mut (dyn Write + Send),
    dir: &Path,
    extra: impl Fn(Source) -> E + Sync,
) -> io::Result<(Analysis<Linted>, E)> {
    if args.keys_files == KeysFiles::Arrow {
        let arrow = Some((ColumnFormat::Arrow, stdout));
        let (analysis, extra) = RowSinks::with(None, arrow, args.dumps.len() > 1, |sinks| {
            analyse_linted(&args.dumps, settings, Some(sinks), &extra)
        })?;
        analysis.warn_unsettled(settings.progress);
        return Ok((analysis, extra));
    }
    if args.keys_files.csv() {
        key_files.push("keys.csv");
    }
    if args.keys_files.parquet() {
        key_files.push("keys.parquet");
    }
    if key_files.is_empty() {
        return analyse_linted(&args.dumps, settings, None, extra);
    }
    let paths: Vec<PathBuf> = key_files.iter().map(|name| dir.join(name)).collect();
    replace_files(&paths, |mut files| {
        let mut extras = None;
        let analysis = write_settled(
            &args.dumps,
            settings.options,
            settings.progress,
            |options, again| {
                if again {
                    files.iter_mut().try_for_each(rewind)?;
                }
                let (csv, parquet) = match (args.keys_files.csv(), &mut files[..]) {
                    (true, [csv, parquet]) => (Some(csv), Some(parquet)),
                    (true, [csv]) => (Some(csv), None),
                    (_, [parquet]) => (None, Some(parquet)),
                    _ => unreachable!("one file per format asked for"),
                };
                let csv = csv.map(|out| (RowFormat::Csv, out as &mut (dyn Write + Send)));
                let parquet =
                    parquet.map(|out| (ColumnFormat::Parquet, out as &mut (dyn Write + Send)));
                let settings = DumpSettings {
                    options,
                    ..*settings
                };
                let (analysis, extra) =
                    RowSinks::with(csv, parquet, args.dumps.len() > 1, |sinks| {
                        analyse_linted(&args.dumps, &settings, Some(sinks), &extra)
                    })?;
                extras = Some(extra);
                Ok(analysis)
            },
        )?;
        Ok((analysis, extras.expect("the rows were written")))
    })
}

pub fn run(args: &Config, mut out: impl Write + Send) -> io::Result<Outcome> {
    let (options, filtered) = (&args.options, args.filtered);
    let lint_config = Arc::new(args.lint.clone());
    let settings = RunSettings {
        aggregates: args.aggregates.clone(),
        lint: args.lint.clone(),
        filtered,
        filters: args.filters.clone(),
        model: options.overrides.flags(),
    };
    let baseline = match &args.baseline[..] {
        [] => None,
        paths => {
            let input = RunInput::classify(paths)?;
            let stdin = |d: &[PathBuf]| d.iter().any(|p| p == Path::new("-"));
            if matches!(&input, RunInput::Dumps(d) if stdin(d)) && stdin(&args.dumps) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "only one run can be read from standard input (-): the dumps or --baseline",
                ));
            }
            Some(BaselineInput {
                paths: paths.to_vec(),
                input,
            })
        }
    };
    let old_dumps = match &baseline {
        Some(BaselineInput {
            input: RunInput::Dumps(d),
            ..
        }) => &d[..],
        _ => &[],
    };
    let old_progress = Progress::for_files(args.progress, old_dumps);
    let old_settings = DumpSettings {
        options,
        config: &settings.aggregates,
        lint: &lint_config,
        filtered,
        progress: &old_progress,
    };
    // OLD first: a baseline that cannot be read fails before the long pass.
    let old = match baseline {
        None => None,
        Some(b) => {
            let loaded = load(&b.input, &b.paths, &old_settings, b.compare_keys(true))?;
            Some((b, loaded))
        }
    };
    let progress = Progress::for_files(args.progress, &args.dumps);
    let dump_settings = DumpSettings {
        progress: &progress,
        ..old_settings
    };
    let mut key_files = Vec::new();
    let (analysis, baseline) = match old {
        Some((b, old)) => {
            let compare_keys = b.compare_keys(false);
            let (analysis, keys) = pass(args, &dump_settings, &mut key_files, &mut out, |s| {
                DiffKeys::new(s.file, compare_keys)
            })?;
            let baseline = Baseline {
                input: b.input,
                old,
                new_dumps: &args.dumps,
                new_keys: compare_keys.map(|_| keys),
                settings: dump_settings,
            };
            (analysis, Some(baseline))
        }
        None => {
            let (analysis, NoExtra) =
                pass(args, &dump_settings, &mut key_files, &mut out, |_| NoExtra)?;
            (analysis, None)
        }
    };
    let outputs = Outputs {
        out_dir: args.out_dir.as_deref(),
        key_files: &key_files,
        html: args.html.as_deref(),
        format: args.format,
        sort: args.sort,
        rows: args.rows,
        quiet: args.quiet,
    };
    if args.keys_files == KeysFiles::Arrow && args.out_dir.is_some() {
        // Standard output holds the keys; the tables are in --out-dir's files.
        return write_report(analysis, &settings, &outputs, baseline, io::sink());
    }
    write_report(analysis, &settings, &outputs, baseline, out)
}

/// Where a report goes once its dumps are analysed (or its runs merged).
pub struct Outputs<'a> {
    /// summary.json, report.html and the tables are written here.
    pub out_dir: Option<&'a Path>,
    /// The per-key files already written to `out_dir` during the pass.
    pub key_files: &'a [&'a str],
    pub html: Option<&'a Path>,
    /// What stdout shows.
    pub format: ReportFormat,
    pub sort: SortBy,
    /// Rows of each table on stdout (`--rows`), when given.
    pub rows: Option<usize>,
    /// No message about the files written.
    pub quiet: bool,
}

/// Lints `analysis` (made with `settings`) and writes the report where `to` says and to
/// `out`; summary.json carries the run's mergeable state. With a `baseline`, the page shows
/// what changed since it and `to.out_dir` gets the diff files.
pub fn write_report(
    analysis: Analysis<Linted>,
    settings: &RunSettings,
    to: &Outputs<'_>,
    baseline: Option<Baseline<'_>>,
    mut out: impl Write,
) -> io::Result<Outcome> {
    let json = to.format == ReportFormat::Json;
    let state = (to.out_dir.is_some() || json)
        .then(|| state::write(settings, &analysis))
        .transpose()?;
    let (analysis, lint) = lint::evaluate(analysis);
    let diff = baseline.map(|b| b.compare(&analysis, &lint)).transpose()?;
    let config = &settings.aggregates;
    // Built once, for whichever of summary.json, report.html and `--format json` want it.
    let summary = LazyCell::new(|| {
        let mut s = summary_with_lint(
            &analysis,
            &lint,
            &settings.lint.thresholds,
            config,
            settings.filtered,
            config.top_n,
        );
        s.state = state;
        s
    });
    let since = diff.as_ref().map(|(d, _)| d);
    let page = LazyCell::new(|| page::render(&summary, since));
    if let Some(dir) = to.out_dir {
        let files = write_out_dir(dir, &analysis, &lint, &summary, &page, since)?;
        if !to.quiet {
            // The per-key files were written during the pass.
            let written = [to.key_files, &files].concat();
            eprintln!(
                "rdbscope: wrote {} to {}",
                and_list(&written),
                dir.display()
            );
        }
    }
    if let Some(path) = to.html {
        write_whole(path, |w| w.write_all(page.as_bytes()))?;
    }
    let outcome = if analysis.failed() || diff.as_ref().is_some_and(|(_, failed)| *failed) {
        Outcome::Failed
    } else {
        Outcome::Clean
    };
    let written = match to.format {
        ReportFormat::Table => out
            .write_all(
                tables::report(&analysis, config.top_n, to.rows, to.sort, settings.filtered)
                    .as_bytes(),
            )
            .and_then(|()| out.write_all(lint_output::summary_table(&lint).as_bytes())),
        ReportFormat::Json => serde_json::to_writer_pretty(&mut out, &*summary)
            .map_err(io::Error::from)
            .and_then(|()| out.write_all(b"\n")),
    };
    keep_verdict(written.and_then(|()| out.flush()), outcome)
}

/// `dir`, created with its parents when missing; a file in the way is named as such.
pub fn create_out_dir(dir: &Path) -> io::Result<()> {
    let existing = dir.ancestors().find(|p| p.exists());
    if let Some(file) = existing.filter(|p| !p.is_dir()) {
        let what = if file == dir {
            "is a file".to_string()
        } else {
            format!("{} is a file", file.display())
        };
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "--out-dir {}: {what}, not a directory (name a directory; it is created when missing)",
                dir.display()
            ),
        ));
    }
    fs::create_dir_all(dir).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "--out-dir {}: cannot create the directory: {e}",
                dir.display()
            ),
        )
    })
}

/// Writes `dir/name` whole with `write`, and adds its name to `written`.
fn write_file(
    dir: &Path,
    name: &'static str,
    written: &mut Vec<&'static str>,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    write_whole(&dir.join(name), write)?;
    written.push(name);
    Ok(())
}

/// The files of `--out-dir` beside the per-key ones, each written whole: their names, in
/// the order written.
fn write_out_dir(
    dir: &Path,
    a: &Analysis<Aggregates>,
    lint: &LintReport,
    summary: &Summary,
    page: &str,
    baseline: Option<&Diff>,
) -> io::Result<Vec<&'static str>> {
    let m = &a.merged;
    let mut written = Vec::new();
    write_file(dir, "summary.json", &mut written, |w| {
        serde_json::to_writer_pretty(&mut *w, summary)?;
        w.write_all(b"\n")
    })?;
    write_file(dir, "report.html", &mut written, |w| {
        w.write_all(page.as_bytes())
    })?;
    if let Some(diff) = baseline {
        written.extend(write_files(dir, diff)?);
    }
    write_file(dir, "prefixes.csv", &mut written, |w| {
        csv_files::write_prefixes(w, &m.prefixes, SortBy::Memory)
    })?;
    write_file(dir, "patterns.csv", &mut written, |w| {
        csv_files::write_patterns(w, m.patterns.table(), SortBy::Memory)
    })?;
    write_file(dir, "top.csv", &mut written, |w| {
        let t = &m.top;
        let overall = [
            (Metric::Memory, &t.by_memory),
            (Metric::Elements, &t.by_elements),
            (Metric::Serialized, &t.by_serialized),
        ]
        .map(|(metric, top)| (metric.ranking().to_string(), top));
        let per_type = RedisType::ALL
            .iter()
            .zip(&t.by_type)
            .map(|(ty, top)| (format!("memory:{}", ty.name()), top));
        csv_files::write_top(w, overall.into_iter().chain(per_type), &a.files)
    })?;
    write_file(dir, "slots.csv", &mut written, |w| {
        csv_files::write_slots(w, &m.slots)
    })?;
    write_file(dir, "findings.csv", &mut written, |w| {
        lint_output::write_csv(w, lint)
    })?;
    Ok(written)
}
