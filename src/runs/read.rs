//! Reading a run back: what a command argument naming a run stands for — dumps to analyse
//! now, a `report --out-dir` directory, or its summary.json — and the run as a
//! [`SummaryJson`], so runs of either kind compare the same way.

use crate::aggregates::{AggregateConfig, Aggregates};
use crate::lint::{self, LintConfig, LintReport, Linted, Thresholds};
use crate::model::key_stats::KeyStats;
use crate::pass::analysis::{self, Analysis};
use crate::pass::fold::{Aggregator, OrderedFold, Source};
use crate::pass::pipeline::Options;
use crate::pass::progress::Progress;
use crate::pass::totals::Totals;
use crate::report::keys::sinks::RowSinks;
use crate::report::lint::LintJson;
use crate::report::run::state::RunState;
use crate::report::run::summary::{self, SummaryJson};
use std::fs;
use std::io;
use std::ops::AddAssign;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the arguments naming one run stand for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunInput {
    /// Dumps (one per cluster shard) to analyse.
    Dumps(Vec<PathBuf>),
    /// A summary.json, given as such or as the `report --out-dir` directory holding it.
    Summary(PathBuf),
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// Whether `path` holds a JSON document rather than a dump: its first non-blank byte is `{`.
fn looks_like_json(path: &Path) -> io::Result<bool> {
    use std::io::Read;
    let mut head = [0u8; 64];
    let n = fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    Ok(head[..n]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{'))
}

impl RunInput {
    /// What `paths` name: one directory (a `report --out-dir`), one summary.json, or dumps.
    pub fn classify(paths: &[PathBuf]) -> io::Result<RunInput> {
        let [path] = paths else {
            if let Some(p) = paths.iter().find(|p| p.is_dir()) {
                return Err(invalid(format!(
                    "{}: a directory among several arguments: name one report directory, or dumps",
                    p.display()
                )));
            }
            return Ok(RunInput::Dumps(paths.to_vec()));
        };
        if path.is_dir() {
            let file = path.join("summary.json");
            if !file.is_file() {
                return Err(invalid(format!(
                    "{}: no summary.json in this directory (rdbscope report --out-dir writes one)",
                    path.display()
                )));
            }
            return Ok(RunInput::Summary(file));
        }
        if !crate::pass::input::read_once(path) && looks_like_json(path)? {
            return Ok(RunInput::Summary(path.clone()));
        }
        Ok(RunInput::Dumps(paths.to_vec()))
    }
}

/// A summary.json file read back.
pub fn read_summary(path: &Path) -> io::Result<SummaryJson> {
    let text = fs::read_to_string(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    SummaryJson::parse(&text, &path.display().to_string()).map_err(invalid)
}

/// The mergeable state of a summary.json file (`rdbscope merge`).
pub fn read_state(path: &Path) -> io::Result<RunState> {
    let text = fs::read_to_string(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    RunState::read(&text, &path.display().to_string()).map_err(invalid)
}

/// How dumps are analysed into a run.
#[derive(Clone, Copy)]
pub struct DumpSettings<'a> {
    pub options: &'a Options,
    pub config: &'a AggregateConfig,
    pub lint: &'a Arc<LintConfig>,
    pub filtered: bool,
    pub progress: &'a Progress,
}

/// `summary.json` with its `lint` section (the thresholds beside the findings), with
/// `rows` rows in each prefix, pattern and pattern-encoding table.
pub fn summary_with_lint(
    a: &Analysis<Aggregates>,
    lint: &LintReport,
    thresholds: &Thresholds,
    config: &AggregateConfig,
    filtered: bool,
    rows: usize,
) -> SummaryJson {
    let mut s = summary::build_with_rows(a, config, filtered, rows);
    // The thresholds the findings were judged by, so two runs can be compared.
    s.lint = Some(LintJson::new(lint, Some(thresholds)));
    s
}

/// Nothing beside the report's aggregates.
pub struct NoExtra;

impl OrderedFold for NoExtra {
    fn like(&self) -> Self {
        NoExtra
    }

    fn add(&mut self, _: &KeyStats<'_>) {}
}

impl AddAssign for NoExtra {
    fn add_assign(&mut self, _: NoExtra) {}
}

/// Dumps analysed with lint, not yet evaluated (the per-key `rows` written in the same pass
/// when given), and `extra` fed the same keys.
pub fn analyse_linted<E: OrderedFold>(
    dumps: &[PathBuf],
    settings: &DumpSettings<'_>,
    rows: Option<&mut RowSinks<'_, '_>>,
    extra: impl Fn(Source) -> E + Sync,
) -> io::Result<(Analysis<Linted>, E)> {
    let make = |source| WithExtra {
        linted: Linted::new(settings.config, settings.lint, source),
        extra: extra(source),
    };
    let a = analysis::analyze_writing(dumps, settings.options, settings.progress, rows, make)?;
    let Analysis { files, merged } = a;
    let WithExtra { linted, extra } = merged;
    let a = Analysis {
        files,
        merged: linted,
    };
    Ok((a, extra))
}

/// A run analysed in this process as `diff` reads a run: the summary a report would write,
/// with every held row of the group tables.
pub fn run_summary(
    a: &Analysis<Aggregates>,
    lint: &LintReport,
    settings: &DumpSettings<'_>,
) -> SummaryJson {
    summary_with_lint(
        a,
        lint,
        &settings.lint.thresholds,
        settings.config,
        settings.filtered,
        usize::MAX,
    )
}

/// Dumps analysed with lint into the summary a report would write (every held row of the
/// group tables), whether some dump failed, and `extra` fed the same keys.
pub fn analyse_dumps<E: OrderedFold>(
    dumps: &[PathBuf],
    settings: &DumpSettings<'_>,
    extra: impl Fn(Source) -> E + Sync,
) -> io::Result<(SummaryJson, bool, E)> {
    let (a, extra) = analyse_linted(dumps, settings, None, extra)?;
    let (a, lint) = lint::evaluate(a);
    let run = run_summary(&a, &lint, settings);
    Ok((run, a.failed(), extra))
}

/// The report's aggregates with lint, and another aggregator fed the same keys.
struct WithExtra<E> {
    linted: Linted,
    extra: E,
}

impl<E: OrderedFold> Aggregator for WithExtra<E> {
    /// `extra` takes keys in file order.
    type InOrder = (<Linted as Aggregator>::InOrder, E);

    fn in_order(&self) -> Self::InOrder {
        (self.linted.in_order(), self.extra.like())
    }

    #[inline]
    fn add(&mut self, (linted, extra): &mut Self::InOrder, k: &KeyStats<'_>) {
        self.linted.add(linted, k);
        extra.add(k);
    }

    fn merge_in_order(&mut self, (linted, extra): &mut Self::InOrder) {
        self.linted.merge_in_order(linted);
        self.extra += std::mem::replace(extra, extra.like());
    }

    fn trim(&mut self) {
        self.linted.trim();
        self.extra.trim();
    }

    fn totals(&self) -> &Totals {
        self.linted.totals()
    }
}

impl<E: OrderedFold> AddAssign for WithExtra<E> {
    fn add_assign(&mut self, o: Self) {
        self.linted += o.linted;
        self.extra += o.extra;
    }
}
