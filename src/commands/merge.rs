//! `rdbscope merge`: runs done apart (one `report --out-dir` per shard, on different
//! machines) merged from their summary.json into the report one run over all their dumps
//! gives. Each summary.json carries its run's aggregates whole (`report::run::state`); they
//! are added up in a canonical order (by their dumps, whatever the order given), as a run
//! adds up its dumps, and reported the way
//! `report` does, without the per-key files.

use super::{report_outcome, Outcome};
use crate::aggregates::groups::SortBy;
use crate::lint::Linted;
use crate::pass::analysis::{merge_target, Analysis, FileOutcome};
use crate::pass::scan::ChecksumVerdict;
use crate::report::run::state::RunState;
use crate::runs::read::{read_state, RunInput};
use crate::runs::written::{create_out_dir, write_report, Outputs, ReportFormat};
use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// The summary.json `path` names: the file, or the one in a report directory.
fn summary_file(path: &Path) -> io::Result<PathBuf> {
    match RunInput::classify(&[path.to_path_buf()])? {
        RunInput::Summary(file) => Ok(file),
        RunInput::Dumps(_) => Err(invalid(format!(
            "{}: not a summary.json nor a report directory (merge reads what rdbscope report \
             --out-dir wrote; analyse dumps with rdbscope report)",
            path.display()
        ))),
    }
}

/// What tells a dump apart from another: a dump given twice would count its keys twice.
fn identity(f: &FileOutcome) -> (&str, u64, u64, Option<i64>, &ChecksumVerdict) {
    (&f.name, f.file_bytes, f.keys_scanned, f.ctime, &f.checksum)
}

/// Dumps of different runs given under the same path (each shard's
/// `/var/lib/redis/dump.rdb`) told apart by their run: `PATH (RUN)`, RUN the report
/// directory (or the summary.json named).
fn tell_apart(runs: &mut [(String, RunState)]) {
    let mut runs_naming: HashMap<String, usize> = HashMap::new();
    for (_, run) in runs.iter() {
        let names: HashSet<&str> = run.files.iter().map(|f| f.name.as_str()).collect();
        for name in names {
            *runs_naming.entry(name.to_string()).or_default() += 1;
        }
    }
    for (origin, run) in runs.iter_mut() {
        let dir = Path::new(origin.as_str())
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| origin.clone(), |p| p.display().to_string());
        for f in &mut run.files {
            if runs_naming[&f.name] > 1 {
                f.name = format!("{} ({dir})", f.name);
            }
        }
    }
}

/// What `merge` was asked for.
pub struct Config {
    /// The runs: each a `report --out-dir` directory or its summary.json.
    pub runs: Vec<PathBuf>,
    /// Where summary.json, report.html and the CSVs also go.
    pub out_dir: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub format: ReportFormat,
    pub sort: SortBy,
    /// Rows of each table on stdout (`--rows`), when given.
    pub rows: Option<usize>,
    /// No message about the files written.
    pub quiet: bool,
    /// Merge runs only part of whose dumps were read instead of refusing them.
    pub allow_partial: bool,
}

/// A dump as the canonical order of runs sees it: name, size, keys, `ctime`.
type DumpKey = (String, u64, u64, Option<i64>);

/// What orders the runs before they are merged, so that the same runs given in any order
/// give the same bytes: their dumps, then where they were read.
fn canonical_order(origin: &str, run: &RunState) -> (Vec<DumpKey>, String) {
    let dumps = run
        .files
        .iter()
        .map(|f| (f.name.clone(), f.file_bytes, f.keys_scanned, f.ctime))
        .collect();
    (dumps, origin.to_owned())
}

pub fn run(args: &Config, out: impl Write) -> io::Result<Outcome> {
    let mut runs: Vec<(String, RunState)> = Vec::with_capacity(args.runs.len());
    for path in &args.runs {
        let file = summary_file(path)?;
        runs.push((file.display().to_string(), read_state(&file)?));
    }
    runs.sort_by_cached_key(|(origin, run)| canonical_order(origin, run));
    if !args.allow_partial {
        if let Some((origin, _)) = runs
            .iter()
            .find(|(_, run)| run.files.iter().any(FileOutcome::partial))
        {
            return Err(invalid(format!(
                "{origin}: PARTIAL, only part of its dumps could be read: merged, the fleet \
                 report would miss what was not read (--allow-partial merges it anyway)"
            )));
        }
    }
    let Some(((first_origin, first), rest)) = runs.split_first() else {
        return Err(invalid("merge: name at least one run".into()));
    };
    for (origin, run) in rest {
        let differences = first
            .settings
            .differences(first_origin, &run.settings, origin);
        if !differences.is_empty() {
            return Err(invalid(format!(
                "cannot merge {origin} with {first_origin}: the runs were made with different \
                 settings, so no single run could give their merge; analyse every shard with \
                 the same flags. Differences: {}",
                differences.join("; ")
            )));
        }
    }
    let mut seen: Vec<(&str, &FileOutcome)> = Vec::new();
    for (origin, run) in &runs {
        for f in &run.files {
            if let Some((earlier, _)) = seen.iter().find(|(_, g)| identity(g) == identity(f)) {
                return Err(invalid(format!(
                    "{}: the same dump is in {earlier} and {origin}; merged twice, its keys \
                     would count twice",
                    f.name
                )));
            }
            seen.push((origin, f));
        }
    }
    let settings = first.settings.clone();
    tell_apart(&mut runs);
    let lint_config = Arc::new(settings.lint.clone());
    let mut merged = merge_target(|source| Linted::new(&settings.aggregates, &lint_config, source));
    let mut files: Vec<FileOutcome> = Vec::new();
    for (_, run) in runs {
        let Analysis {
            files: run_files,
            merged: mut run_aggregates,
        } = run.into_analysis(&lint_config);
        run_aggregates.aggregates.top.shift_files(files.len());
        merged += run_aggregates;
        files.extend(run_files);
    }
    if let Some(dir) = &args.out_dir {
        create_out_dir(dir)?;
    }
    let outputs = Outputs {
        out_dir: args.out_dir.as_deref(),
        key_files: &[],
        html: args.html.as_deref(),
        format: args.format,
        sort: args.sort,
        rows: args.rows,
        quiet: args.quiet,
    };
    let written = write_report(Analysis { files, merged }, &settings, &outputs, None, out)?;
    report_outcome(written)
}
