//! The prefix and pattern tables as a user walks them: `--under` drills down into one
//! prefix (only its keys, depths below it, shares of it), on a crafted dump whose figures
//! are summed from `keys`' per-key rows.

mod common;
mod craft;

use common::csv_rows;
use craft::Rdb;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::process::{Command, Output};
use tempfile::TempDir;

fn rdbscope(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args(args)
        .output()
        .expect("rdbscope runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 output")
}

fn num(row: &HashMap<String, String>, col: &str) -> u64 {
    row[col]
        .parse()
        .unwrap_or_else(|_| panic!("{col}={:?}", row[col]))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// `cache:page:<i>` (60 keys, big values), `cache:img:<i>` (20), `cache:page:home:<i>` (2),
/// `cache:lone` (no delimiter below `cache:`), and keys that are not under `cache:`
/// although they start like it (`cache`, `cacheX:1`) or are elsewhere (`user:<i>:profile`).
fn crafted(path: &Path) {
    let mut rdb = Rdb::new(BufWriter::new(File::create(path).unwrap())).unwrap();
    rdb.aux("redis-ver", "7.0.15").unwrap();
    rdb.aux("ctime", "1700000000").unwrap();
    rdb.select_db(0).unwrap();
    for i in 0..60 {
        let key = format!("cache:page:{i}");
        rdb.set_string(key.as_bytes(), &vec![b'p'; 100 + i * 10], None)
            .unwrap();
    }
    for i in 0..20 {
        let key = format!("cache:img:{i}");
        let ttl = (i % 2 == 0).then_some(1_700_000_000_000 + 3_600_000);
        rdb.set_string(key.as_bytes(), &[b'i'; 30], ttl).unwrap();
    }
    for i in 0..2 {
        let key = format!("cache:page:home:{i}");
        rdb.set_string(key.as_bytes(), b"home", None).unwrap();
    }
    rdb.set_string(b"cache:lone", b"x", None).unwrap();
    rdb.set_string(b"cache", b"not under", None).unwrap();
    rdb.set_string(b"cacheX:1", b"not under either", None)
        .unwrap();
    for i in 0..40 {
        let key = format!("user:{i}:profile");
        rdb.set_string(key.as_bytes(), &vec![b'u'; 2000], None)
            .unwrap();
    }
    rdb.set_set(b"user:42:tags", &[b"a", b"b"]).unwrap();
    rdb.finish().unwrap();
}

/// `(keys, memory_bytes, serialized_bytes)` of the keys `keys` lists whose name passes `f`.
fn truth(dump: &str, f: impl Fn(&str) -> bool) -> (u64, u64, u64) {
    let rows = csv_rows(&rdbscope(&["keys", dump]).stdout);
    rows.iter()
        .filter(|r| f(&r["key"]))
        .fold((0, 0, 0), |(k, m, s), r| {
            (
                k + 1,
                m + num(r, "memory_bytes"),
                s + num(r, "serialized_bytes"),
            )
        })
}

/// `depth name` → `(keys, memory_bytes, serialized_bytes, error_keys, error_bytes)`.
fn by_name(rows: &[HashMap<String, String>], first: &str) -> BTreeMap<String, [u64; 5]> {
    rows.iter()
        .map(|r| {
            let name = match r.get("depth") {
                Some(d) => format!("{d} {}", r[first]),
                None => r[first].clone(),
            };
            let cols = [
                "keys",
                "memory_bytes",
                "serialized_bytes",
                "error_keys",
                "error_bytes",
            ];
            (name, cols.map(|c| num(r, c)))
        })
        .collect()
}

#[test]
fn under_tables_only_the_prefix_with_depths_below_it() {
    let tmp = TempDir::new().unwrap();
    let path = tmp.path().join("drill.rdb");
    crafted(&path);
    let dump = path.to_str().unwrap();
    let fig = |(k, m, s): (u64, u64, u64)| [k, m, s, 0, 0];
    let page = truth(dump, |k| k.starts_with("cache:page:"));
    let img = truth(dump, |k| k.starts_with("cache:img:"));
    let home = truth(dump, |k| k.starts_with("cache:page:home:"));
    let under = truth(dump, |k| k.starts_with("cache:"));
    assert_eq!((page.0, img.0, home.0, under.0), (62, 20, 2, 83));

    // `cache` and `cache:` are the same prefix; depths count below it, names stay whole.
    let expected: BTreeMap<String, [u64; 5]> = [
        ("1 cache:page", fig(page)),
        ("1 cache:img", fig(img)),
        ("2 cache:page:home", fig(home)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    for prefix in ["cache", "cache:"] {
        let out = rdbscope(&[
            "prefixes", "--under", prefix, "--depth", "2", "--format", "csv", dump,
        ]);
        assert_eq!(
            by_name(&csv_rows(&out.stdout), "prefix"),
            expected,
            "{prefix}"
        );
    }

    // The report restricts everything to the prefix: its totals are the reference of the
    // shares, and they equal what the filter `--match 'cache:*'` gives.
    let json = |extra: &[&str]| -> Value {
        let mut args = vec!["report", "--format", "json", "--depth", "2"];
        args.extend(extra);
        args.push(dump);
        serde_json::from_slice(&rdbscope(&args).stdout).unwrap()
    };
    let s = json(&["--under", "cache"]);
    let t = &s["totals"];
    assert_eq!(
        (
            u(&t["keys"]),
            u(&t["memory_bytes"]),
            u(&t["serialized_bytes"])
        ),
        under
    );
    assert_eq!(s["options"]["under"], "cache:");
    assert_eq!(s["options"]["filtered"], false);
    let matched = json(&["--match", "cache:*"]);
    assert_eq!(s["totals"], matched["totals"]);
    assert_eq!(s["by_type"], matched["by_type"]);
    assert_eq!(s["top_keys"], matched["top_keys"]);
    let depth1 = &s["prefixes"]["depths"][0];
    assert_eq!(depth1["capped"], false);
    let names: Vec<&str> = depth1["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["cache:page", "cache:img"]);
    assert_eq!(u(&depth1["rows"][0]["memory_bytes"]), page.1);
    assert_eq!(u(&depth1["rows"][0]["error_bytes"]), 0);
    // `cache:lone` has no delimiter below `cache:`.
    assert_eq!(u(&s["prefixes"]["no_delimiter"]["keys"]), 1);
    assert!(s["notes"].as_array().unwrap().iter().any(|n| n
        .as_str()
        .unwrap()
        .starts_with("drilled down under \"cache:\"")));
    // Patterns keep the prefix and collapse ids below it.
    let patterns: BTreeMap<&str, u64> = s["patterns"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap(), u(&r["keys"])))
        .collect();
    let expected: BTreeMap<&str, u64> = [
        ("cache:page:*", 60),
        ("cache:img:*", 20),
        ("cache:page:home:*", 2),
        ("cache:lone", 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(patterns, expected);

    // An id in the prefix stays: under user:42 the pattern is user:42:tags, not user:*:tags.
    let out = rdbscope(&[
        "prefixes",
        "--under",
        "user:42",
        "--patterns",
        "--format",
        "csv",
        dump,
    ]);
    let rows = csv_rows(&out.stdout);
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0]["pattern"].as_str(), num(&rows[0], "keys")),
        ("user:42:tags", 1)
    );

    // The tables: titles say where they are, shares are of the prefix (page holds
    // page.1 of under.1 bytes).
    let out = text(&rdbscope(&[
        "prefixes", "--under", "cache", "--depth", "2", dump,
    ]));
    assert!(
        out.contains("Prefixes, depth 1 below \"cache:\" (delimiter \":\")"),
        "{out}"
    );
    let share = format!("{:.1}%", page.1 as f64 * 100.0 / under.1 as f64);
    let line = out.lines().find(|l| l.contains(" cache:page ")).unwrap();
    assert!(line.contains(&share), "{share} in {line}");
    assert!(
        line.contains(&format!("{:.1}%", 62.0 * 100.0 / 83.0)),
        "{line}"
    );
    assert!(out.contains("1 key (") && out.contains("holds no \":\" below \"cache:\""));

    // A prefix nothing is under: empty tables, zero totals, no failure.
    let s = json(&["--under", "nothing"]);
    assert_eq!(u(&s["totals"]["keys"]), 0);
}

/// Three prefixes whose orders differ by each measure: `a` (one set of 1000 members: most
/// memory), `b` (two strings of 10 000 bytes, which hold no elements: the order by elements is by memory), `c` (30 one-byte strings:
/// most keys).
fn three_orders(path: &Path) {
    let mut rdb = Rdb::new(BufWriter::new(File::create(path).unwrap())).unwrap();
    rdb.aux("redis-ver", "7.0.15").unwrap();
    rdb.aux("ctime", "1700000000").unwrap();
    rdb.select_db(0).unwrap();
    let members: Vec<Vec<u8>> = (0..1000)
        .map(|i| format!("member-{i:04}-padding").into_bytes())
        .collect();
    let members: Vec<&[u8]> = members.iter().map(Vec::as_slice).collect();
    rdb.set_set(b"a:set:0", &members).unwrap();
    for i in 0..2 {
        let key = format!("b:str:{i}");
        rdb.set_string(key.as_bytes(), &vec![b'b'; 10_000], None)
            .unwrap();
    }
    for i in 0..30 {
        let key = format!("c:tiny:{i}");
        rdb.set_string(key.as_bytes(), b"x", None).unwrap();
    }
    rdb.finish().unwrap();
}

/// `{:.1}%` of `part` in `whole`, as the tables print shares.
fn pct(part: u64, whole: u64) -> String {
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

/// The line of `section` (a title's start) of `out` whose first cell is `name`.
fn row<'a>(out: &'a str, section: &str, name: &str) -> &'a str {
    let from = out
        .find(section)
        .unwrap_or_else(|| panic!("{section} in {out}"));
    out[from..]
        .lines()
        .find(|l| {
            l.trim_start_matches('│')
                .trim_start()
                .starts_with(&format!("{name} "))
        })
        .unwrap_or_else(|| panic!("{name} under {section} in {out}"))
}

#[test]
fn shares_everywhere_and_rows_sorted_by_the_measure_asked() {
    let tmp = TempDir::new().unwrap();
    let path = tmp.path().join("orders.rdb");
    three_orders(&path);
    let dump = path.to_str().unwrap();
    let keys = csv_rows(&rdbscope(&["keys", dump]).stdout);
    let sum = |prefix: &str, col: &str| -> u64 {
        keys.iter()
            .filter(|r| r["key"].starts_with(prefix))
            .map(|r| num(r, col))
            .sum()
    };
    let memory = |p: &str| sum(p, "memory_bytes");
    let (total_keys, total_memory) = (33, memory(""));
    assert!(memory("a:") > memory("b:") && memory("b:") > memory("c:"));
    assert!(sum("a:", "elements") == 1000 && sum("b:", "elements") == 0);

    // Depth-1 prefixes in each order, through the table, CSV and JSON alike.
    for (sort, order) in [
        ("memory", ["a", "b", "c"]),
        ("keys", ["c", "b", "a"]),
        ("elements", ["a", "b", "c"]),
    ] {
        let csv = rdbscope(&[
            "prefixes", "--depth", "1", "--sort", sort, "--format", "csv", dump,
        ]);
        let names: Vec<String> = csv_rows(&csv.stdout)
            .iter()
            .map(|r| r["prefix"].clone())
            .collect();
        assert_eq!(names, order, "{sort}");
        let json: Value = serde_json::from_slice(
            &rdbscope(&[
                "prefixes", "--depth", "1", "--sort", sort, "--format", "json", dump,
            ])
            .stdout,
        )
        .unwrap();
        assert_eq!(json["options"]["sort"], sort);
        let names: Vec<&str> = json["prefixes"]["depths"][0]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, order, "{sort}");
        let table = text(&rdbscope(&[
            "prefixes", "--depth", "1", "--sort", sort, dump,
        ]));
        let lines: Vec<&str> = order
            .iter()
            .map(|n| row(&table, "Prefixes, depth 1", n))
            .collect();
        let at = |l: &str| table.find(l).unwrap();
        assert!(
            at(lines[0]) < at(lines[1]) && at(lines[1]) < at(lines[2]),
            "{table}"
        );
    }

    // Shares of the dump's totals, with the values the tables print.
    let out = text(&rdbscope(&["report", "--depth", "1", dump]));
    let a = row(&out, "Prefixes, depth 1", "a");
    assert!(
        a.contains(&pct(1, total_keys)) && a.contains(&pct(memory("a:"), total_memory)),
        "{a}"
    );
    let set = row(&out, "Keys by type\n", "set");
    assert!(set.contains(&pct(1, total_keys)), "{set}");
    assert!(set.contains(&pct(memory("a:"), total_memory)), "{set}");
    let string = row(&out, "Keys by type\n", "string");
    assert!(string.contains(&pct(32, total_keys)), "{string}");
    assert!(
        string.contains(&pct(memory("b:") + memory("c:"), total_memory)),
        "{string}"
    );
    let all = row(&out, "Keys by type\n", "all");
    assert!(all.contains("100.0%"), "{all}");
    let enc = row(&out, "Keys by type and encoding", "set / hashtable");
    assert!(enc.contains(&pct(memory("a:"), total_memory)), "{enc}");
    // By memory, the set's type comes first; by keys, the strings.
    let at = |out: &str, name: &str| out.find(row(out, "Keys by type\n", name)).unwrap();
    assert!(at(&out, "set") < at(&out, "string"));
    let by_keys = text(&rdbscope(&[
        "report", "--depth", "1", "--sort", "keys", dump,
    ]));
    assert!(at(&by_keys, "string") < at(&by_keys, "set"));
    // The biggest key holds the set's share; its slot too.
    let top = row(&out, "Biggest keys by memory", "1");
    assert!(
        top.contains("a:set:0") && top.contains(&pct(memory("a:"), total_memory)),
        "{top}"
    );
    let slot = &keys.iter().find(|r| r["key"] == "a:set:0").unwrap()["slot"];
    let in_slot: Vec<_> = keys.iter().filter(|r| &r["slot"] == slot).collect();
    let slot_memory: u64 = in_slot.iter().map(|r| num(r, "memory_bytes")).sum();
    let line = row(&out, "Heaviest cluster slots", slot);
    assert!(
        line.contains(&pct(in_slot.len() as u64, total_keys)),
        "{line}"
    );
    assert!(line.contains(&pct(slot_memory, total_memory)), "{line}");
    assert!(by_keys.contains("Most loaded cluster slots by keys"));
    // `top` shows the same share.
    let top = text(&rdbscope(&["top", "-n", "1", dump]));
    assert!(top.contains(&pct(memory("a:"), total_memory)), "{top}");
}

#[test]
fn json_of_the_table_commands_has_summary_json_field_names() {
    let tmp = TempDir::new().unwrap();
    let path = tmp.path().join("orders.rdb");
    three_orders(&path);
    let dump = path.to_str().unwrap();
    let keys = csv_rows(&rdbscope(&["keys", dump]).stdout);
    let key = |k: &str| keys.iter().find(|r| r["key"] == k).unwrap();
    let parse =
        |args: &[&str]| -> Value { serde_json::from_slice(&rdbscope(args).stdout).unwrap() };
    let summary = parse(&["report", "--format", "json", dump]);

    let p = parse(&["prefixes", "--format", "json", dump]);
    assert_eq!(p["schema_version"], 2);
    assert_eq!(p["totals"], summary["totals"]);
    assert_eq!(p["prefixes"], summary["prefixes"]);
    assert_eq!(p["files"][0]["path"], dump);
    assert_eq!(p["options"]["under"], Value::Null);
    let a = &p["prefixes"]["depths"][1]["rows"][0];
    assert_eq!(a["name"], "a:set");
    assert_eq!(u(&a["keys"]), 1);
    assert_eq!(u(&a["memory_bytes"]), num(key("a:set:0"), "memory_bytes"));
    assert_eq!(u(&a["elements"]), 1000);
    assert_eq!(u(&a["by_type"]["set"]["keys"]), 1);
    assert_eq!((u(&a["error_keys"]), u(&a["error_bytes"])), (0, 0));
    assert_eq!(p["prefixes"]["depths"][0]["capped"], false);

    let pat = parse(&["prefixes", "--patterns", "--format", "json", dump]);
    assert_eq!(pat["patterns"], summary["patterns"]);
    assert!(pat.get("prefixes").is_none());
    let c = pat["patterns"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "c:tiny:*")
        .unwrap();
    assert_eq!(u(&c["keys"]), 30);

    let t = parse(&["top", "--format", "json", dump]);
    assert_eq!(t["top_keys"]["by_memory"], summary["top_keys"]["by_memory"]);
    assert_eq!(t["totals"], summary["totals"]);
    let t = parse(&[
        "top", "-n", "2", "--by", "elements", "--format", "json", dump,
    ]);
    assert_eq!(u(&t["top_keys"]["n"]), 2);
    assert_eq!(t["options"]["by"], "elements");
    // The one collection: strings hold no elements.
    let rows = t["top_keys"]["by_elements"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["key"], "a:set:0");
    assert_eq!(u(&rows[0]["elements"]), 1000);
    assert_eq!(
        u(&rows[0]["serialized_bytes"]),
        num(key("a:set:0"), "serialized_bytes")
    );
}
