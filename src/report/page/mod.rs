//! `report.html`: the `summary.json` figures as one self-contained page (inline CSS, SVG and
//! a little JS; no request leaves it), readable on screen and printable. One module per
//! section: [`tree`] (prefix icicle, pattern and prefix tables), [`ttl`], [`keys`] (top keys,
//! size distributions, LRU/LFU), [`cluster`] (slots, hash tags), [`lint`], and with a
//! baseline, [`baseline`] (what changed since it).
//!
//! An in-page link (the nav, a lint rule) opens the closed `<details>` around its target, on
//! click and on navigation (`hashchange`, or a page opened at `#id`).
//!
//! Every name (key, prefix, pattern, file, aux value) is already escaped by
//! [`crate::text::escape`] and is written here as an HTML text node or quoted attribute with
//! `& < > " '` replaced, so markup in a key renders as text. No data is embedded in the
//! script: it sorts, filters and zooms the elements already in the page, and reads names
//! only through `textContent`.
//!
//! May import: every other report (the page shows a run's summary.json, its lint findings
//! and a diff against a baseline) and the shared modules of `report`.

mod baseline;
mod cluster;
mod keys;
mod lint;
mod tree;
mod ttl;

use super::diff::compare::Diff;
use super::human::bytes as human_bytes;
use super::run::summary::{CountsJson, ModelJson, SummaryJson};
use crate::aggregates::figure::percent_of;
use std::borrow::Cow;
use std::fmt::Write;

/// Width of a bar at 100 %, in SVG units.
const BAR_WIDTH: f64 = 400.0;
/// Rows of a table or ranking shown, and bars of a tree row, whatever `--top` asks: with the
/// cut names below, this bounds the page (summary.json and the CSVs have every row).
const TABLE_ROWS: usize = 200;
/// Characters of a name shown; longer names end in `…` (summary.json has them whole), so a
/// few huge keys cannot blow up the page.
const NAME_CHARS: usize = 200;

const STYLE: &str = ".partial{background:#fde2e1;border:1px solid #b3261e;padding:.5em 1em}body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:75em;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.8em}h3{font-size:1em}
nav a{margin-right:1em}section{padding-bottom:.5em}
table{border-collapse:collapse;margin:.5em 0}th,td{padding:2px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.cards{display:flex;flex-wrap:wrap;gap:1em}.card{border:1px solid #ccc;border-radius:4px;padding:.5em 1em}
.card b{display:block;font-size:1.4em}.key{font-family:monospace;word-break:break-all}
svg text{font-size:12px}svg.n{cursor:pointer}svg.n text{pointer-events:none}
th[data-sort]{cursor:pointer;text-decoration:underline dotted}
.note{color:#555;font-size:.9em}#prefix-info{font-family:monospace;white-space:pre-wrap;min-height:2.8em;background:#f6f6f6;padding:.3em .5em}
.sev-error{color:#b00;font-weight:bold}.sev-warn{color:#a60;font-weight:bold}.sev-info{color:#06a}
details{margin:.4em 0}summary{cursor:pointer}
@media print{input,nav{display:none}h2{break-after:avoid}table,svg{break-inside:avoid}details>*{display:block}}";

const SCRIPT: &str = "(function(){
document.querySelectorAll('table.sortable').forEach(function(t){var b=t.tBodies[0];
t.tHead.querySelectorAll('th').forEach(function(h,i){if(!h.dataset.sort)return;var up=false;
h.addEventListener('click',function(){up=!up;var num=h.dataset.sort==='n';var rows=Array.from(b.rows);
rows.sort(function(x,y){var a=x.cells[i],c=y.cells[i];
var d=num?(Number(a.dataset.v)-Number(c.dataset.v)):a.textContent.localeCompare(c.textContent);
return up?d:-d;});rows.forEach(function(r){b.appendChild(r);});});});});
document.querySelectorAll('input[data-filter]').forEach(function(f){
var b=document.getElementById(f.dataset.filter).tBodies[0];
f.addEventListener('input',function(){var q=f.value.toLowerCase();
for(var r of b.rows){r.style.display=r.textContent.toLowerCase().indexOf(q)<0?'none':'';}});});
function reveal(h){var id=h.slice(1);try{id=decodeURIComponent(id);}catch(x){}var e=document.getElementById(id);
for(var p=e;p;p=p.parentElement){if(p.tagName==='DETAILS')p.open=true;}return e;}
function go(){var e=location.hash&&reveal(location.hash);if(e)e.scrollIntoView();}
window.addEventListener('hashchange',go);go();
document.addEventListener('click',function(ev){var a=ev.target.closest&&ev.target.closest('a[href^=\"#\"]');
if(a)reveal(a.getAttribute('href'));});
var tree=document.getElementById('prefix-tree');if(!tree)return;
var W=Number(tree.dataset.width),info=document.getElementById('prefix-info');
var nodes=Array.from(tree.querySelectorAll('svg.n'));
function show(n){info.textContent=n.querySelector('title').textContent;}
function zoom(z){var x0=Number(z.dataset.x),w0=Number(z.dataset.w),d0=Number(z.dataset.d);
nodes.forEach(function(n){var x=Number(n.dataset.x),w=Number(n.dataset.w),d=Number(n.dataset.d),nx,nw;
if(d<d0){nx=0;nw=(x<=x0+1e-9&&x+w>=x0+w0-1e-9)?W:0;}else{nx=(x-x0)/w0*W;nw=w/w0*W;}
var on=nw>=0.5&&nx<W-0.1&&nx+nw>0.1;n.style.display=on?'':'none';
if(on){n.setAttribute('x',nx.toFixed(2));n.setAttribute('width',Math.max(nw-1,0.5).toFixed(2));
n.querySelector('text').style.display=nw>40?'':'none';}});show(z);}
nodes.forEach(function(n){n.addEventListener('click',function(){zoom(n);});
n.addEventListener('mouseover',function(){show(n);});});})();";

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

/// `name` cut to `chars` characters, ending in `…` when cut.
fn clip(name: &str, chars: usize) -> Cow<'_, str> {
    match name.char_indices().nth(chars) {
        Some((at, _)) => Cow::Owned(format!("{}…", &name[..at])),
        None => Cow::Borrowed(name),
    }
}

/// A key, prefix, pattern or file name as HTML text: clipped, then escaped.
fn name_html(name: &str) -> String {
    escape_html(&clip(name, NAME_CHARS))
}

/// The page for `s` (the `summary.json` of the same run); with `baseline`, a "Since
/// baseline" section after the headline.
/// The run covers only part of its dumps: said above everything else, the dumps that
/// could not be opened first, then the damaged ones.
fn partial_banner(out: &mut String, s: &SummaryJson) {
    if !s.partial {
        return;
    }
    let mut files: Vec<_> = s.files.iter().filter(|f| f.error.is_some()).collect();
    files.sort_by_key(|f| f.magic.is_some());
    let which: Vec<String> = files
        .iter()
        .map(|f| format!("{}: {}", f.path, f.error.as_deref().unwrap_or_default()))
        .collect();
    let _ = writeln!(
        out,
        "<p class=\"partial\"><strong>PARTIAL</strong>: these numbers cover only what could be \
         read of the dumps ({})</p>",
        name_html(&which.join("; "))
    );
}

pub fn render(s: &SummaryJson, baseline: Option<&Diff>) -> String {
    let mut out = String::with_capacity(256 << 10);
    let title = match s.files.as_slice() {
        [one] => format!("rdbscope report: {}", one.path),
        files => format!("rdbscope report: {} files", files.len()),
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n<nav>",
        name_html(&title),
        name_html(&title)
    );
    let several = s.files.len() > 1;
    let mut sections = vec![("headline", "Headline")];
    if baseline.is_some() {
        sections.push(("baseline", "Since baseline"));
    }
    sections.extend([
        ("types", "Types"),
        ("prefixes", "Prefixes"),
        ("ttl", "TTL"),
        ("keys", "Top keys"),
        ("sizes", "Sizes"),
        ("cluster", "Slots"),
    ]);
    if several {
        sections.push(("files", "Files"));
    }
    if s.lint.is_some() {
        sections.push(("lint", "Lint"));
    }
    for (id, label) in &sections {
        let _ = write!(out, "<a href=\"#{id}\">{label}</a>");
    }
    out.push_str("</nav>\n");
    partial_banner(&mut out, s);
    headline(&mut out, s);
    if let Some(d) = baseline {
        baseline::section(&mut out, d);
    }
    by_type(&mut out, s);
    tree::section(&mut out, s);
    ttl::section(&mut out, s);
    keys::top_keys(&mut out, s);
    keys::sizes(&mut out, s);
    cluster::section(&mut out, s);
    if several {
        files(&mut out, s);
    }
    lint::section(&mut out, s);
    if !s.notes.is_empty() {
        out.push_str("<section id=\"notes\"><h2>Notes</h2><ul>");
        for n in &s.notes {
            let _ = write!(out, "<li>{}</li>", escape_html(n));
        }
        out.push_str("</ul></section>\n");
    }
    let _ = write!(
        out,
        "<p class=\"note\">{}</p>\n<script>{SCRIPT}</script>\n</body></html>\n",
        escape_html(&s.generator)
    );
    out
}

fn share(part: u64, whole: u64) -> f64 {
    percent_of(part as f64, whole).unwrap_or(0.0)
}

/// Under a table of `rows` rows cut to [`TABLE_ROWS`]: how many it shows, and where the rest
/// are (`where_all`).
fn cut_note(out: &mut String, rows: usize, where_all: &str) {
    if rows > TABLE_ROWS {
        let _ = write!(
            out,
            "<p class=\"note\">The first {TABLE_ROWS} of {rows} rows; {where_all}.</p>"
        );
    }
}

/// `<section id=ID><h2>TITLE</h2>`; the caller closes it.
fn open_section(out: &mut String, id: &str, title: &str) {
    let _ = write!(out, "<section id=\"{id}\"><h2>{title}</h2>");
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

fn headline(out: &mut String, s: &SummaryJson) {
    let t = &s.totals;
    open_section(out, "headline", "Headline");
    out.push_str("<div class=\"cards\">");
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
            name_html(&f.path),
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
    out.push_str("</table></section>\n");
}

/// The allocator the model used and why (`jemalloc-16 (detected)`), and the
/// `list-compress-depth` when the dump's evidence chose it.
fn allocator(model: &ModelJson) -> String {
    let a = &model.allocator;
    let mut s = format!("{} ({})", a.name, a.chosen_by);
    if let Some(d) = &a.list_compress_depth {
        s.push_str(&format!(
            ", list-compress-depth {} ({})",
            d.depth, d.chosen_by
        ));
    }
    s
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

/// Horizontal bars, one per `(label, keys, memory)`, the longest full width; each tells its
/// share of `whole`.
fn bars(out: &mut String, id: &str, rows: &[(String, u64, u64)], whole: u64) {
    const ROW: f64 = 20.0;
    const LABEL: f64 = 230.0;
    let longest = rows.iter().map(|r| r.2).max().unwrap_or(0).max(1) as f64;
    let height = ROW * rows.len() as f64 + 4.0;
    let _ = write!(
        out,
        "<svg id=\"{id}\" role=\"img\" width=\"{w}\" height=\"{height}\" viewBox=\"0 0 {w} {height}\">",
        w = LABEL + BAR_WIDTH + 220.0
    );
    for (i, (label, keys, memory)) in rows.iter().enumerate() {
        let y = ROW * i as f64 + 2.0;
        let pct = share(*memory, whole);
        let length = BAR_WIDTH * *memory as f64 / longest;
        let _ = write!(
            out,
            "<text x=\"0\" y=\"{ty}\">{}</text><rect x=\"{LABEL}\" y=\"{y}\" width=\"{:.1}\" height=\"{h}\" fill=\"#4a7fb5\"/>\
             <text x=\"{tx}\" y=\"{ty}\">{} · {pct:.1} % · {keys} keys</text>",
            escape_html(&clip(label, 32)),
            length,
            human_bytes(*memory),
            ty = y + 13.0,
            h = ROW - 4.0,
            tx = LABEL + length + 6.0,
        );
    }
    out.push_str("</svg>\n");
}

/// One bar per item: its label, keys and memory.
fn bar_rows<T>(items: &[T], of: impl Fn(&T) -> (String, &CountsJson)) -> Vec<(String, u64, u64)> {
    items
        .iter()
        .map(|item| {
            let (label, counts) = of(item);
            (label, counts.keys, counts.memory_bytes)
        })
        .collect()
}

fn by_type(out: &mut String, s: &SummaryJson) {
    let whole = s.totals.memory_bytes;
    open_section(out, "types", "Memory by type and encoding");
    let rows = bar_rows(&s.by_type, |t| (t.type_name.clone(), &t.counts));
    bars(out, "by-type", &rows, whole);
    out.push_str("<h3>By encoding</h3>");
    let rows = bar_rows(&s.by_encoding, |e| {
        (format!("{} {}", e.type_name, e.encoding), &e.counts)
    });
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
    out.push_str("</table></section>\n");
}

/// Per file (shard), when the report covers several dumps.
fn files(out: &mut String, s: &SummaryJson) {
    let whole = s.totals.memory_bytes;
    open_section(out, "files", "Per file (shard)");
    let rows = bar_rows(&s.files, |f| {
        let name = f.path.rsplit('/').next().unwrap_or(&f.path);
        (name.to_string(), &f.totals)
    });
    bars(out, "by-file", &rows, whole);
    out.push_str(
        "<table id=\"files\"><tr><th>file</th><th class=\"n\">keys</th><th class=\"n\">memory</th>\
         <th class=\"n\">share</th><th class=\"n\">serialized</th><th class=\"n\">no TTL</th>\
         <th class=\"n\">used-mem</th><th class=\"n\">model / used-mem</th><th>ctime (UTC)</th></tr>",
    );
    for f in &s.files {
        let _ = write!(out, "<tr><td class=\"key\">{}</td>", name_html(&f.path));
        counts_cells(out, &f.totals, whole);
        let ratio = f
            .used_mem
            .filter(|&u| u > 0)
            .map(|u| format!("{:.1} %", share(f.totals.memory_bytes, u)))
            .unwrap_or_default();
        let _ = write!(
            out,
            "<td class=\"n\">{}</td><td class=\"n\">{ratio}</td><td>{}</td></tr>",
            f.used_mem.map(human_bytes).unwrap_or_default(),
            f.ctime
                .map(|c| super::human::utc_seconds(c.saturating_mul(1000)))
                .unwrap_or_default(),
        );
    }
    out.push_str("</table></section>\n");
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

    #[test]
    fn long_names_are_clipped_on_a_character() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("éèàü", 2), "éè…");
        assert_eq!(name_html(&"<".repeat(500)).len(), 4 * NAME_CHARS + 3);
    }
}
