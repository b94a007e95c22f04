//! `rdbscope report`: every aggregate from one pass, as tables or `summary.json` on stdout,
//! and with `--out-dir` also as files (`keys.csv` and/or `keys.parquet` streamed during the
//! same pass, or the keys as an Arrow stream on stdout in place of the tables). With
//! `--baseline OLD`, the run is compared with OLD as `diff OLD DUMPS` would compare them
//! ([`crate::runs::compare`]): the HTML report shows it, `--out-dir` gets the diff files.

use super::{report_outcome, Outcome};
use crate::aggregates::groups::SortBy;
use crate::aggregates::AggregateConfig;
use crate::lint::LintConfig;
use crate::lint::Linted;
use crate::pass::analysis::{self, Analysis};
use crate::pass::fold::{OrderedFold, Source};
use crate::pass::pipeline::Options;
use crate::pass::progress::{Progress, ProgressMode};
use crate::report::keys::rows::RowFormat;
use crate::report::keys::sinks::{ColumnFormat, RowSinks};
use crate::report::run::state::RunSettings;
use crate::runs::compare::{load, Baseline, DiffKeys, DIFF_MIN_KEY_BYTES};
use crate::runs::files::{replace_files, rewind, write_settled};
use crate::runs::read::{analyse_linted, DumpSettings, NoExtra, RunInput};
use crate::runs::written::{create_out_dir, write_report, Outputs, ReportFormat};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// The report's pass: the dumps analysed with lint, the per-key files of `--out-dir` (or
/// the Arrow stream to `stdout`) written in the same pass, and `extra` fed the same keys.
fn pass<E: OrderedFold>(
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
fn pass_into<E: OrderedFold>(
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
                    // What the first run folded beside is not held through the second.
                    extras = None;
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
        return report_outcome(write_report(
            analysis,
            &settings,
            &outputs,
            baseline,
            io::sink(),
        )?);
    }
    report_outcome(write_report(analysis, &settings, &outputs, baseline, out)?)
}
