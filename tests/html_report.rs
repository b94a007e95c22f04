//! `report --html` and `report.html` in `--out-dir`: the headline numbers are summary.json's,
//! and keys that are markup come out as text (checked on the HTML text; scripts/check-html.sh
//! checks the page a browser builds).

mod craft;

use craft::Rdb;
use serde_json::Value;
use std::fs::{self, File};
use std::io::BufWriter;
use std::path::Path;
use std::process::Command;
use tempfile::TempDir;

const HOSTILE: &str = "</script><img src=x onerror=alert(1)>";

/// `report DUMP --out-dir DIR --html DIR/page.html`: (report.html, page.html, summary.json).
fn report(dump: &Path, dir: &Path) -> (String, String, Value) {
    report_with(dump, dir, &[])
}

fn report_with(dump: &Path, dir: &Path, args: &[&str]) -> (String, String, Value) {
    let page = dir.join("page.html");
    let out = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .arg("report")
        .arg(dump)
        .args(args)
        .arg("--out-dir")
        .arg(dir)
        .arg("--html")
        .arg(&page)
        .arg("-q")
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = serde_json::from_slice(&fs::read(dir.join("summary.json")).unwrap()).unwrap();
    (
        fs::read_to_string(dir.join("report.html")).unwrap(),
        fs::read_to_string(page).unwrap(),
        summary,
    )
}

/// The `data-v` attribute of the element with `id`.
fn data_v(html: &str, id: &str) -> Option<u64> {
    let at = html.find(&format!("id=\"{id}\" data-v=\""))? + id.len() + 14;
    let end = html[at..].find('"')?;
    html[at..at + end].parse().ok()
}

#[test]
fn headline_numbers_are_summary_json() {
    let dir = TempDir::new().unwrap();
    let (html, page, s) = report(
        Path::new("testdata/real/redis-7.0.15-alltypes.rdb"),
        dir.path(),
    );
    assert_eq!(html, page, "--html and --out-dir write the same page");
    let t = &s["totals"];
    assert_eq!(data_v(&html, "total-keys"), Some(41));
    assert_eq!(data_v(&html, "total-keys"), t["keys"].as_u64());
    assert_eq!(data_v(&html, "total-memory"), t["memory_bytes"].as_u64());
    assert_eq!(
        data_v(&html, "total-serialized"),
        t["serialized_bytes"].as_u64()
    );
    assert_eq!(
        data_v(&html, "used-mem"),
        s["files"][0]["used_mem"].as_u64()
    );
    let top = s["prefixes"]["depths"][0]["rows"][0]["name"]
        .as_str()
        .unwrap();
    assert!(html.contains(&format!("<td class=\"key\">{top}</td>")));
    assert!(!html.contains("http://") && !html.contains("https://"));
    assert_eq!(html.matches("<script").count(), 1);
}

#[test]
fn markup_in_keys_is_text() {
    let dir = TempDir::new().unwrap();
    let dump = dir.path().join("hostile.rdb");
    let mut rdb = Rdb::new(BufWriter::new(File::create(&dump).unwrap())).unwrap();
    rdb.aux("ctime", "1700000000").unwrap();
    rdb.select_db(0).unwrap();
    for key in [
        HOSTILE,
        "<b>bold</b>:&amp;:\u{2028}",
        "\"'><svg onload=alert(2)>",
    ] {
        rdb.set_string(key.as_bytes(), b"v", None).unwrap();
    }
    rdb.finish().unwrap();
    let (html, _, s) = report(&dump, dir.path());
    assert_eq!(data_v(&html, "total-keys"), Some(3));
    assert!(html.contains("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"));
    assert!(html.contains("&lt;b&gt;bold&lt;/b&gt;:&amp;amp;:\\xe2\\x80\\xa8"));
    assert!(html.contains("&quot;&#39;&gt;&lt;svg onload=alert(2)&gt;"));
    for raw in ["<img", "<b>", "<svg onload", "onerror=alert(1)>"] {
        assert!(!html.contains(raw), "{raw} in the page");
    }
    assert_eq!(html.matches("<script").count(), 1);
    assert_eq!(html.matches("</script>").count(), 1);
    assert_eq!(s["totals"]["keys"], 3);
}

/// The text of every `<title>` (tooltip) in `html`, unescaped enough to compare numbers.
fn titles(html: &str) -> Vec<&str> {
    html.split("<title>")
        .skip(2) // the page's own <title>
        .filter_map(|t| t.split("</title>").next())
        .collect()
}

#[test]
fn ttl_curve_and_prefix_tree_follow_the_keys() {
    let dir = TempDir::new().unwrap();
    let dump = dir.path().join("ttl.rdb");
    let ctime: i64 = 1_700_000_000;
    let at = |ms: i64| Some(ctime * 1000 + ms);
    let mut rdb = Rdb::new(BufWriter::new(File::create(&dump).unwrap())).unwrap();
    rdb.aux("ctime", &ctime.to_string()).unwrap();
    rdb.select_db(0).unwrap();
    // Expired, in 150 s, in 35 min, in 3 days 5 min, and two keys without TTL (ctime is 20 s into
    // its minute, so the 150 s key lands in the minute starting 100 s after it).
    for (key, expiry) in [
        ("sess:a:1", at(-5_000)),
        ("sess:a:2", at(150_000)),
        ("sess:b:1", at(2_100_000)),
        ("cache:1", at(3 * 86_400_000 + 300_000)),
        ("user:1", None),
        ("user:2", None),
    ] {
        rdb.set_string(key.as_bytes(), b"value", expiry).unwrap();
    }
    rdb.finish().unwrap();
    let (html, _, s) = report(&dump, dir.path());
    let curve = s["ttl"]["expiring_within"].as_array().unwrap();
    let keys: Vec<(i64, u64)> = curve
        .iter()
        .map(|p| {
            (
                p["within_ms"].as_i64().unwrap(),
                p["keys"].as_u64().unwrap(),
            )
        })
        .collect();
    let minute = 60_000;
    let day = 24 * 60 * minute;
    assert_eq!(keys.len(), 15);
    for (within, want) in [
        (0, 1),
        (minute, 1),
        (5 * minute, 2),
        (30 * minute, 2),
        (60 * minute, 3),
        (2 * day, 3),
        (3 * day, 3),
        (7 * day, 4),
        (30 * day, 4),
    ] {
        let got = keys.iter().find(|(w, _)| *w == within).unwrap().1;
        assert_eq!(got, want, "keys expired within {within} ms");
    }
    assert!(html.contains("<svg id=\"ttl-curve\""));
    let tips = titles(&html);
    assert!(tips.iter().any(|t| t.starts_with("within 5 min: 2 keys")));
    assert!(tips
        .iter()
        .any(|t| t.starts_with("within &gt; 30 d: 4 keys")));
    // The prefix tree: every depth-1 prefix is a bar as wide as its memory, `sess:a` under
    // `sess` at depth 2.
    let total = s["totals"]["memory_bytes"].as_f64().unwrap();
    for row in s["prefixes"]["depths"][0]["rows"].as_array().unwrap() {
        let name = row["name"].as_str().unwrap();
        let w = row["memory_bytes"].as_f64().unwrap() / total * 1000.0;
        let bar = format!("data-w=\"{w}\" data-d=\"1\"");
        assert!(html.contains(&bar), "no bar {bar} for {name}");
        assert!(html.contains(&format!(">{name}</text></svg>")));
    }
    let sess_a = tips.iter().find(|t| t.starts_with("sess:a\n")).unwrap();
    assert!(sess_a.contains("2 keys (33.3 % of keys)"), "{sess_a}");
    assert!(
        sess_a.contains("no TTL: 0 keys, 0.0 % of its memory"),
        "{sess_a}"
    );
    let user = tips.iter().find(|t| t.starts_with("user\n")).unwrap();
    assert!(
        user.contains("no TTL: 2 keys, 100.0 % of its memory"),
        "{user}"
    );
    assert!(html.contains("data-x=\"0\" data-w=\"1000\" data-d=\"0\""));
    // The storm table: the minute 90 s after ctime, 1 min after it.
    assert!(html.contains("<table id=\"storms\">"));
    assert!(html.contains("<td class=\"n\">1 min</td>"));
}

#[test]
fn lint_is_grouped_by_rule_with_advice_and_top_keys_are_listed_once() {
    let dir = TempDir::new().unwrap();
    let (html, _, s) = report(
        Path::new("testdata/real/redis-7.4.1-alltypes-lru.rdb"),
        dir.path(),
    );
    let findings = s["lint"]["findings"].as_array().unwrap();
    let big = findings
        .iter()
        .find(|f| f["rule"] == "bigkey.string")
        .unwrap();
    let advice = big["advice"].as_str().unwrap();
    assert!(html.contains(
        "<td><a href=\"#rule-bigkey.string\">bigkey.string</a></td><td class=\"sev-error\">error</td>"
    ));
    assert!(html.contains(&format!("<td>{advice}</td>")));
    assert!(html.contains("<details id=\"rule-bigkey.string\""));
    // Every key of the three rankings once; the biggest list is in all three.
    let top = &s["top_keys"]["by_memory"][0]["key"];
    let cell = format!(
        "<tr><td class=\"key\">{}</td><td>0</td>",
        top.as_str().unwrap()
    );
    assert_eq!(html.matches(&cell).count(), 1, "{cell}");
    // The LRU dump has an idle-time histogram, no LFU one.
    assert!(html.contains("<h3 id=\"lru\">"));
    assert!(!html.contains("<h3 id=\"lfu\">"));
}

#[test]
fn tables_and_tree_rows_are_bounded_whatever_top_asks() {
    let dir = TempDir::new().unwrap();
    let dump = dir.path().join("many.rdb");
    let mut rdb = Rdb::new(BufWriter::new(File::create(&dump).unwrap())).unwrap();
    rdb.aux("ctime", "1700000000").unwrap();
    rdb.select_db(0).unwrap();
    for i in 0..250 {
        rdb.set_string(format!("p{i:03}:k").as_bytes(), b"v", None)
            .unwrap();
    }
    rdb.finish().unwrap();
    let (html, _, s) = report_with(&dump, dir.path(), &["--top", "300"]);
    assert_eq!(
        s["prefixes"]["depths"][0]["rows"].as_array().unwrap().len(),
        250
    );
    let table = html.split("<table id=\"prefixes-1\">").nth(1).unwrap();
    let table = table.split("</table>").next().unwrap();
    assert_eq!(table.matches("<tr><td class=\"key\">").count(), 200);
    assert!(html.contains("The first 200 of 250 rows"));
    let tree = html.split("<svg id=\"prefix-tree\"").nth(1).unwrap();
    assert_eq!(
        tree.matches("data-d=\"1\"").count(),
        201,
        "200 prefixes and (not listed)"
    );
    assert!(tree.contains(">(not listed)</text>"));
    let top = html.split("<table id=\"top-keys\"").nth(1).unwrap();
    let top = top.split("</table>").next().unwrap();
    assert_eq!(top.matches("<tr><td class=\"key\">").count(), 200);
}

#[test]
fn markup_in_keys_is_text_since_baseline_too() {
    let dir = TempDir::new().unwrap();
    let dump = |name: &str, keys: &[&str]| {
        let path = dir.path().join(name);
        let mut rdb = Rdb::new(BufWriter::new(File::create(&path).unwrap())).unwrap();
        rdb.aux("ctime", "1700000000").unwrap();
        rdb.select_db(0).unwrap();
        for key in keys {
            rdb.set_string(key.as_bytes(), b"v", None).unwrap();
        }
        rdb.finish().unwrap();
        path
    };
    let old = dump("old.rdb", &["plain:1"]);
    let new = dump("new.rdb", &[HOSTILE, "\"'><svg onload=alert(2)>:x"]);
    let (html, page, _) = report_with(&new, dir.path(), &["--baseline", old.to_str().unwrap()]);
    assert_eq!(html, page, "--html and --out-dir write the same page");
    let section = html
        .split("<section id=\"baseline\">")
        .nth(1)
        .unwrap()
        .split("</section>")
        .next()
        .unwrap();
    assert!(section.contains(
        "<tr><td class=\"key\">&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;</td><td>0</td><td>string</td><td>new</td>"
    ), "{section}");
    assert!(section.contains(
        "<tr><td class=\"key\">&quot;&#39;&gt;&lt;svg onload=alert(2)&gt;</td><td>appeared</td>"
    ), "{section}");
    assert!(
        section.contains("<tr><td class=\"key\">plain</td><td>vanished</td>"),
        "{section}"
    );
    assert_eq!(data_v(&html, "base-keys"), Some(1));
    for raw in ["<img", "<svg onload"] {
        assert!(!html.contains(raw), "{raw} in the page");
    }
    assert_eq!(html.matches("<script").count(), 1);
    assert_eq!(html.matches("</script>").count(), 1);
}

#[test]
fn ttl_reference_says_whether_it_is_the_dumps_ctime_or_now() {
    let dir = TempDir::new().unwrap();
    let (with_ctime, _, _) = report(
        Path::new("testdata/real/redis-7.4.1-alltypes.rdb"),
        dir.path(),
    );
    assert!(
        with_ctime.contains(
            "Measured from the dump&#39;s ctime, 2026-11-21T21:03:23Z. 4 keys (9.1 %) have a TTL, 40 have none."
        ),
        "{with_ctime}"
    );
    let dir = TempDir::new().unwrap();
    let (no_ctime, _, s) = report(
        Path::new("testdata/peers/redis-rdb-tools/regular_sorted_set.rdb"),
        dir.path(),
    );
    assert_eq!(s["files"][0]["ctime"], Value::Null);
    assert!(
        no_ctime.contains("Measured from the time of the analysis, ")
            && no_ctime.contains(": the dump has no ctime. 0 keys (0.0 %) have a TTL, 1 has none."),
        "{no_ctime}"
    );
}
