//! Tables fit the width they are given (`COLUMNS`, else the terminal, else 120 columns
//! when stdout is a file or a pipe): a 5,000-byte key is cut with `…`, never wrapped; the
//! empty key shows as `""`; CSV keeps the whole key.

mod craft;

use craft::Rdb;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

fn long_key() -> String {
    format!("long:{}", "k".repeat(4995))
}

/// The 5,000-byte key (the biggest), the empty key, and 30 `user:<i>:profile` keys with an
/// expiry.
fn dump(dir: &Path) -> PathBuf {
    let path = dir.join("long.rdb");
    let mut rdb = Rdb::new(BufWriter::new(File::create(&path).unwrap())).unwrap();
    rdb.aux("ctime", "1700000000").unwrap();
    rdb.select_db(0).unwrap();
    rdb.set_string(long_key().as_bytes(), &[b'v'; 100], None)
        .unwrap();
    rdb.set_string(b"", b"emptykeyvalue", None).unwrap();
    for i in 0..30 {
        let key = format!("user:{i}:profile");
        let expiry = 1_700_000_000_000 + i64::from(i) * 3_600_000;
        rdb.set_string(key.as_bytes(), &vec![b'x'; i as usize * 10], Some(expiry))
            .unwrap();
    }
    rdb.finish().unwrap();
    path
}

fn run(args: &[&str], dump: &Path, columns: Option<&str>) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rdbscope"));
    c.args(args).arg("--quiet").arg(dump).env_remove("COLUMNS");
    if let Some(columns) = columns {
        c.env("COLUMNS", columns);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The widest table line (prose such as lint advice is not cut).
fn widest(text: &str) -> usize {
    text.lines()
        .filter(|l| l.starts_with(['│', '┌', '╞', '└', '(']))
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
}

#[test]
fn an_80_column_table_cuts_the_long_key_and_leaves_out_secondary_columns() {
    let dir = TempDir::new().unwrap();
    let dump = dump(dir.path());
    let text = run(&["top", "-n", "3"], &dump, Some("80"));
    assert_eq!(widest(&text), 80, "{text}");
    assert!(
        text.ends_with("┘\n(left out to fit 80 columns: in file, encoding, % memory)\n\n"),
        "{text}"
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[..6],
        [
            "Biggest keys by memory",
            "┌──────────────────────────────────────────────────────────────────────────────┐",
            "│ #  db  key                   type    elements   memory                expiry │",
            "╞══════════════════════════════════════════════════════════════════════════════╡",
            "│ 1  0   long:kkkk…kkkkkkkkkk  string         0  5.1 KiB                       │",
            "│ 2  0   user:26:profile       string         0    384 B  2023-11-16T00:13:20Z │",
        ]
        .map(String::from),
        "{text}"
    );
}

#[test]
fn reports_fit_80_columns_and_show_the_empty_key() {
    let dir = TempDir::new().unwrap();
    let dump = dump(dir.path());
    for args in [
        &["report", "--top", "40"][..],
        &["prefixes", "--patterns"],
        &["lint"],
    ] {
        let text = run(args, &dump, Some("80"));
        assert!(widest(&text) <= 80, "{args:?}\n{text}");
        assert!(text.contains("long:kkkkk"), "{args:?}\n{text}");
        assert!(
            text.lines().all(|l| !l.starts_with("│ kkk")),
            "{args:?}: the key wrapped\n{text}"
        );
    }
    let text = run(&["top", "-n", "40"], &dump, Some("80"));
    assert!(
        text.lines()
            .any(|l| l.starts_with("│ 0   \"\"   ") && l.contains("72 B")),
        "{text}"
    );
    let text = run(&["lint"], &dump, Some("80"));
    assert!(
        text.contains("│ key.no-namespace  info      key \"\"   "),
        "{text}"
    );
}

#[test]
fn a_pipe_gets_120_columns_and_csv_the_whole_key() {
    let dir = TempDir::new().unwrap();
    let dump = dump(dir.path());
    let text = run(&["top", "-n", "3"], &dump, None);
    assert_eq!(widest(&text), 120, "{text}");
    assert!(text.contains("2023-11-16T00:13:20Z"), "{text}");
    assert!(!text.contains("left out"), "{text}");
    let csv = run(&["top", "-n", "3", "--format", "csv"], &dump, Some("80"));
    assert!(csv.contains(&long_key()), "{csv}");
}
