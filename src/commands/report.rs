//! `rdbscope report`: every aggregate from one pass, as tables or `summary.json` on stdout,
//! and with `--out-dir` also as files (`keys.csv` and/or `keys.parquet` streamed during the
//! same pass).

use super::replace::{in_file, replace_files};
use super::runs::summary_with_lint;
use super::{keep_verdict, Outcome};
use crate::analysis::{self, Analysis};
use crate::analyze::groups::SortBy;
use crate::analyze::top::Metric;
use crate::analyze::{AggregateConfig, Aggregates};
use crate::cli::{ReportArgs, ReportFormat};
use crate::lint::{self, LintConfig, LintReport, Linted};
use crate::progress::Progress;
use crate::rdb::RedisType;
use crate::report::key_rows::RowSinks;
use crate::report::keys::RowFormat;
use crate::report::run_state::{self, RunSettings};
use crate::report::summary::Summary;
use crate::report::{html, lint as lint_output, rollups, tables};
use std::cell::LazyCell;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub fn run(args: &ReportArgs, out: impl Write) -> io::Result<Outcome> {
    let mut options = args.common.pipeline_options(!args.run.skip_checksum)?;
    // `--under` restricts the keys too, but says so in its own note.
    let filtered = !options.filter.is_empty();
    let config = AggregateConfig {
        top_n: args.top,
        prefixes: args.drill.apply(&args.rollup, &mut options),
    };
    let lint_config = Arc::new(args.lint.config(&args.rollup));
    let progress = Progress::for_files(args.run.progress_mode(), &args.dumps);
    let make = |source| Linted::new(&config, &lint_config, source);
    let mut key_files = Vec::new();
    let analysis = match &args.out_dir {
        None => analysis::analyze(&args.dumps, &options, &progress, None, make)?,
        Some(dir) => {
            create_out_dir(dir)?;
            if args.keys_format.csv() {
                key_files.push("keys.csv");
            }
            if args.keys_format.parquet() {
                key_files.push("keys.parquet");
            }
            if key_files.is_empty() {
                analysis::analyze(&args.dumps, &options, &progress, None, make)?
            } else {
                let paths: Vec<PathBuf> = key_files.iter().map(|name| dir.join(name)).collect();
                replace_files(&paths, |mut files| {
                    let (csv, parquet) = match (args.keys_format.csv(), &mut files[..]) {
                        (true, [csv, parquet]) => (Some(csv), Some(parquet)),
                        (true, [csv]) => (Some(csv), None),
                        (_, [parquet]) => (None, Some(parquet)),
                        _ => unreachable!("one file per format asked for"),
                    };
                    let csv = csv.map(|out| (RowFormat::Csv, out as &mut (dyn Write + Send)));
                    let parquet = parquet.map(|out| out as &mut (dyn Write + Send));
                    let mut sinks = RowSinks::begin(csv, parquet, args.dumps.len() > 1)?;
                    let rows = Some(&mut sinks);
                    let a = analysis::analyze(&args.dumps, &options, &progress, rows, make)?;
                    sinks.finish()?;
                    Ok(a)
                })?
            }
        }
    };
    let settings = RunSettings {
        aggregates: config,
        lint: LintConfig::clone(&lint_config),
        filtered,
        filters: args.common.filter.flags(),
        model: options.overrides.flags(),
    };
    let outputs = Outputs {
        out_dir: args.out_dir.as_deref(),
        key_files: &key_files,
        html: args.html.as_deref(),
        format: args.format,
        sort: args.drill.sort,
        quiet: args.run.quiet,
    };
    write_report(analysis, &settings, &outputs, out)
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
    /// No message about the files written.
    pub quiet: bool,
}

/// Lints `analysis` (made with `settings`) and writes the report where `to` says and to
/// `out`; summary.json carries the run's mergeable state.
pub fn write_report(
    analysis: Analysis<Linted>,
    settings: &RunSettings,
    to: &Outputs<'_>,
    mut out: impl Write,
) -> io::Result<Outcome> {
    let json = to.format == ReportFormat::Json;
    let state = (to.out_dir.is_some() || json)
        .then(|| run_state::write(settings, &analysis))
        .transpose()?;
    let (analysis, lint) = lint::evaluate(analysis);
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
    let page = LazyCell::new(|| html::render(&summary));
    if let Some(dir) = to.out_dir {
        write_out_dir(dir, &analysis, &lint, &summary, &page)?;
        if !to.quiet {
            let keys: String = to
                .key_files
                .iter()
                .map(|name| format!("{name}, "))
                .collect();
            eprintln!(
                "rdbscope: wrote summary.json, report.html, {keys}prefixes.csv, patterns.csv, top.csv, slots.csv and findings.csv to {}",
                dir.display()
            );
        }
    }
    if let Some(path) = to.html {
        fs::write(path, page.as_bytes()).map_err(|e| in_file(path, e))?;
    }
    let outcome = if analysis.failed() {
        Outcome::Failed
    } else {
        Outcome::Clean
    };
    let written = match to.format {
        ReportFormat::Table => out
            .write_all(
                tables::report(&analysis, config.top_n, to.sort, settings.filtered).as_bytes(),
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

/// Creates `dir/name` and fills it with `write`.
fn write_file(
    dir: &Path,
    name: &str,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let path = dir.join(name);
    let mut w = BufWriter::new(File::create(&path).map_err(|e| in_file(&path, e))?);
    write(&mut w)
        .and_then(|()| w.flush())
        .map_err(|e| in_file(&path, e))
}

fn write_out_dir(
    dir: &Path,
    a: &Analysis<Aggregates>,
    lint: &LintReport,
    summary: &Summary,
    page: &str,
) -> io::Result<()> {
    let m = &a.merged;
    write_file(dir, "summary.json", |w| {
        serde_json::to_writer_pretty(&mut *w, summary)?;
        w.write_all(b"\n")
    })?;
    write_file(dir, "report.html", |w| w.write_all(page.as_bytes()))?;
    write_file(dir, "findings.csv", |w| lint_output::write_csv(w, lint))?;
    write_file(dir, "prefixes.csv", |w| {
        rollups::write_prefixes(w, &m.prefixes, SortBy::Memory)
    })?;
    write_file(dir, "patterns.csv", |w| {
        rollups::write_patterns(w, m.patterns.table(), SortBy::Memory)
    })?;
    write_file(dir, "top.csv", |w| {
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
        rollups::write_top(w, overall.into_iter().chain(per_type), &a.files)
    })?;
    write_file(dir, "slots.csv", |w| rollups::write_slots(w, &m.slots))
}
