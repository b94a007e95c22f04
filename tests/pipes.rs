//! A reader that closes the pipe after the first line (`rdbscope … | head -1`): every
//! command in every format exits quietly, and `lint` keeps its verdict.

mod craft;

use craft::Rdb;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use tempfile::TempDir;

/// 20,000 string keys of 110 bytes (over `--key-max-bytes`, a `key.too-long` warning each)
/// under 5,000 first-level prefixes: every command below prints well over the 64 KiB a
/// pipe holds, so the writes after the reader left fail.
fn big_dump(dir: &Path) -> PathBuf {
    let path = dir.join("big.rdb");
    let mut rdb = Rdb::new(BufWriter::new(File::create(&path).unwrap())).unwrap();
    rdb.aux("ctime", "1700000000").unwrap();
    rdb.select_db(0).unwrap();
    for i in 0..20_000 {
        let key = format!("svc{:04}:user:{i:05}:", i % 5000);
        let key = format!("{key}{}", "x".repeat(110 - key.len()));
        rdb.set_string(key.as_bytes(), b"value", None).unwrap();
    }
    rdb.finish().unwrap();
    path
}

const RUNS: &[&[&str]] = &[
    &["keys"],
    &["keys", "--format", "jsonl"],
    &["keys", "--compat", "rdbtools"],
    &["top", "-n", "5000"],
    &["top", "-n", "5000", "--format", "csv"],
    &["prefixes", "--rows", "5000"],
    &["prefixes", "--format", "csv"],
    &[
        "prefixes",
        "--patterns",
        "--format",
        "csv",
        "--delimiter",
        "_",
    ],
    &["report", "--top", "5000"],
    &["report", "--top", "5000", "--format", "json"],
    &["lint", "--max-findings", "20000"],
    &["lint", "--max-findings", "20000", "--format", "json"],
    &["lint", "--max-findings", "20000", "--format", "csv"],
];

fn rdbscope(args: &[&str], dump: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rdbscope"));
    c.args(args).arg("--quiet").arg(dump);
    c
}

/// Runs with stdout a pipe closed after the first line: (exit code, first line, stderr).
fn closed_after_first_line(mut command: Command) -> (i32, String, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rdbscope runs");
    let mut first = String::new();
    {
        let mut reader = BufReader::with_capacity(64, child.stdout.take().unwrap());
        reader.read_line(&mut first).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().expect("exited, not killed by SIGPIPE"),
        first,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_command_and_format_exits_quietly_when_the_pipe_closes() {
    let dir = TempDir::new().unwrap();
    let dump = big_dump(dir.path());
    for args in RUNS {
        let whole = rdbscope(args, &dump).output().unwrap();
        assert!(
            whole.stdout.len() > 256 * 1024,
            "{args:?} prints {} bytes, too few to fill a pipe",
            whole.stdout.len()
        );
        let (code, first, stderr) = closed_after_first_line(rdbscope(args, &dump));
        assert!(!first.is_empty(), "{args:?}: no first line");
        assert_eq!(stderr, "", "{args:?}");
        assert_eq!(code, 0, "{args:?}");
    }
    for args in [&["info"][..], &["info", "--format", "json"]] {
        let mut info = Command::new(env!("CARGO_BIN_EXE_rdbscope"));
        info.args(args).arg(&dump);
        let (code, first, stderr) = closed_after_first_line(info);
        assert!(!first.is_empty() && stderr.is_empty(), "{args:?}: {stderr}");
        assert_eq!(code, 0, "{args:?}");
    }
}

#[test]
fn lint_keeps_its_exit_code_when_the_pipe_closes() {
    let dir = TempDir::new().unwrap();
    let dump = big_dump(dir.path());
    let truncated = dir.path().join("truncated.rdb");
    let bytes = std::fs::read(&dump).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    for format in ["table", "json", "csv"] {
        let lint = |fail_on: &str, dump: &Path| {
            let args = [
                "lint",
                "--max-findings",
                "20000",
                "--format",
                format,
                "--fail-on",
                fail_on,
            ];
            let (code, _, stderr) = closed_after_first_line(rdbscope(&args, dump));
            (code, stderr)
        };
        // 20,000 key.too-long warnings, nothing at error.
        assert_eq!(lint("warn", &dump), (1, String::new()), "{format}");
        assert_eq!(lint("error", &dump), (0, String::new()), "{format}");
        let (code, stderr) = lint("warn", &truncated);
        assert_eq!(code, 2, "{format}: {stderr}");
        assert!(stderr.contains("truncated.rdb"), "{format}: {stderr}");
    }
}
