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
    let page = dir.join("page.html");
    let out = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .arg("report")
        .arg(dump)
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
