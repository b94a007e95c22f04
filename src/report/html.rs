//! `report.html`: the `summary.json` figures as one self-contained page (inline CSS, SVG and
//! a little JS; no request leaves it), readable on screen and printable.
//!
//! Every name (key, prefix, pattern, file, aux value) is already escaped by
//! [`super::escape`] and is written here as an HTML text node or quoted attribute with
//! `& < > " '` replaced, so markup in a key renders as text. No data is embedded in the
//! script: the table sorts and filters the rows already in the page.

use super::summary::{CountsJson, GroupJson, Summary};
use super::tables::bytes as human_bytes;
use serde_json::Value;
use std::fmt::Write;

/// Rows of the prefix and pattern tables.
const GROUP_ROWS: usize = 30;
/// Width of a bar at 100 %, in SVG units.
const BAR_WIDTH: f64 = 400.0;

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:70em;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.8em}
table{border-collapse:collapse;margin:.5em 0}th,td{padding:2px 8px;border-bottom:1px solid #eee;text-align:left}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.cards{display:flex;flex-wrap:wrap;gap:1em}.card{border:1px solid #ccc;border-radius:4px;padding:.5em 1em}
.card b{display:block;font-size:1.4em}.key{font-family:monospace;word-break:break-all}
svg text{font-size:12px}th[data-sort]{cursor:pointer;text-decoration:underline dotted}
.sev-error{color:#b00}.sev-warning{color:#a60}.sev-info{color:#06a}
@media print{#filter{display:none}h2{break-after:avoid}table,svg{break-inside:avoid}}";

const SCRIPT: &str = "(function(){var t=document.getElementById('top-keys');if(!t)return;
var b=t.tBodies[0];var f=document.getElementById('filter');
f.addEventListener('input',function(){var q=f.value.toLowerCase();
for(var r of b.rows){r.style.display=r.textContent.toLowerCase().indexOf(q)<0?'none':'';}});
t.querySelectorAll('th[data-sort]').forEach(function(h,i){var up=false;h.addEventListener('click',function(){
up=!up;var num=h.dataset.sort==='n';var rows=Array.from(b.rows);
rows.sort(function(x,y){var a=x.cells[i],c=y.cells[i];
var d=num?(Number(a.dataset.v)-Number(c.dataset.v)):a.textContent.localeCompare(c.textContent);
return up?d:-d;});rows.forEach(function(r){b.appendChild(r);});});});})();";

/// Text for an HTML text node or a quoted attribute value.
fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page for `s` (the `summary.json` of the same run).
pub fn render(s: &Summary) -> String {
    let mut out = String::with_capacity(64 << 10);
    let title = match s.files.as_slice() {
        [one] => format!("rdbscope report: {}", one.path),
        files => format!("rdbscope report: {} files", files.len()),
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        escape_html(&title),
        escape_html(&title)
    );
    headline(&mut out, s);
    by_type(&mut out, s);
    groups(&mut out, s);
    top_keys(&mut out, s);
    lint(&mut out, s);
    if !s.notes.is_empty() {
        out.push_str("<h2>Notes</h2><ul>");
        for n in &s.notes {
            let _ = write!(out, "<li>{}</li>", escape_html(n));
        }
        out.push_str("</ul>\n");
    }
    let _ = write!(
        out,
        "<p>{}</p>\n<script>{SCRIPT}</script>\n</body></html>\n",
        escape_html(&s.generator)
    );
    out
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn card(out: &mut String, id: &str, label: &str, value: u64, bytes: bool) {
    let text = if bytes {
        human_bytes(value)
    } else {
        value.to_string()
    };
    let _ = write!(
        out,
        "<div class=\"card\">{label}<b id=\"{id}\" data-v=\"{value}\">{text}</b></div>"
    );
}

fn headline(out: &mut String, s: &Summary) {
    let t = &s.totals;
    out.push_str("<h2>Headline</h2><div class=\"cards\">");
    card(out, "total-keys", "keys", t.keys, false);
    card(out, "total-memory", "memory (model)", t.memory_bytes, true);
    let used: Vec<u64> = s.files.iter().filter_map(|f| f.used_mem).collect();
    if used.len() == s.files.len() && !used.is_empty() {
        card(out, "used-mem", "used-mem (dump)", used.iter().sum(), true);
    }
    card(
        out,
        "total-serialized",
        "serialized",
        t.serialized_bytes,
        true,
    );
    card(
        out,
        "keys-without-ttl",
        "keys without TTL",
        t.keys_without_ttl,
        false,
    );
    out.push_str("</div>\n<h3>Files</h3><table><tr><th>file</th><th>server</th><th>rdb</th>\
                  <th class=\"n\">bytes</th><th class=\"n\">used-mem</th><th>allocator (model)</th><th>checksum</th></tr>");
    for f in &s.files {
        let model = f.model.as_ref().map(allocator).unwrap_or_default();
        let _ = write!(
            out,
            "<tr><td class=\"key\">{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td>{}</td><td>{}</td></tr>",
            escape_html(&f.path),
            escape_html(f.server_version.as_deref().unwrap_or("?")),
            f.rdb_version.map(|v| v.to_string()).unwrap_or_default(),
            f.file_bytes,
            f.used_mem.map(human_bytes).unwrap_or_default(),
            escape_html(&model),
            f.checksum,
        );
    }
    out.push_str("</table>\n<h3>By database</h3><table><tr><th>db</th>");
    counts_header(out);
    out.push_str("</tr>");
    for db in &s.by_db {
        let _ = write!(out, "<tr><td>{}</td>", db.db);
        counts_cells(out, &db.counts, t.memory_bytes);
        out.push_str("</tr>");
    }
    out.push_str("</table>\n");
}

/// The allocator the model used and why (`jemalloc (fallback)`).
fn allocator(model: &Value) -> String {
    let field = |k: &str| {
        model
            .pointer(&format!("/allocator/{k}"))
            .and_then(Value::as_str)
    };
    match (field("name"), field("chosen_by")) {
        (Some(name), Some(by)) => format!("{name} ({by})"),
        (Some(name), None) => name.to_string(),
        _ => String::new(),
    }
}

fn counts_header(out: &mut String) {
    out.push_str(
        "<th class=\"n\">keys</th><th class=\"n\">memory</th><th class=\"n\">share</th>\
         <th class=\"n\">serialized</th><th class=\"n\">no TTL</th>",
    );
}

fn counts_cells(out: &mut String, c: &CountsJson, whole: u64) {
    let _ = write!(
        out,
        "<td class=\"n\">{}</td><td class=\"n\" data-v=\"{}\">{}</td><td class=\"n\">{:.1} %</td>\
         <td class=\"n\">{}</td><td class=\"n\">{}</td>",
        c.keys,
        c.memory_bytes,
        human_bytes(c.memory_bytes),
        share(c.memory_bytes, whole),
        human_bytes(c.serialized_bytes),
        c.keys_without_ttl
    );
}

/// Horizontal bars, one per `(label, keys, memory)`, scaled to the largest share.
fn bars(out: &mut String, id: &str, rows: &[(String, u64, u64)], whole: u64) {
    const ROW: f64 = 20.0;
    const LABEL: f64 = 230.0;
    let height = ROW * rows.len() as f64 + 4.0;
    let _ = write!(
        out,
        "<svg id=\"{id}\" role=\"img\" width=\"{w}\" height=\"{height}\" viewBox=\"0 0 {w} {height}\">",
        w = LABEL + BAR_WIDTH + 220.0
    );
    for (i, (label, keys, memory)) in rows.iter().enumerate() {
        let y = ROW * i as f64 + 2.0;
        let pct = share(*memory, whole);
        let _ = write!(
            out,
            "<text x=\"0\" y=\"{ty}\">{}</text><rect x=\"{LABEL}\" y=\"{y}\" width=\"{:.1}\" height=\"{h}\" fill=\"#4a7fb5\"/>\
             <text x=\"{tx}\" y=\"{ty}\">{} · {pct:.1} % · {keys} keys</text>",
            escape_html(label),
            BAR_WIDTH * pct / 100.0,
            human_bytes(*memory),
            ty = y + 13.0,
            h = ROW - 4.0,
            tx = LABEL + BAR_WIDTH * pct / 100.0 + 6.0,
        );
    }
    out.push_str("</svg>\n");
}

fn by_type(out: &mut String, s: &Summary) {
    let whole = s.totals.memory_bytes;
    out.push_str("<h2>Memory by type</h2>");
    let rows: Vec<_> = s
        .by_type
        .iter()
        .map(|t| (t.type_name.clone(), t.counts.keys, t.counts.memory_bytes))
        .collect();
    bars(out, "by-type", &rows, whole);
    out.push_str("<h2>Memory by encoding</h2>");
    let rows: Vec<_> = s
        .by_encoding
        .iter()
        .map(|e| {
            (
                format!("{} {}", e.type_name, e.encoding),
                e.counts.keys,
                e.counts.memory_bytes,
            )
        })
        .collect();
    bars(out, "by-encoding", &rows, whole);
    out.push_str("<table><tr><th>type</th><th>encoding</th>");
    counts_header(out);
    out.push_str("</tr>");
    for e in &s.by_encoding {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td>",
            escape_html(&e.type_name),
            e.encoding
        );
        counts_cells(out, &e.counts, whole);
        out.push_str("</tr>");
    }
    out.push_str("</table>\n");
}

fn group_table(
    out: &mut String,
    id: &str,
    rows: &[GroupJson],
    other: Option<&GroupJson>,
    whole: u64,
) {
    let _ = write!(
        out,
        "<table id=\"{id}\"><tr><th>name</th><th class=\"n\">keys</th><th class=\"n\">memory</th>\
         <th class=\"n\">share</th><th class=\"n\">serialized</th><th class=\"n\">no-TTL memory</th></tr>"
    );
    for g in rows.iter().take(GROUP_ROWS).chain(other) {
        let _ = write!(
            out,
            "<tr><td class=\"key\">{}</td><td class=\"n\">{}</td><td class=\"n\" data-v=\"{}\">{}</td>\
             <td class=\"n\">{:.1} %</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            escape_html(&g.name),
            g.keys,
            g.memory_bytes,
            human_bytes(g.memory_bytes),
            share(g.memory_bytes, whole),
            human_bytes(g.serialized_bytes),
            human_bytes(g.no_ttl_memory_bytes),
        );
    }
    out.push_str("</table>\n");
}

fn groups(out: &mut String, s: &Summary) {
    let whole = s.totals.memory_bytes;
    for d in s
        .prefixes
        .depths
        .iter()
        .filter(|d| !d.table.rows.is_empty())
    {
        let _ = write!(out, "<h2>Prefixes, depth {}</h2>", d.depth);
        group_table(
            out,
            &format!("prefixes-{}", d.depth),
            &d.table.rows,
            d.table.other.as_ref(),
            whole,
        );
    }
    out.push_str("<h2>Patterns</h2>");
    group_table(
        out,
        "patterns",
        &s.patterns.rows,
        s.patterns.other.as_ref(),
        whole,
    );
}

fn top_keys(out: &mut String, s: &Summary) {
    out.push_str(
        "<h2>Top keys by memory</h2><p><input id=\"filter\" type=\"search\" placeholder=\"filter keys\"></p>\
         <table id=\"top-keys\"><thead><tr><th data-sort=\"t\">key</th><th data-sort=\"t\">db</th>\
         <th data-sort=\"t\">type</th><th data-sort=\"t\">encoding</th><th class=\"n\" data-sort=\"n\">elements</th>\
         <th class=\"n\" data-sort=\"n\">memory</th><th class=\"n\" data-sort=\"n\">serialized</th>\
         <th data-sort=\"t\">file</th></tr></thead><tbody>",
    );
    for k in &s.top_keys.by_memory {
        let elements = k.elements.unwrap_or(0);
        let _ = write!(
            out,
            "<tr><td class=\"key\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\" data-v=\"{elements}\">{}</td>\
             <td class=\"n\" data-v=\"{}\">{}</td><td class=\"n\" data-v=\"{}\">{}</td><td class=\"key\">{}</td></tr>",
            escape_html(&k.key),
            k.db,
            escape_html(&k.type_name),
            k.encoding,
            k.elements.map(|e| e.to_string()).unwrap_or_default(),
            k.memory_bytes,
            human_bytes(k.memory_bytes),
            k.serialized_bytes,
            human_bytes(k.serialized_bytes),
            escape_html(&k.file),
        );
    }
    out.push_str("</tbody></table>\n");
}

fn lint(out: &mut String, s: &Summary) {
    let Some(summary) = s
        .lint
        .as_ref()
        .and_then(|l| l.get("summary"))
        .and_then(Value::as_array)
    else {
        return;
    };
    out.push_str("<h2>Lint findings</h2>");
    let text = |v: &Value, k: &str| escape_html(v.get(k).and_then(Value::as_str).unwrap_or(""));
    let num = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    if summary.iter().all(|r| num(r, "findings") == 0) {
        out.push_str("<p>No findings.</p>\n");
        return;
    }
    out.push_str(
        "<table id=\"lint\"><tr><th>rule</th><th>severity</th><th class=\"n\">findings</th>\
         <th class=\"n\">keys</th><th class=\"n\">memory</th><th>examples</th></tr>",
    );
    for r in summary.iter().filter(|r| num(r, "findings") > 0) {
        let severity = text(r, "severity");
        let examples: Vec<String> = r
            .get("examples")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(escape_html)
            .collect();
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"sev-{severity}\">{severity}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"key\">{}</td></tr>",
            text(r, "rule"),
            num(r, "findings"),
            num(r, "keys"),
            human_bytes(num(r, "memory_bytes")),
            examples.join("<br>"),
        );
    }
    out.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_text() {
        assert_eq!(
            escape_html("</script><img src=x onerror=alert(1)>"),
            "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"
        );
        assert_eq!(escape_html("a&b\"c'd"), "a&amp;b&quot;c&#39;d");
    }
}
