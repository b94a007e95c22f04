//! Tables say what they leave out: a table showing fewer rows than it holds ends with a
//! `… N more` row adding them up, so its rows add up to what its CSV adds up to. Every
//! command's tables and notes fit an 80-column terminal (a real one: `script` gives the
//! command a pseudo-terminal set to 80 columns). One flag vocabulary, old spellings kept.

mod common;
mod craft;

use common::csv_rows;
use craft::Rdb;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tempfile::TempDir;

fn rdbscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args(args)
        .env("COLUMNS", "400")
        .output()
        .expect("rdbscope runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn fixtures() -> Vec<PathBuf> {
    let mut all = common::dumps_in("real");
    all.extend(common::dumps_in("peers"));
    all.extend(common::dumps_in("modern"));
    all
}

/// The keys column (the second) of each table row, per table title.
fn table_keys(text: &str) -> BTreeMap<String, u64> {
    let mut sums = BTreeMap::new();
    let mut title = String::new();
    let mut header = true;
    for line in text.lines() {
        if line.starts_with('┌') {
            header = true;
        } else if line.starts_with('╞') {
            header = false;
        } else if let Some(row) = line.strip_prefix('│') {
            if !header {
                let cells: Vec<&str> = row
                    .split("  ")
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .collect();
                let keys: u64 = cells[1].parse().unwrap_or_else(|_| panic!("{line}"));
                *sums.entry(title.clone()).or_default() += keys;
            }
        } else if !line.starts_with(['└', '(', ' ']) && !line.is_empty() {
            title = line.to_string();
        }
    }
    sums
}

fn csv_keys(rows: &[std::collections::HashMap<String, String>]) -> u64 {
    rows.iter().map(|r| r["keys"].parse::<u64>().unwrap()).sum()
}

#[test]
fn table_rows_and_their_more_row_add_up_to_the_csv_on_every_fixture() {
    let fixtures = fixtures();
    assert!(fixtures.len() > 40, "{}", fixtures.len());
    let mut cut = 0;
    let mut refused = 0;
    for path in &fixtures {
        let dump = path.to_str().unwrap();
        let top = rdbscope(&["top", "--format", "json", dump]);
        if top.status.code() == Some(2) && top.stdout.is_empty() {
            // A fixture that is no RDB file is refused as a whole: no table to add up.
            assert!(
                String::from_utf8_lossy(&top.stderr).contains("not an RDB file"),
                "{dump}: {}",
                String::from_utf8_lossy(&top.stderr)
            );
            refused += 1;
            continue;
        }
        // Patterns: one table.
        let table = stdout(&rdbscope(&[
            "prefixes",
            "--patterns",
            "-n",
            "3",
            "-q",
            dump,
        ]));
        let csv = csv_rows(&rdbscope(&["prefixes", "--patterns", "--format", "csv", dump]).stdout);
        let shown = table_keys(&table).into_values().sum::<u64>();
        assert_eq!(shown, csv_keys(&csv), "{dump}\n{table}");
        cut += usize::from(table.contains("… "));
        // Prefixes: one table per depth, against the CSV rows of that depth.
        let table = stdout(&rdbscope(&[
            "prefixes", "--depth", "2", "-n", "2", "-q", dump,
        ]));
        let csv =
            csv_rows(&rdbscope(&["prefixes", "--depth", "2", "--format", "csv", dump]).stdout);
        for (title, shown) in table_keys(&table) {
            let depth = title["Prefixes, depth ".len()..][..1].to_string();
            let rows: Vec<_> = csv
                .iter()
                .filter(|r| r["depth"] == depth)
                .cloned()
                .collect();
            assert_eq!(shown, csv_keys(&rows), "{dump}: {title}\n{table}");
        }
        // Top: the keys listed and the rest make every key.
        let json: serde_json::Value = serde_json::from_slice(&top.stdout).unwrap();
        let keys = json["totals"]["keys"].as_u64().unwrap();
        let table = stdout(&rdbscope(&["top", "-n", "2", "-q", dump]));
        let listed = table
            .lines()
            .filter(|l| l.starts_with("│ 1 ") || l.starts_with("│ 2 "))
            .count() as u64;
        let more = table
            .lines()
            .find_map(|l| {
                let at = l.find("… ")?;
                l[at + "… ".len()..].split(' ').next()?.parse::<u64>().ok()
            })
            .unwrap_or(0);
        assert_eq!(listed + more, keys, "{dump}\n{table}");
    }
    assert!(cut > 10, "only {cut} fixtures had a table cut");
    assert!(refused < fixtures.len() / 4, "{refused} fixtures refused");
}

/// `cmd` in a pseudo-terminal of 80 columns: what it printed, carriage returns removed.
fn in_terminal(cmd: &str) -> String {
    let out = Command::new("script")
        .args(["-qec", &format!("stty cols 80 rows 40; {cmd}"), "/dev/null"])
        .env_remove("COLUMNS")
        .output()
        .expect("script runs");
    String::from_utf8(out.stdout).unwrap().replace('\r', "")
}

fn write_dump(path: &Path, keys: u32, grow: usize) {
    let mut rdb = Rdb::new(BufWriter::new(File::create(path).unwrap())).unwrap();
    rdb.aux("ctime", "1700000000").unwrap();
    rdb.select_db(0).unwrap();
    for i in 0..keys {
        let key = format!("tenant:averyveryverylongtenantname:user:{i}:profile");
        rdb.set_string(key.as_bytes(), &vec![b'v'; i as usize * 8 + grow], None)
            .unwrap();
    }
    rdb.finish().unwrap();
}

#[test]
fn every_command_fits_an_80_column_terminal() {
    let dir = TempDir::new().unwrap();
    let (old, new) = (dir.path().join("old.rdb"), dir.path().join("new.rdb"));
    write_dump(&old, 200, 0);
    write_dump(&new, 200, 300);
    let bin = env!("CARGO_BIN_EXE_rdbscope");
    let real = common::testdata().join("real/redis-7.4.1-alltypes.rdb");
    let (old, new, real) = (old.display(), new.display(), real.display());
    let run_dir = dir.path().join("run");
    let run_dir = run_dir.display();
    for cmd in [
        format!("{bin} report -q {real}"),
        format!("{bin} report -q --out-dir {run_dir} {new}"),
        format!("{bin} top -q {real}"),
        format!("{bin} prefixes -q {real}"),
        format!("{bin} prefixes --patterns -q {new}"),
        format!("{bin} lint -q {real} {new}"),
        format!("{bin} info -q {real}"),
        format!("{bin} diff -q {old} {new}"),
        format!("{bin} merge -q {run_dir}"),
    ] {
        let text = in_terminal(&cmd);
        assert!(text.lines().count() > 5, "{cmd}\n{text}");
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "{cmd}: {line}\n{text}");
        }
    }
}

#[test]
fn diff_lists_real_changes_first_and_obeys_rows() {
    let dir = TempDir::new().unwrap();
    let (old, new) = (dir.path().join("old.rdb"), dir.path().join("new.rdb"));
    write_dump(&old, 200, 0);
    write_dump(&new, 200, 300);
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    let text = stdout(&rdbscope(&["diff", "-n", "5", "-q", old, new]));
    let at = text.find("Big keys").expect("a big-key table");
    let table: Vec<&str> = text[at..]
        .lines()
        .skip_while(|l| !l.starts_with('╞'))
        .skip(1)
        .take_while(|l| l.starts_with('│'))
        .collect();
    assert_eq!(table.len(), 5 + 1, "{text}");
    assert!(table[..5].iter().all(|l| l.contains("grew")), "{text}");
    assert!(table[5].contains("… "), "{text}");
}

#[test]
fn old_spellings_and_the_shared_flags_are_taken() {
    let real = common::testdata().join("real/redis-7.4.1-alltypes.rdb");
    let dump = real.to_str().unwrap();
    let same = |a: &[&str], b: &[&str]| {
        let (x, y) = (rdbscope(a), rdbscope(b));
        assert_eq!(
            x.status.code(),
            Some(0),
            "{a:?}: {}",
            String::from_utf8_lossy(&x.stderr)
        );
        assert_eq!(x.stdout, y.stdout, "{a:?} vs {b:?}");
    };
    same(
        &["info", "--format", "text", dump],
        &["info", "--format", "table", dump],
    );
    same(
        &["info", "--threads", "1", "--progress", "never", "-q", dump],
        &["info", dump],
    );
    same(&["top", "--rows", "3", dump], &["top", "-n", "3", dump]);
    same(&["top", "--top", "3", dump], &["top", "-n", "3", dump]);
    same(
        &["report", "--rows", "4", dump],
        &["report", "-n", "4", dump],
    );
    same(
        &["prefixes", "--rows", "4", dump],
        &["prefixes", "-n", "4", dump],
    );
    let report = stdout(&rdbscope(&["report", "-n", "4", dump]));
    assert!(report.contains("│ … 40 more"), "{report}");

    let dir = TempDir::new().unwrap();
    let run = dir.path().join("run");
    let run = run.to_str().unwrap();
    assert_eq!(
        rdbscope(&["report", "-q", "--out-dir", run, dump])
            .status
            .code(),
        Some(0)
    );
    same(
        &[
            "merge",
            "--threads",
            "2",
            "--progress",
            "never",
            "-n",
            "4",
            run,
        ],
        &["merge", "--rows", "4", run],
    );

    let o = rdbscope(&["keys", "--compat", "rdbtools", "--format", "jsonl", dump]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--format jsonl"));
    // redis-rdb-tools counts a string's length as its elements; rdbscope's own rows do not.
    let rdbtools = csv_rows(&rdbscope(&["keys", "--compat", "rdbtools", dump]).stdout);
    let own = csv_rows(&rdbscope(&["keys", dump]).stdout);
    let raw = |rows: &[std::collections::HashMap<String, String>], col: &str| {
        rows.iter().find(|r| r["key"] == "str:raw").unwrap()[col].clone()
    };
    assert_eq!(raw(&rdbtools, "num_elements"), "100");
    assert_eq!(raw(&own, "elements"), "0");
}

#[test]
fn filters_that_match_nothing_say_so() {
    let real = common::testdata().join("real/redis-7.4.1-alltypes.rdb");
    let dump = real.to_str().unwrap();
    for (args, flag) in [
        (&["prefixes", "--under", "nosuch"][..], "--under nosuch"),
        (&["report", "--db", "99"], "--db 99"),
        (&["top", "--match", "nosuch:*"], "--match nosuch:*"),
        (&["keys", "--db", "99"], "--db 99"),
        (&["lint", "--match", "nosuch:*"], "--match nosuch:*"),
    ] {
        let mut all = args.to_vec();
        all.push(dump);
        let o = rdbscope(&all);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("warning: {flag} matched no key (of 44 keys read)")),
            "{args:?}: {err}"
        );
    }
    let o = rdbscope(&["report", "--db", "3", dump]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("matched no key"));
}

/// A prefix table below depth 1 says how many keys have too few segments to be in it: its
/// rows and that count make the depth-1 table's keys, on every fixture.
#[test]
fn a_deeper_prefix_table_says_which_keys_it_leaves_out() {
    let mut said = 0;
    for dump in fixtures() {
        let dump = dump.to_str().unwrap();
        let table = stdout(&rdbscope(&[
            "prefixes", "--depth", "2", "-n", "5", "-q", dump,
        ]));
        let sums = table_keys(&table);
        let depth = |d: &str| {
            sums.iter()
                .find(|(t, _)| t.starts_with(&format!("Prefixes, depth {d} ")))
                .map(|(_, &k)| k)
        };
        let (Some(one), Some(two)) = (depth("1"), depth("2")) else {
            continue;
        };
        let left_out: u64 = table
            .lines()
            .find(|l| l.ends_with("in no depth-2 prefix"))
            .map(|l| l.split(' ').next().unwrap().parse().unwrap())
            .unwrap_or(0);
        assert_eq!(two + left_out, one, "{dump}\n{table}");
        said += u64::from(left_out > 0);
    }
    assert!(
        said > 0,
        "no fixture has keys of too few segments for depth 2"
    );
}
