//! A report written where it was asked for, once its dumps are analysed (`report`) or its
//! runs merged (`merge`): the tables or summary.json on stdout, the files of `--out-dir`,
//! the page of `--html`.

use super::compare::{write_files, Baseline};
use super::files::write_whole;
use super::read::summary_with_lint;
use crate::aggregates::groups::SortBy;
use crate::aggregates::top::Metric;
use crate::aggregates::Aggregates;
use crate::lint::{self, LintReport, Linted};
use crate::pass::analysis::Analysis;
use crate::rdb::RedisType;
use crate::report::diff::compare::Diff;
use crate::report::lint as lint_output;
use crate::report::page;
use crate::report::run::state::{self, RunSettings};
use crate::report::run::summary::SummaryJson;
use crate::report::run::{csv_files, tables};
use crate::text::words::and_list;
use std::cell::LazyCell;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// What a report prints on stdout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    Table,
    Json,
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

/// A report written.
pub struct Written {
    /// Some dump of the run (or of its baseline) was not read whole.
    pub failed: bool,
    /// How writing standard output went, last (a reader that closed the pipe early does
    /// not change the verdict).
    pub stdout: io::Result<()>,
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
) -> io::Result<Written> {
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
    let failed = analysis.failed() || diff.as_ref().is_some_and(|(_, failed)| *failed);
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
    Ok(Written {
        failed,
        stdout: written.and_then(|()| out.flush()),
    })
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
    summary: &SummaryJson,
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
