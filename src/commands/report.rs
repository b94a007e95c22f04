//! `rdbscope report`: every aggregate from one pass, as tables or `summary.json` on stdout,
//! and with `--out-dir` also as files (`keys.csv` streamed during the same pass).

use super::{keep_verdict, Outcome};
use crate::analysis::{self, Analysis, RowSink};
use crate::analyze::top::Metric;
use crate::analyze::{AggregateConfig, Aggregates};
use crate::cli::{ReportArgs, ReportFormat};
use crate::lint::{self, LintReport, Linted, Thresholds};
use crate::progress::Progress;
use crate::rdb::RedisType;
use crate::report::keys::{KeysFormat, RowFormat};
use crate::report::{html, lint as lint_output, rollups, summary, tables};
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

pub fn run(args: &ReportArgs, mut out: impl Write) -> io::Result<Outcome> {
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
    let analysis = match &args.out_dir {
        None => analysis::analyze(&args.dumps, &options, &progress, None, make)?,
        Some(dir) => {
            create_out_dir(dir)?;
            let path = dir.join("keys.csv");
            // Rows go to a new file, renamed over `keys.csv` once complete. The previous
            // run's file (hundreds of megabytes for a big dump) is deleted meanwhile on
            // another thread: the kernel takes a while to free its pages, which truncating
            // it in place would make the pass wait for.
            let partial = dir.join("keys.csv.partial");
            if path.is_dir() {
                return Err(in_file(&path, io::Error::other("is a directory")));
            }
            let mut keys = BufWriter::with_capacity(
                1 << 20,
                File::create(&partial).map_err(|e| in_file(&partial, e))?,
            );
            let analysed = std::thread::scope(|scope| -> io::Result<_> {
                let old = scope.spawn(|| match fs::remove_file(&path) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                    _ => Ok(()),
                });
                let format = RowFormat::new(KeysFormat::Csv, None);
                keys.write_all(format.header().as_bytes())?;
                let sink = RowSink {
                    format,
                    out: &mut keys,
                };
                let a = analysis::analyze(&args.dumps, &options, &progress, Some(sink), make)?;
                keys.flush()?;
                old.join().expect("removing a file does not panic")?;
                Ok(a)
            });
            match analysed.and_then(|a| fs::rename(&partial, &path).map(|()| a)) {
                Ok(a) => a,
                Err(e) => {
                    let _ = fs::remove_file(&partial);
                    return Err(in_file(&path, e));
                }
            }
        }
    };
    let (analysis, lint) = lint::evaluate(analysis);
    if let Some(dir) = &args.out_dir {
        write_out_dir(
            dir,
            &analysis,
            &lint,
            &lint_config.thresholds,
            &config,
            filtered,
        )?;
        if !args.run.quiet {
            eprintln!(
                "rdbscope: wrote summary.json, report.html, keys.csv, prefixes.csv, patterns.csv, top.csv, slots.csv and findings.csv to {}",
                dir.display()
            );
        }
    }
    if let Some(path) = &args.html {
        let page = html::render(&summary_with_lint(
            &analysis,
            &lint,
            &lint_config.thresholds,
            &config,
            filtered,
        ));
        fs::write(path, page).map_err(|e| in_file(path, e))?;
    }
    let outcome = if analysis.failed() {
        Outcome::Failed
    } else {
        Outcome::Clean
    };
    let written = match args.format {
        ReportFormat::Table => out
            .write_all(tables::report(&analysis, config.top_n, filtered).as_bytes())
            .and_then(|()| out.write_all(lint_output::summary_table(&lint).as_bytes())),
        ReportFormat::Json => serde_json::to_writer_pretty(
            &mut out,
            &summary_with_lint(&analysis, &lint, &lint_config.thresholds, &config, filtered),
        )
        .map_err(io::Error::from)
        .and_then(|()| out.write_all(b"\n")),
    };
    keep_verdict(written.and_then(|()| out.flush()), outcome)
}

/// `dir`, created with its parents when missing; a file in the way is named as such.
fn create_out_dir(dir: &Path) -> io::Result<()> {
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

fn in_file(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
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

/// `summary.json` with its `lint` section.
fn summary_with_lint(
    a: &Analysis<Aggregates>,
    lint: &LintReport,
    thresholds: &Thresholds,
    config: &AggregateConfig,
    filtered: bool,
) -> summary::Summary {
    let mut s = summary::build(a, config, filtered);
    let mut lint_json = lint_output::json(lint);
    if let Some(section) = lint_json.as_object_mut() {
        // The thresholds the findings were judged by, so two runs can be compared.
        let thresholds = serde_json::to_value(thresholds).unwrap_or_default();
        section.insert("thresholds".into(), thresholds);
    }
    s.lint = Some(lint_json);
    s
}

fn write_out_dir(
    dir: &Path,
    a: &Analysis<Aggregates>,
    lint: &LintReport,
    thresholds: &Thresholds,
    config: &AggregateConfig,
    filtered: bool,
) -> io::Result<()> {
    let m = &a.merged;
    let summary = summary_with_lint(a, lint, thresholds, config, filtered);
    write_file(dir, "summary.json", |w| {
        serde_json::to_writer_pretty(&mut *w, &summary)?;
        w.write_all(b"\n")
    })?;
    write_file(dir, "report.html", |w| {
        w.write_all(html::render(&summary).as_bytes())
    })?;
    write_file(dir, "findings.csv", |w| lint_output::write_csv(w, lint))?;
    write_file(dir, "prefixes.csv", |w| {
        rollups::write_prefixes(w, &m.prefixes)
    })?;
    write_file(dir, "patterns.csv", |w| {
        rollups::write_patterns(w, m.patterns.table())
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
