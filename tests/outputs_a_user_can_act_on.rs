//! Outputs a user can act on. The same dump and flags give the same bytes whatever
//! `--threads` is: a 500,000-key dump whose prefix and pattern tables overflow their
//! capacity, through `report --out-dir` (every file), `prefixes --format csv` and `top
//! --format csv` with 1, 2 and 8 threads, twice with 2. A run that cannot read its dumps is
//! an error, with nothing written; a damaged dump's report says PARTIAL; `diff` and `merge`
//! refuse a partial side unless `--allow-partial`; `merge` gives the same bytes whatever the
//! order of its runs. A pipe or a device named as an output is written to, never replaced.

mod craft;

use craft::Rdb;
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const KEYS: usize = 500_000;
/// Far fewer than the dump's distinct prefixes and patterns: every table overflows.
const CAP: &str = "300";

fn rdbscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args(args)
        .output()
        .expect("rdbscope runs")
}

fn arg(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temporary path")
}

/// 500,000 strings under 5,000 tenants, 37 kinds and many one-key names: values of 1 to
/// 200 bytes, a third with a TTL, and a `ctime` so that no figure depends on the clock.
fn many_keys(path: &Path) {
    let mut rdb = Rdb::new(BufWriter::new(File::create(path).unwrap())).unwrap();
    rdb.aux("ctime", "1700000000").unwrap();
    rdb.select_db(0).unwrap();
    let value = [b'v'; 200];
    for i in 0..KEYS {
        let key = match i % 4 {
            0 => format!("tenant{}:kind{}:{i}", i % 5000, i % 37),
            1 => format!("t{}x:item", i % 90_000),
            2 => format!("cache:page{}:{}", i % 700, i % 11),
            _ => format!("s{i}q:{}:leaf", i % 13),
        };
        let len = 1 + (i * 7919) % 200;
        let expiry = (i % 3 == 0).then_some(1_800_000_000_000 + i as i64);
        rdb.set_string(key.as_bytes(), &value[..len], expiry)
            .unwrap();
    }
    rdb.finish().unwrap();
}

/// Every output of one run with `threads`, by name.
fn outputs(dump: &Path, dir: &Path, threads: &str) -> BTreeMap<String, Vec<u8>> {
    let out_dir = dir.join(format!("run-{threads}"));
    let _ = fs::remove_dir_all(&out_dir);
    let common = ["--threads", threads, "-q"];
    let mut all = BTreeMap::new();
    let report = rdbscope(
        &[
            &[
                "report",
                arg(dump),
                "--out-dir",
                arg(&out_dir),
                "--max-prefixes",
                CAP,
            ][..],
            &common,
        ]
        .concat(),
    );
    assert!(report.status.success(), "{report:?}");
    all.insert("report (table)".to_string(), report.stdout);
    for entry in fs::read_dir(&out_dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        all.insert(name, fs::read(&path).unwrap());
    }
    for (name, args) in [
        (
            "prefixes --depth 2 --format csv",
            &[
                "prefixes",
                "--depth",
                "2",
                "--format",
                "csv",
                "--max-prefixes",
                CAP,
            ][..],
        ),
        (
            "prefixes --patterns --format csv",
            &[
                "prefixes",
                "--patterns",
                "--format",
                "csv",
                "--max-prefixes",
                CAP,
            ],
        ),
        ("top --format csv", &["top", "--format", "csv"]),
    ] {
        let out = rdbscope(&[args, &[arg(dump)], &common].concat());
        assert!(out.status.success(), "{name}: {out:?}");
        all.insert(name.to_string(), out.stdout);
    }
    all
}

#[test]
fn the_same_bytes_whatever_the_threads() {
    let tmp = tempfile::TempDir::new().unwrap();
    let dump = tmp.path().join("many.rdb");
    many_keys(&dump);
    let first = outputs(&dump, tmp.path(), "2");
    // What makes the check meaningful: the tables overflowed, so their light rows are
    // what a split of the keys between threads could change.
    let csv = String::from_utf8(first["prefixes --depth 2 --format csv"].clone()).unwrap();
    assert!(csv.lines().any(|l| l.starts_with("(other),")), "{csv:.400}");
    let summary = String::from_utf8(first["summary.json"].clone()).unwrap();
    assert!(summary.contains("\"capped\": true"));
    assert!(first.contains_key("keys.csv") && first.contains_key("report.html"));
    assert_eq!(first.len(), 12, "{:?}", first.keys().collect::<Vec<_>>());
    for threads in ["1", "8", "2"] {
        let again = outputs(&dump, tmp.path(), threads);
        assert_eq!(again.len(), first.len());
        for (name, bytes) in &first {
            assert!(
                again[name] == *bytes,
                "{name} differs between --threads 2 and --threads {threads}"
            );
        }
    }
}

/// A dump `keys` strings long, with a `ctime`.
fn small_dump(path: &Path, prefix: &str, keys: usize) {
    let mut rdb = Rdb::new(BufWriter::new(File::create(path).unwrap())).unwrap();
    rdb.aux("ctime", "1700000000").unwrap();
    rdb.select_db(0).unwrap();
    for i in 0..keys {
        rdb.set_string(format!("{prefix}:{i}").as_bytes(), b"value", None)
            .unwrap();
    }
    rdb.finish().unwrap();
}

/// `small_dump` cut short: read up to its damage.
fn damaged_dump(path: &Path) -> PathBuf {
    let whole = path.with_extension("whole");
    small_dump(&whole, "cut", 1000);
    let bytes = fs::read(&whole).unwrap();
    fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
    path.to_path_buf()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_dump_that_cannot_be_read_is_an_error_with_nothing_written() {
    let tmp = tempfile::TempDir::new().unwrap();
    let good = tmp.path().join("good.rdb");
    small_dump(&good, "ok", 10);
    let text = tmp.path().join("notes.txt");
    fs::write(&text, "hello, not a dump at all").unwrap();
    let missing = tmp.path().join("missing.rdb");
    for (bad, why) in [
        (&missing, "cannot open"),
        (&text, "not an RDB file"),
        (&tmp.path().to_path_buf(), "cannot open"),
    ] {
        for dumps in [vec![arg(bad)], vec![arg(&good), arg(bad)]] {
            let out_dir = tmp.path().join("out");
            let html = tmp.path().join("page.html");
            let run = rdbscope(
                &[
                    &["report"][..],
                    &dumps,
                    &["--out-dir", arg(&out_dir), "--html", arg(&html)],
                ]
                .concat(),
            );
            assert_eq!(run.status.code(), Some(2), "{dumps:?}: {run:?}");
            assert!(run.stdout.is_empty(), "{dumps:?}: a table was printed");
            let err = stderr(&run);
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains(arg(bad)) && err.contains(why), "{err}");
            assert!(!out_dir.exists(), "{dumps:?}: --out-dir was created");
            assert!(!html.exists(), "{dumps:?}: --html was written");
            for command in ["top", "prefixes", "lint", "keys"] {
                let run = rdbscope(&[&[command][..], &dumps].concat());
                assert_eq!(run.status.code(), Some(2), "{command} {dumps:?}");
                assert!(run.stdout.is_empty(), "{command} {dumps:?} printed rows");
            }
            let keys_file = tmp.path().join("keys.csv");
            let run = rdbscope(&[&["keys", "-o", arg(&keys_file)][..], &dumps].concat());
            assert_eq!(run.status.code(), Some(2));
            assert!(!keys_file.exists() && !tmp.path().join("keys.csv.partial").exists());
        }
    }
    // Read from standard input, the same: one line, nothing printed, no directory left.
    for command in [&["report", "-", "--out-dir"][..], &["keys", "-"][..]] {
        let out_dir = tmp.path().join("from-stdin");
        let args = [command, &[arg(&out_dir)][..]].concat();
        let args = if command[0] == "keys" {
            command
        } else {
            &args[..]
        };
        let run = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
            .args(args)
            .stdin(File::open(&text).unwrap())
            .output()
            .expect("rdbscope runs");
        assert_eq!(run.status.code(), Some(2), "{args:?}: {run:?}");
        assert!(run.stdout.is_empty(), "{args:?} printed {run:?}");
        let err = stderr(&run);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("not an RDB file"), "{err}");
        assert!(!out_dir.exists(), "{args:?}: --out-dir was left behind");
    }
    // --allow-partial reports the other dumps, the missing one named first.
    let damaged = damaged_dump(&tmp.path().join("damaged.rdb"));
    let run = rdbscope(&[
        "report",
        arg(&good),
        arg(&damaged),
        arg(&missing),
        "--allow-partial",
        "-q",
    ]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    let table = String::from_utf8(run.stdout.clone()).unwrap();
    let first = table.lines().next().unwrap();
    assert!(first.starts_with("PARTIAL: "), "{first}");
    let (m, d) = (first.find("missing.rdb"), first.find("damaged.rdb"));
    assert!(m.is_some() && d.is_some() && m < d, "{first}");
    assert!(
        table.contains("ok:") || table.contains(" ok "),
        "{table:.600}"
    );
    assert!(stderr(&run).lines().next().unwrap().contains("missing.rdb"));
}

/// A path naming a pipe (or a device: `-o /dev/null`, `--html /dev/stdout`) is written to
/// as it is, never removed or renamed over: `keys -o PIPE` and `--html PIPE` write into
/// the pipe, which stays a pipe; `report --out-dir` holding a pipe as keys.csv is refused
/// and leaves it. A symbolic link to a file is followed: the file replaced, the link kept.
#[test]
fn a_pipe_is_written_to_and_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let tmp = tempfile::TempDir::new().unwrap();
    let dump = tmp.path().join("small.rdb");
    small_dump(&dump, "piped", 100);
    let pipe = tmp.path().join("rows");
    let made = Command::new("mkfifo")
        .arg(&pipe)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let is_pipe = |p: &Path| fs::metadata(p).unwrap().file_type().is_fifo();
    for args in [
        &["keys", "--format", "csv", "-o"][..],
        &["report", "-q", "--html"][..],
    ] {
        // Read on a thread of its own, waited for a while: a run that wrote elsewhere
        // leaves it waiting for a writer.
        let (sent, read) = std::sync::mpsc::channel();
        let reader = pipe.clone();
        std::thread::spawn(move || sent.send(fs::read(reader).unwrap()));
        let run = rdbscope(&[args, &[arg(&pipe), arg(&dump)][..]].concat());
        assert_eq!(run.status.code(), Some(0), "{args:?}: {}", stderr(&run));
        let read = read
            .recv_timeout(std::time::Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("{args:?} wrote nothing into the pipe"));
        assert!(is_pipe(&pipe), "{args:?} replaced the pipe");
        let partial = tmp.path().join("rows.partial");
        assert!(!partial.exists(), "{args:?} left {partial:?}");
        let text = String::from_utf8(read).unwrap();
        match args[0] {
            "keys" => {
                assert_eq!(text.lines().count(), 101, "{text}");
                assert!(text.contains("\n0,piped:99,string,"), "{text}");
            }
            _ => assert!(text.starts_with("<!DOCTYPE html>"), "{}", &text[..80]),
        }
    }
    let out_dir = tmp.path().join("out");
    fs::create_dir(&out_dir).unwrap();
    let in_dir = out_dir.join("keys.csv");
    assert!(Command::new("mkfifo")
        .arg(&in_dir)
        .status()
        .unwrap()
        .success());
    let run = rdbscope(&["report", "-q", "--out-dir", arg(&out_dir), arg(&dump)]);
    assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
    assert!(
        stderr(&run).contains("keys.csv: not a regular file"),
        "{}",
        stderr(&run)
    );
    assert!(is_pipe(&in_dir));
    let left: Vec<_> = fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["keys.csv"]);
    // A symbolic link to a file (as `/dev/stdout` is when standard output goes to one):
    // the file is replaced, the link stays.
    let target = tmp.path().join("target.csv");
    fs::write(&target, "old\n").unwrap();
    let link = tmp.path().join("link.csv");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let run = rdbscope(&["keys", "--format", "csv", "-o", arg(&link), arg(&dump)]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(fs::read_to_string(&target).unwrap().lines().count(), 101);
}

#[test]
fn a_damaged_dump_is_flagged_partial_and_refused_by_diff_and_merge() {
    let tmp = tempfile::TempDir::new().unwrap();
    let damaged = damaged_dump(&tmp.path().join("damaged.rdb"));
    let good = tmp.path().join("good.rdb");
    small_dump(&good, "ok", 10);
    for command in ["report", "top", "prefixes", "lint"] {
        let run = rdbscope(&[command, arg(&damaged), "-q"]);
        assert_eq!(run.status.code(), Some(2), "{command}");
        let text = String::from_utf8(run.stdout).unwrap();
        assert!(text.starts_with("PARTIAL: "), "{command}: {text:.300}");
        assert!(text.lines().next().unwrap().contains("damaged.rdb"));
    }
    let partial = tmp.path().join("partial");
    let whole = tmp.path().join("whole");
    let run = rdbscope(&["report", arg(&damaged), "--out-dir", arg(&partial), "-q"]);
    assert_eq!(run.status.code(), Some(2));
    let summary: serde_json::Value =
        serde_json::from_slice(&fs::read(partial.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["partial"], true);
    let page = fs::read_to_string(partial.join("report.html")).unwrap();
    assert!(page.contains("<strong>PARTIAL</strong>"));
    let run = rdbscope(&["report", arg(&good), "--out-dir", arg(&whole), "-q"]);
    assert!(run.status.success());
    let whole_page = fs::read_to_string(whole.join("report.html")).unwrap();
    assert!(!whole_page.contains("<strong>PARTIAL</strong>"));

    for args in [
        vec!["diff", arg(&whole), arg(&partial)],
        vec!["diff", arg(&partial), arg(&whole)],
        vec!["diff", arg(&good), arg(&damaged)],
        vec!["merge", arg(&whole), arg(&partial)],
    ] {
        let refused = rdbscope(&args);
        assert_eq!(refused.status.code(), Some(2), "{args:?}");
        assert!(refused.stdout.is_empty(), "{args:?}");
        assert!(stderr(&refused).contains("PARTIAL"), "{args:?}");
        let allowed = rdbscope(&[&args[..], &["--allow-partial"]].concat());
        assert_eq!(allowed.status.code(), Some(2), "{args:?} --allow-partial");
        assert!(!allowed.stdout.is_empty(), "{args:?} --allow-partial");
    }
}

#[test]
fn merge_gives_the_same_bytes_in_any_order() {
    let tmp = tempfile::TempDir::new().unwrap();
    let mut runs = Vec::new();
    for (i, prefix) in ["alpha", "beta", "gamma"].iter().enumerate() {
        let dump = tmp.path().join(format!("{prefix}.rdb"));
        small_dump(&dump, prefix, 100 * (i + 1));
        let dir = tmp.path().join(format!("run-{prefix}"));
        let run = rdbscope(&["report", arg(&dump), "--out-dir", arg(&dir), "-q"]);
        assert!(run.status.success());
        runs.push(dir);
    }
    let merged = |order: [usize; 3]| {
        let out = rdbscope(&[
            "merge",
            arg(&runs[order[0]]),
            arg(&runs[order[1]]),
            arg(&runs[order[2]]),
            "--format",
            "json",
        ]);
        assert!(out.status.success(), "{out:?}");
        out.stdout
    };
    let first = merged([0, 1, 2]);
    assert!(String::from_utf8_lossy(&first).contains("\"keys\": 600"));
    for order in [[2, 1, 0], [1, 2, 0], [0, 2, 1]] {
        assert!(merged(order) == first, "merge in order {order:?} differs");
    }
}
