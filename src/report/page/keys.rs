//! Top keys (the memory, element and serialized-size rankings in one sortable, filterable
//! table), the element-count and size distributions per type, and the LRU idle-time and
//! LFU frequency histograms when the dump carries them.

use super::ttl::span;
use super::{escape_html, name_html, open_section, SummaryJson, TABLE_ROWS};
use crate::report::human::bytes as human_bytes;
use crate::report::run::summary::{HistogramJson, TopKeyJson};
use std::collections::HashMap;
use std::fmt::Write;

/// Sort value of a key without TTL: after every expiry.
const NO_TTL_SORT: &str = "9e15";

/// Every key of the three rankings once, in ranking order, with the rankings it is in.
fn union(s: &SummaryJson) -> Vec<(&TopKeyJson, String)> {
    let mut rows: Vec<(&TopKeyJson, String)> = Vec::new();
    let mut at: HashMap<(&str, u64, &str), usize> = HashMap::new();
    let t = &s.top_keys;
    for (by, list) in [
        ("memory", &t.by_memory),
        ("elements", &t.by_elements),
        ("serialized", &t.by_serialized),
    ] {
        for k in list.iter().take(TABLE_ROWS) {
            match at.get(&(k.file.as_str(), k.db, k.key.as_str())) {
                Some(&i) => {
                    rows[i].1.push_str(", ");
                    rows[i].1.push_str(by);
                }
                None => {
                    at.insert((k.file.as_str(), k.db, k.key.as_str()), rows.len());
                    rows.push((k, by.to_string()));
                }
            }
        }
    }
    rows
}

pub(super) fn top_keys(out: &mut String, s: &SummaryJson) {
    let several = s.files.len() > 1;
    open_section(out, "keys", "Top keys");
    let _ = write!(
        out,
        "<p>The {} largest keys by memory, by elements and by serialized size, each once. Click a \
         column to sort; type to filter.</p>\
         <p><input id=\"filter\" type=\"search\" placeholder=\"filter keys\" data-filter=\"top-keys\"></p>\
         <table id=\"top-keys\" class=\"sortable\"><thead><tr><th data-sort=\"t\">key</th><th data-sort=\"t\">db</th>\
         <th data-sort=\"t\">type</th><th data-sort=\"t\">encoding</th><th class=\"n\" data-sort=\"n\">elements</th>\
         <th class=\"n\" data-sort=\"n\">memory</th><th class=\"n\" data-sort=\"n\">serialized</th>\
         <th class=\"n\" data-sort=\"n\">largest element</th><th class=\"n\" data-sort=\"n\">TTL</th>\
         <th data-sort=\"t\">top by</th>{}</tr></thead><tbody>",
        s.top_keys.n.min(TABLE_ROWS),
        if several {
            "<th data-sort=\"t\">file</th>"
        } else {
            ""
        }
    );
    for (k, by) in union(s) {
        let elements = k.elements.unwrap_or(0);
        let reference = s
            .files
            .iter()
            .find(|f| f.path == k.file)
            .map_or(0, |f| f.ttl_reference_ms);
        let (ttl_v, ttl) = match k.expiry_ms.map(|e| e.saturating_sub(reference)) {
            None => (NO_TTL_SORT.to_string(), "none".to_string()),
            Some(left) if left <= 0 => (left.to_string(), "expired".to_string()),
            Some(left) => (left.to_string(), span(left)),
        };
        let _ = write!(
            out,
            "<tr><td class=\"key\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\" data-v=\"{elements}\">{}</td>\
             <td class=\"n\" data-v=\"{}\">{}</td><td class=\"n\" data-v=\"{}\">{}</td>\
             <td class=\"n\" data-v=\"{}\">{}</td><td class=\"n\" data-v=\"{ttl_v}\">{ttl}</td><td>{by}</td>",
            name_html(&k.key),
            k.db,
            escape_html(&k.type_name),
            k.encoding,
            k.elements.map(|e| e.to_string()).unwrap_or_default(),
            k.memory_bytes,
            human_bytes(k.memory_bytes),
            k.serialized_bytes,
            human_bytes(k.serialized_bytes),
            k.largest_element_bytes,
            human_bytes(k.largest_element_bytes),
        );
        if several {
            let _ = write!(out, "<td class=\"key\">{}</td>", name_html(&k.file));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></section>\n");
}

/// Position of a power-of-two range: 0 for `[0, 0]`, then 1 + floor(log2 min).
fn slot(min: u64) -> u32 {
    64 - min.leading_zeros()
}

/// A histogram of `h`'s power-of-two ranges as bars, `w` × `ht` units, `unit` naming a value.
fn histogram(out: &mut String, h: &HistogramJson, w: f64, ht: f64, unit: &dyn Fn(u64) -> String) {
    let (Some(first), Some(last)) = (h.ranges.first(), h.ranges.last()) else {
        return;
    };
    let (lo, hi) = (slot(first.min), slot(last.min));
    let n = f64::from(hi - lo + 1);
    let most = h.ranges.iter().map(|r| r.count).max().unwrap_or(1).max(1) as f64;
    let labels = ht > 60.0;
    let plot = if labels { ht - 16.0 } else { ht };
    let _ = write!(
        out,
        "<svg role=\"img\" width=\"{w}\" height=\"{ht}\" viewBox=\"0 0 {w} {ht}\">"
    );
    // Wide charts label every bar with its range's start; bars stay narrow enough to read.
    let bar = if labels { (w / n).min(48.0) } else { w / n };
    for r in &h.ranges {
        let x = bar * f64::from(slot(r.min) - lo);
        let bh = (plot * r.count as f64 / most).max(1.0);
        let _ = write!(
            out,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" fill=\"#4a7fb5\"><title>{} – {}: {} keys</title></rect>",
            x + 0.5,
            plot - bh,
            (bar - 1.0).max(0.5),
            unit(r.min),
            unit(r.max),
            r.count
        );
        if labels {
            let _ = write!(
                out,
                "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                x + bar / 2.0,
                ht - 2.0,
                unit(r.min)
            );
        }
    }
    out.push_str("</svg>");
}

fn count(v: u64) -> String {
    v.to_string()
}

fn seconds(v: u64) -> String {
    span(i64::try_from(v.saturating_mul(1000)).unwrap_or(i64::MAX))
}

/// `p50 / p90 / p99 / max` of `h`.
fn quantiles(h: &HistogramJson, unit: &dyn Fn(u64) -> String) -> String {
    format!(
        "{} / {} / {} / {}",
        unit(h.p50),
        unit(h.p90),
        unit(h.p99),
        unit(h.max)
    )
}

pub(super) fn sizes(out: &mut String, s: &SummaryJson) {
    open_section(out, "sizes", "Sizes, idle time and frequency");
    let bytes = |v: u64| human_bytes(v);
    out.push_str(
        "<p>Per type, the keys' element counts and memory (model): p50 / p90 / p99 / max, and a \
         histogram over power-of-two ranges (hover a bar for its range and count).</p>\
         <table id=\"distributions\"><tr><th>type</th><th class=\"n\">keys</th><th class=\"n\">elements</th>\
         <th></th><th class=\"n\">memory</th><th></th></tr>",
    );
    for d in &s.distributions {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>",
            d.type_name,
            d.memory_bytes.count,
            quantiles(&d.elements, &count),
        );
        histogram(out, &d.elements, 160.0, 26.0, &count);
        let _ = write!(
            out,
            "</td><td class=\"n\">{}</td><td>",
            quantiles(&d.memory_bytes, &bytes)
        );
        histogram(out, &d.memory_bytes, 160.0, 26.0, &bytes);
        out.push_str("</td></tr>");
    }
    out.push_str("</table>\n");
    for (id, title, h, unit) in [
        (
            "lru",
            "LRU idle time",
            s.lru_idle_seconds.as_ref(),
            &seconds as &dyn Fn(u64) -> String,
        ),
        (
            "lfu",
            "LFU frequency (logarithmic counter, 0–255)",
            s.lfu_frequency.as_ref(),
            &count,
        ),
    ] {
        let Some(h) = h else { continue };
        let _ = write!(
            out,
            "<h3 id=\"{id}\">{title}</h3><p>{} keys; p50 / p90 / p99 / max: {}. Bars start at the \
             value below them (hover for the range).</p>",
            h.count,
            escape_html(&quantiles(h, unit))
        );
        histogram(out, h, 600.0, 120.0, unit);
    }
    if s.lru_idle_seconds.is_none() && s.lfu_frequency.is_none() {
        out.push_str(
            "<p class=\"note\">No LRU or LFU data: the dump was saved without an LRU/LFU maxmemory-policy.</p>",
        );
    }
    out.push_str("</section>\n");
}
