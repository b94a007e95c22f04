//! `rdbscope diff` against a live redis-server: fill, `SAVE` (OLD), make known changes —
//! a new prefix of N keys, a prefix deleted, a list grown by M elements, a hash pushed over
//! the listpack limit, TTLs dropped from K keys, a key too long for the lint, a new big
//! key — `SAVE` (NEW). The diff must report exactly those changes, from the dumps and from
//! the summaries `report --out-dir` wrote of them; a dump diffed with itself, none.

mod common;

use common::redis::{Conn, RedisServer};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Keys of the new prefix `order`.
const N: usize = 120;
/// Elements pushed onto `queue:jobs` (which held 100).
const M: usize = 250;
/// Keys of `cache:*` whose TTL is dropped.
const K: usize = 30;
/// Keys of the deleted prefix `session`.
const SESSIONS: usize = 300;
const LONG_KEY_SEGMENT: usize = 120;

fn rdbscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args(args)
        .output()
        .expect("rdbscope runs")
}

fn cmd(parts: &[&str]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.as_bytes().to_vec()).collect()
}

fn fill(c: &mut Conn) {
    for i in 0..200 {
        let key = format!("user:{i}:profile");
        c.load(cmd(&["HSET", &key, "name", "ann", "age", "33"]));
        c.load(cmd(&["EXPIRE", &key, "7200"]));
    }
    for i in 0..SESSIONS {
        c.load(cmd(&["SET", &format!("session:{i}"), "token-token-token"]));
    }
    for i in 0..100 {
        c.load(cmd(&["RPUSH", "queue:jobs", &format!("job-{i:060}")]));
    }
    for i in 0..50 {
        c.load(cmd(&["HSET", &format!("cart:{i}"), "sku", "1", "qty", "2"]));
    }
    for i in 0..100 {
        let key = format!("cache:{i}");
        c.load(cmd(&["SET", &key, "cached-value"]));
        c.load(cmd(&["EXPIRE", &key, "259200"]));
    }
    c.replies();
    c.ok(vec![
        b"SET".to_vec(),
        b"blob:big".to_vec(),
        vec![b'b'; 2 << 20],
    ]);
}

fn change(c: &mut Conn) {
    for i in 0..N {
        c.load(cmd(&["SET", &format!("order:{i}"), "pending"]));
    }
    for i in 0..SESSIONS {
        c.load(cmd(&["DEL", &format!("session:{i}")]));
    }
    for i in 0..M {
        c.load(cmd(&[
            "RPUSH",
            "queue:jobs",
            &format!("job-{:060}", 100 + i),
        ]));
    }
    // Past hash-max-listpack-entries (128 upstream, 512 in Debian's build).
    for f in 0..700 {
        c.load(cmd(&["HSET", "cart:7", &format!("extra-{f}"), "1"]));
    }
    for i in 0..K {
        c.load(cmd(&["PERSIST", &format!("cache:{i}")]));
    }
    let long = format!("longname:{}", "a".repeat(LONG_KEY_SEGMENT));
    c.load(cmd(&["SET", &long, "x"]));
    c.replies();
    c.ok(vec![
        b"SET".to_vec(),
        b"blob:new".to_vec(),
        vec![b'n'; 3 << 19],
    ]);
}

fn save(c: &mut Conn, server: &RedisServer, to: &Path) {
    c.ok(cmd(&["SAVE"]));
    std::fs::copy(server.dump_path(), to).expect("copy the dump");
}

struct Runs {
    _dir: tempfile::TempDir,
    old: PathBuf,
    new: PathBuf,
    old_report: PathBuf,
    new_report: PathBuf,
}

fn runs() -> Runs {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = RedisServer::start();
    let mut c = server.connect();
    fill(&mut c);
    let old = dir.path().join("old.rdb");
    save(&mut c, &server, &old);
    change(&mut c);
    let new = dir.path().join("new.rdb");
    save(&mut c, &server, &new);
    let report = |dump: &Path, name: &str| {
        let out = dir.path().join(name);
        let o = rdbscope(&[
            "report",
            "-q",
            dump.to_str().unwrap(),
            "--out-dir",
            out.to_str().unwrap(),
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        out
    };
    let (old_report, new_report) = (report(&old, "old"), report(&new, "new"));
    Runs {
        old,
        new,
        old_report,
        new_report,
        _dir: dir,
    }
}

fn diff_json(old: &Path, new: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "diff",
        "-q",
        "--format",
        "json",
        old.to_str().unwrap(),
        new.to_str().unwrap(),
    ];
    args.extend(extra);
    let o = rdbscope(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("diff --format json is JSON")
}

fn names(list: &Value) -> Vec<&str> {
    let mut v: Vec<&str> = list
        .as_array()
        .expect("a list")
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    v.sort_unstable();
    v
}

fn find<'a>(list: &'a Value, field: &str, value: &str) -> &'a Value {
    list.as_array()
        .expect("a list")
        .iter()
        .find(|x| x[field] == value)
        .unwrap_or_else(|| panic!("no {field} = {value} in {list:#}"))
}

/// What both the dump diff and the summary diff must say.
fn check_common(d: &Value) {
    let long = format!("longname:{}", "a".repeat(LONG_KEY_SEGMENT));
    assert_eq!(d["changed"], true);
    // Keys: +N orders, -300 sessions, the long key, the new blob.
    let keys = &d["totals"]["keys"];
    assert_eq!(keys["change"], N as i64 - SESSIONS as i64 + 2, "{keys}");
    let elements = d["totals"]["elements"]["change"].as_i64().unwrap();
    assert!(elements > M as i64, "elements grew by {elements}");
    // Prefixes: `order` and `longname` appeared, `session` vanished; nothing else came or went.
    let depth1 = &d["prefixes"][0];
    assert_eq!(depth1["depth"], 1);
    assert_eq!(names(&depth1["appeared_names"]), ["longname", "order"]);
    assert_eq!(names(&depth1["vanished_names"]), ["session"]);
    assert_eq!(depth1["within_bounds"], 0);
    let order = find(&depth1["appeared_names"], "name", "order");
    assert_eq!(order["new_keys"], serde_json::json!({"min": N, "max": N}));
    assert_eq!(order["old_keys"], serde_json::json!({"min": 0, "max": 0}));
    let session = find(&depth1["vanished_names"], "name", "session");
    assert_eq!(session["keys_change"]["min"], -(SESSIONS as i64));
    assert_eq!(session["keys_change"]["max"], -(SESSIONS as i64));
    // queue grew (M elements), cart grew (cart:7's fields), blob grew (blob:new).
    let growers = names(&depth1["growers_by_memory"]);
    for p in ["blob", "cart", "queue"] {
        assert!(growers.contains(&p), "{p} among the growers: {growers:?}");
    }
    // Patterns: the same, ids collapsed.
    let patterns = &d["patterns"];
    assert_eq!(
        names(&patterns["appeared_names"]),
        ["blob:new", long.as_str(), "order:*"]
    );
    assert_eq!(names(&patterns["vanished_names"]), ["session:*"]);
    // Encodings: cart:7 crossed from listpack to hashtable.
    let crossings = d["encoding_crossings"].as_array().unwrap();
    assert_eq!(crossings.len(), 1, "{crossings:#?}");
    let cart = &crossings[0];
    assert_eq!(
        (
            &cart["pattern"],
            &cart["type"],
            &cart["from"],
            &cart["to"],
            &cart["keys"],
            &cart["exact"]
        ),
        (
            &"cart:*".into(),
            &"hash".into(),
            &"listpack".into(),
            &"hashtable".into(),
            &1.into(),
            &true.into()
        )
    );
    // TTL: the K keys of cache:* moved from 1d_7d to no_ttl.
    let class = |b: &str| {
        find(&d["ttl"]["classes"], "bucket", b)["keys"]["change"]
            .as_i64()
            .unwrap()
    };
    assert_eq!(class("1d_7d"), -(K as i64));
    assert_eq!(class("1h_24h"), 0);
    assert_eq!(
        class("no_ttl"),
        K as i64 + N as i64 + 2 - SESSIONS as i64,
        "no-TTL keys: +K, +N orders, the long key and blob:new, -sessions"
    );
    let lost = find(&d["ttl"]["lost_ttl_by_pattern"], "pattern", "cache:*");
    assert_eq!(
        (&lost["lost_ttl_keys"], &lost["keys_change"]),
        (&K.into(), &0.into())
    );
    // Lint: the long key is a new key.too-long finding.
    let new_findings = d["lint"]["new"].as_array().unwrap();
    let too_long = new_findings
        .iter()
        .find(|f| f["rule"] == "key.too-long")
        .unwrap_or_else(|| panic!("key.too-long among {new_findings:#?}"));
    assert_eq!(
        (&too_long["subject"], &too_long["certain"]),
        (&long.as_str().into(), &true.into())
    );
    assert!(d["alerts"].as_array().unwrap().is_empty());
    // The list: elements grew by exactly M.
    let queue = find(&d["big_keys"]["keys"], "key", "queue:jobs");
    assert_eq!(queue["status"], "grew");
    assert_eq!(
        (&queue["old_elements"], &queue["new_elements"]),
        (&100.into(), &(100 + M).into())
    );
}

#[test]
fn diff_reports_exactly_the_changes_made_from_dumps_and_from_summaries() {
    let r = runs();
    let from_dumps = diff_json(&r.old, &r.new, &[]);
    check_common(&from_dumps);
    // Both dumps: big keys compared key by key, TTLs lost counted key by key.
    assert_eq!(from_dumps["ttl"]["lost_ttl_keys"], K);
    assert_eq!(from_dumps["big_keys"]["exact_above_bytes"], 1 << 20);
    let blob = find(&from_dumps["big_keys"]["keys"], "key", "blob:new");
    assert_eq!(
        (&blob["status"], &blob["old_memory_bytes"]),
        (&"new".into(), &Value::Null)
    );
    assert!(blob["new_memory_bytes"].as_u64().unwrap() >= 3 << 19);
    let big = from_dumps["big_keys"]["keys"].as_array().unwrap();
    assert!(
        big.iter().all(|k| k["key"] != "blob:big"),
        "blob:big did not change"
    );

    let from_summaries = diff_json(&r.old_report, &r.new_report.join("summary.json"), &[]);
    check_common(&from_summaries);
    assert_eq!(from_summaries["old"]["kind"], "summary");
    assert_eq!(from_summaries["ttl"]["lost_ttl_keys"], Value::Null);
    // From summaries OLD lists its top 50 only: blob:new may have been below it.
    let blob = find(&from_summaries["big_keys"]["keys"], "key", "blob:new");
    assert_eq!(blob["status"], "entered_top");
    assert!(blob["old_memory_at_most"].as_u64().unwrap() < 3 << 19);

    // A dump and a summary mix.
    let mixed = diff_json(&r.old_report, &r.new, &[]);
    check_common(&mixed);

    // Shards given with --old/--new read the same.
    let o = rdbscope(&[
        "diff",
        "-q",
        "--format",
        "json",
        "--old",
        r.old.to_str().unwrap(),
        "--new",
        r.new.to_str().unwrap(),
    ]);
    let shards: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(shards["totals"], from_dumps["totals"]);

    // CSV: one row per figure, ranges as min/max.
    let o = rdbscope(&[
        "diff",
        "-q",
        "--format",
        "csv",
        r.old.to_str().unwrap(),
        r.new.to_str().unwrap(),
    ]);
    let csv = String::from_utf8(o.stdout).unwrap();
    assert!(csv.starts_with("section,name,metric,old_min,old_max,new_min,new_max,change_min,change_max,change_percent,status\n"), "{csv}");
    assert!(
        csv.contains(&format!(
            "\nprefix:1,order,keys,0,0,{N},{N},{N},{N},,appeared\n"
        )),
        "{csv}"
    );
    assert!(
        csv.contains(&format!("\nlost_ttl,,keys,0,0,{K},{K},{K},{K},,exact\n")),
        "{csv}"
    );
}

#[test]
fn a_dump_diffed_with_itself_has_no_change_and_alerts_exit_1() {
    let r = runs();
    let same = diff_json(&r.old, &r.old, &[]);
    assert_eq!(same["changed"], false);
    assert_eq!(same["totals"]["memory_bytes"]["change"], 0);
    assert_eq!(same["ttl"]["lost_ttl_keys"], 0);
    assert!(same["big_keys"]["keys"].as_array().unwrap().is_empty());
    assert!(same["encoding_crossings"].as_array().unwrap().is_empty());
    assert!(same["lint"]["new"].as_array().unwrap().is_empty());
    let o = rdbscope(&[
        "diff",
        "-q",
        r.old.to_str().unwrap(),
        r.old_report.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("\nNo change.\n"), "{text}");
    // The summary lists 50 of the 200 `user:<id>` prefixes: the other 150 compare only
    // within the bounds it gives, and are said to.
    assert!(
        text.contains("Prefixes at depth 2: 0 appeared, 0 vanished, 0 grew, 0 shrank, 150 within their error bounds"),
        "{text}"
    );

    let (old, new) = (r.old.to_str().unwrap(), r.new.to_str().unwrap());
    let exit = |extra: &[&str]| {
        let mut args = vec!["diff", "-q", old, new];
        args.extend(extra);
        let o = rdbscope(&args);
        (o.status.code(), String::from_utf8(o.stdout).unwrap())
    };
    // Memory grew (blob:new alone is 1.5 MiB over ~2.1 MiB).
    let (code, text) = exit(&["--fail-on-growth", "10"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("ALERT --fail-on-growth: total memory grew"),
        "{text}"
    );
    assert_eq!(exit(&["--fail-on-growth", "1000"]).0, Some(0));
    let (code, text) = exit(&["--fail-on-prefix-growth", "50"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("ALERT --fail-on-prefix-growth: queue grew"),
        "{text}"
    );
    // Changes under --min-change are noise: no prefix alert, no prefix rows.
    let (code, text) = exit(&["--fail-on-prefix-growth", "50", "--min-change", "10MB"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("Prefixes at depth 1: no change"), "{text}");

    // A summary of an unknown schema version is refused by name.
    let future = r.old_report.join("future.json");
    let text = std::fs::read_to_string(r.old_report.join("summary.json")).unwrap();
    std::fs::write(
        &future,
        text.replacen("\"schema_version\": 3", "\"schema_version\": 9", 1),
    )
    .unwrap();
    let o = rdbscope(&["diff", future.to_str().unwrap(), new]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("schema_version 9: this rdbscope reads versions 1 to 3"),
        "{err}"
    );
    // A version 1 summary (before `state`) still compares as it did.
    let mut v1: serde_json::Value = serde_json::from_str(&text).unwrap();
    v1["schema_version"] = 1.into();
    v1.as_object_mut().unwrap().remove("state").unwrap();
    let old_v1 = r.old_report.join("v1.json");
    std::fs::write(&old_v1, serde_json::to_string_pretty(&v1).unwrap()).unwrap();
    let from_v2 = rdbscope(&[
        "diff",
        r.old_report.to_str().unwrap(),
        new,
        "--format",
        "json",
    ]);
    let from_v1 = rdbscope(&["diff", old_v1.to_str().unwrap(), new, "--format", "json"]);
    assert_eq!(from_v1.status.code(), Some(0));
    let strip_old = |o: &std::process::Output| {
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v.as_object_mut().unwrap().remove("old");
        v
    };
    assert_eq!(strip_old(&from_v1), strip_old(&from_v2));
    // A version 2 summary counted a string's length as its elements: those are taken out,
    // and the comparison says so once instead of showing a change in elements.
    let mut v2: serde_json::Value = serde_json::from_str(&text).unwrap();
    v2["schema_version"] = 2.into();
    let lengths = 441_000u64;
    let bump = |v: &mut serde_json::Value| {
        let e = v["elements"].as_u64().unwrap();
        v["elements"] = (e + lengths).into();
    };
    bump(&mut v2["totals"]);
    for t in v2["by_type"].as_array_mut().unwrap() {
        if t["type"] == "string" {
            bump(t);
        }
    }
    let dbs = v2["by_db"].as_array_mut().unwrap();
    assert_eq!(dbs.len(), 1);
    bump(&mut dbs[0]);
    let old_v2 = r.old_report.join("v2.json");
    std::fs::write(&old_v2, serde_json::to_string_pretty(&v2).unwrap()).unwrap();
    let from_old = rdbscope(&["diff", old_v2.to_str().unwrap(), new, "--format", "json"]);
    assert_eq!(from_old.status.code(), Some(0));
    let err = String::from_utf8_lossy(&from_old.stderr);
    assert_eq!(
        err.matches("counted a string's length as its elements")
            .count(),
        1,
        "{err}"
    );
    assert_eq!(strip_old(&from_old), strip_old(&from_v2));
    let table = rdbscope(&["diff", old_v2.to_str().unwrap(), new]);
    let (with_v2, with_v3) = (
        String::from_utf8_lossy(&table.stdout).into_owned(),
        String::from_utf8_lossy(&rdbscope(&["diff", r.old_report.to_str().unwrap(), new]).stdout)
            .into_owned(),
    );
    let elements_row = |t: &str| {
        t.lines()
            .find(|l| l.contains("│ elements"))
            .map(str::to_owned)
    };
    assert_eq!(elements_row(&with_v2), elements_row(&with_v3), "{with_v2}");
    assert!(elements_row(&with_v3).is_some(), "{with_v3}");
}

/// The summary.json the previous release wrote (schema version 2) of a dump compares with
/// the dump itself: the same keys, memory, elements and findings, no note.
#[test]
fn a_summary_the_previous_release_wrote_compares_with_its_dump() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let old = root.join("summaries/schema2-redis-7.4.1-alltypes.summary.json");
    let dump = root.join("real/redis-7.4.1-alltypes.rdb");
    let d = diff_json(&old, &dump, &[]);
    assert_eq!(d["old"]["kind"], "summary");
    let totals = &d["totals"];
    for (field, old) in [
        ("keys", 44),
        ("memory_bytes", 486_643),
        ("serialized_bytes", 167_282),
        ("elements", 7_830),
        ("keys_with_ttl", 4),
    ] {
        assert_eq!(totals[field]["old"], old, "{field}: {totals}");
        assert_eq!(totals[field]["change"], 0, "{field}: {totals}");
    }
    assert_eq!(d["changed"], false, "{d}");
    assert_eq!(d["lint"]["rules"], serde_json::json!([]), "{d}");
    assert_eq!(d["notes"], serde_json::json!([]), "{d}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let o = rdbscope(&[
        "report",
        "-q",
        "--baseline",
        old.to_str().unwrap(),
        "--out-dir",
        out.to_str().unwrap(),
        dump.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("schema2-redis-7.4.1-alltypes.summary.json"),
        "no baseline named"
    );
}

/// The `<tr>` of the table `id` in `html` whose first cell is `name`.
fn html_row<'a>(html: &'a str, id: &str, name: &str) -> &'a str {
    let table = html
        .split(&format!("<table id=\"{id}\">"))
        .nth(1)
        .unwrap_or_else(|| panic!("no table {id}"));
    let table = table.split("</table>").next().unwrap();
    table
        .split("<tr>")
        .find(|r| r.starts_with(&format!("<td class=\"key\">{name}</td>")))
        .unwrap_or_else(|| panic!("no row {name} in {id}: {table}"))
}

/// The `data-v` of the element with `id` in `html`.
fn html_data_v(html: &str, id: &str) -> Option<i64> {
    let at = html.find(&format!("id=\"{id}\" data-v=\""))? + id.len() + 14;
    let end = html[at..].find('"')?;
    html[at..at + end].parse().ok()
}

#[test]
fn report_baseline_shows_what_diff_computes() {
    let r = runs();
    let dir = tempfile::tempdir().expect("temp dir");
    let (old, new) = (r.old.to_str().unwrap(), r.new.to_str().unwrap());
    let report = |baseline: &str, name: &str| {
        let out = dir.path().join(name);
        let page = dir.path().join(format!("{name}.html"));
        let o = rdbscope(&[
            "report",
            "-q",
            new,
            "--baseline",
            baseline,
            "--out-dir",
            out.to_str().unwrap(),
            "--html",
            page.to_str().unwrap(),
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        assert_eq!(html, std::fs::read_to_string(page).unwrap());
        let json: Value =
            serde_json::from_slice(&std::fs::read(out.join("diff.json")).unwrap()).unwrap();
        (html, json)
    };

    // From dumps: diff.json is `diff OLD NEW`, key by key.
    let (html, json) = report(old, "from-dumps");
    assert_eq!(json, diff_json(&r.old, &r.new, &[]));
    check_common(&json);
    assert_eq!(
        html_data_v(&html, "base-keys"),
        Some(N as i64 - SESSIONS as i64 + 2)
    );
    assert_eq!(html_data_v(&html, "base-lost-ttl"), Some(K as i64));
    assert_eq!(
        html_data_v(&html, "base-memory"),
        json["totals"]["memory_bytes"]["change"].as_i64()
    );
    assert!(html.contains(
        "<nav><a href=\"#headline\">Headline</a><a href=\"#baseline\">Since baseline</a>"
    ));
    let depth1 = &json["prefixes"][0];
    let line = format!(
        "Prefixes at depth 1: 2 appeared, 1 vanished, {} grew, {} shrank, 0 within their error bounds",
        depth1["grew"], depth1["shrank"]
    );
    assert!(
        html.contains(&format!(
            "<details id=\"base-prefixes-1\" open><summary>{line}</summary><table id=\"base-prefixes-1-table\">"
        )),
        "{line}"
    );
    assert!(html_row(&html, "base-prefixes-1-table", "order").starts_with(&format!(
        "<td class=\"key\">order</td><td>appeared</td><td class=\"n\">0</td><td class=\"n\">{N}</td><td class=\"n\">+{N}</td>"
    )));
    assert!(html_row(&html, "base-prefixes-1-table", "session").starts_with(&format!(
        "<td class=\"key\">session</td><td>vanished</td><td class=\"n\">{SESSIONS}</td><td class=\"n\">0</td><td class=\"n\">-{SESSIONS}</td>"
    )));
    assert!(html_row(&html, "base-crossings", "cart:*").starts_with(
        "<td class=\"key\">cart:*</td><td>hash</td><td>listpack</td><td>hashtable</td><td class=\"n\">1</td>"
    ));
    let queue = html_row(&html, "base-big-keys", "queue:jobs");
    assert!(queue.contains("<td>list</td><td>grew</td>"), "{queue}");
    assert!(
        queue.ends_with(&format!(
            "<td class=\"n\">100</td><td class=\"n\">{}</td></tr>",
            100 + M
        )),
        "{queue}"
    );
    let long = format!("longname:{}", "a".repeat(LONG_KEY_SEGMENT));
    assert!(html_row(&html, "base-lint-new", &long).contains("<td>key.too-long</td>"));
    assert!(html.contains("<p>Keys that lost their TTL (key by key): 30</p>"));

    // From the summary `report --out-dir` wrote: diff.json is `diff OLD_DIR NEW`.
    let (html, json) = report(r.old_report.to_str().unwrap(), "from-summary");
    assert_eq!(json, diff_json(&r.old_report, &r.new, &[]));
    assert_eq!(json["old"]["kind"], "summary");
    assert_eq!(
        html_data_v(&html, "base-keys"),
        Some(N as i64 - SESSIONS as i64 + 2)
    );
    assert_eq!(
        html_data_v(&html, "base-lost-ttl"),
        None,
        "not counted key by key"
    );

    // Without --baseline: no section, no diff files.
    let out = dir.path().join("plain");
    let o = rdbscope(&["report", "-q", new, "--out-dir", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let plain = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(!plain.contains("id=\"baseline\"") && !plain.contains("Since baseline"));
    assert!(!out.join("diff.json").exists());
}
