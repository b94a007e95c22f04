//! TTL: the memory freed over time after the dump's ctime (cumulative, to the minute), the
//! TTL classes, the prefixes holding the most memory without a TTL, and the expiry storms.

use super::{clip, escape_html, name_html, open_section, share, SummaryJson};
use crate::aggregates::ttl::TtlBucket;
use crate::report::human::{bytes as human_bytes, utc_seconds};
use crate::text::words::plural;
use std::fmt::Write;

const MINUTE_MS: i64 = 60_000;
const HOUR_MS: i64 = 60 * MINUTE_MS;
const DAY_MS: i64 = 24 * HOUR_MS;
/// Prefixes in the no-TTL chart.
const NO_TTL_ROWS: usize = 15;

/// `3 d 4 h`, `2 h 5 min`, `12 min`, `40 s`: the two largest units.
pub(super) fn span(ms: i64) -> String {
    let ms = ms.max(0);
    let (d, h, m, s) = (
        ms / DAY_MS,
        ms % DAY_MS / HOUR_MS,
        ms % HOUR_MS / MINUTE_MS,
        ms % MINUTE_MS / 1000,
    );
    match (d, h, m) {
        (0, 0, 0) => format!("{s} s"),
        (0, 0, m) => format!("{m} min"),
        (0, h, 0) => format!("{h} h"),
        (0, h, m) => format!("{h} h {m} min"),
        (d, 0, _) => format!("{d} d"),
        (d, h, _) => format!("{d} d {h} h"),
    }
}

/// The cumulative curve: one point per `ttl.expiring_within` offset, then every key with a
/// TTL (`> 30 d`), on a scale of the memory that ever expires.
fn freed_curve(out: &mut String, s: &SummaryJson) {
    const W: f64 = 900.0;
    const H: f64 = 220.0;
    const LEFT: f64 = 70.0;
    const BOTTOM: f64 = 40.0;
    const TOP: f64 = 10.0;
    let with_ttl: u64 = s
        .ttl
        .buckets
        .iter()
        .filter(|b| b.bucket != "no_ttl")
        .map(|b| b.memory_bytes)
        .sum();
    let keys_with_ttl = s.totals.keys_with_ttl;
    let mut points: Vec<(String, u64, u64)> = s
        .ttl
        .expiring_within
        .iter()
        .map(|e| {
            let label = if e.within_ms == 0 {
                "ctime".to_string()
            } else {
                span(e.within_ms)
            };
            (label, e.keys, e.memory_bytes)
        })
        .collect();
    points.push(("> 30 d".into(), keys_with_ttl, with_ttl));
    let whole = s.totals.memory_bytes;
    let top = with_ttl.max(1) as f64;
    let step = (W - LEFT - 20.0) / (points.len() - 1).max(1) as f64;
    let plot = H - BOTTOM - TOP;
    let _ = write!(
        out,
        "<svg id=\"ttl-curve\" role=\"img\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\">"
    );
    for q in 0..=4 {
        let y = TOP + plot * (1.0 - q as f64 / 4.0);
        let v = (top * q as f64 / 4.0) as u64;
        let _ = write!(
            out,
            "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            W - 10.0,
            LEFT - 4.0,
            y + 4.0,
            human_bytes(v)
        );
    }
    let xy = |i: usize, v: u64| (LEFT + step * i as f64, TOP + plot * (1.0 - v as f64 / top));
    out.push_str("<polyline fill=\"none\" stroke=\"#c0504d\" stroke-width=\"2\" points=\"");
    for (i, (_, _, v)) in points.iter().enumerate() {
        let (x, y) = xy(i, *v);
        let _ = write!(out, "{x:.1},{y:.1} ");
    }
    out.push_str("\"/>");
    for (i, (label, keys, v)) in points.iter().enumerate() {
        let (x, y) = xy(i, *v);
        let label = escape_html(label);
        let _ = write!(
            out,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.5\" fill=\"#c0504d\"><title>within {label}: {keys} keys, {} \
             ({:.1} % of all memory)</title></circle>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{label}</text>",
            human_bytes(*v),
            share(*v, whole),
            H - BOTTOM + 20.0,
        );
    }
    out.push_str("</svg>\n");
}

fn no_ttl_by_prefix(out: &mut String, s: &SummaryJson) {
    const LABEL: f64 = 230.0;
    const BAR: f64 = 400.0;
    const ROW: f64 = 20.0;
    let Some(first) = s.prefixes.depths.first() else {
        return;
    };
    let mut rows: Vec<_> = first
        .table
        .rows
        .iter()
        .chain(std::iter::once(&s.prefixes.no_delimiter))
        .filter(|g| g.no_ttl_memory_bytes > 0)
        .collect();
    rows.sort_by_key(|g| std::cmp::Reverse(g.no_ttl_memory_bytes));
    rows.truncate(NO_TTL_ROWS);
    if rows.is_empty() {
        return;
    }
    let biggest = rows
        .iter()
        .map(|g| g.memory_bytes)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let height = ROW * rows.len() as f64 + 4.0;
    let _ = write!(
        out,
        "<h3>Memory without TTL, by prefix</h3><svg id=\"no-ttl\" role=\"img\" width=\"{w}\" height=\"{height}\" \
         viewBox=\"0 0 {w} {height}\">",
        w = LABEL + BAR + 220.0
    );
    for (i, g) in rows.iter().enumerate() {
        let y = ROW * i as f64 + 2.0;
        let all = BAR * g.memory_bytes as f64 / biggest;
        let no_ttl = BAR * g.no_ttl_memory_bytes as f64 / biggest;
        let _ = write!(
            out,
            "<text x=\"0\" y=\"{ty}\">{}</text>\
             <rect x=\"{LABEL}\" y=\"{y}\" width=\"{all:.1}\" height=\"{h}\" fill=\"#d9e3ef\"/>\
             <rect x=\"{LABEL}\" y=\"{y}\" width=\"{no_ttl:.1}\" height=\"{h}\" fill=\"#4a7fb5\"/>\
             <text x=\"{tx:.1}\" y=\"{ty}\">{} ({:.0} %) · {} keys</text>",
            escape_html(&clip(&g.name, 32)),
            human_bytes(g.no_ttl_memory_bytes),
            share(g.no_ttl_memory_bytes, g.memory_bytes),
            g.no_ttl_keys,
            ty = y + 13.0,
            h = ROW - 4.0,
            tx = LABEL + all + 6.0,
        );
    }
    out.push_str(
        "</svg><p class=\"note\">Dark: memory of the keys without a TTL (its share of the prefix's memory, \
         and their count); light: the prefix's whole memory. Depth-1 prefixes, most memory without TTL first.</p>\n",
    );
}

fn storms(out: &mut String, s: &SummaryJson) {
    out.push_str("<h3>Expiry storms</h3>");
    if s.ttl.expiry_storms.is_empty() {
        out.push_str("<p>No key expires within 30 days of the dump.</p>\n");
        return;
    }
    let reference = s.files.first().map_or(0, |f| f.ttl_reference_ms);
    out.push_str(
        "<table id=\"storms\"><tr><th>minute (UTC)</th><th class=\"n\">after ctime</th>\
         <th class=\"n\">keys</th><th class=\"n\">memory</th></tr>",
    );
    for m in &s.ttl.expiry_storms {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            utc_seconds(m.minute_start_ms),
            span(m.minute_start_ms.saturating_sub(reference)),
            m.keys,
            human_bytes(m.memory_bytes),
        );
    }
    out.push_str(
        "</table><p class=\"note\">The minutes in which the most keys expire: many keys expiring \
         at once make latency spikes and a memory drop.</p>\n",
    );
}

pub(super) fn section(out: &mut String, s: &SummaryJson) {
    open_section(out, "ttl", "TTL");
    // A dump without ctime is measured from the time of the analysis: said so, since
    // those figures change from run to run.
    let reference: Vec<String> = s
        .files
        .iter()
        .map(|f| match f.ctime {
            Some(_) => format!("the dump's ctime, {}", utc_seconds(f.ttl_reference_ms)),
            None => format!(
                "the time of the analysis, {}: the dump has no ctime",
                utc_seconds(f.ttl_reference_ms)
            ),
        })
        .collect();
    let _ = write!(
        out,
        "<p>Measured from {}. {} ({:.1} %) {} a TTL, {} none.</p>",
        name_html(&reference.join("; ")),
        plural(s.totals.keys_with_ttl, "key"),
        share(s.totals.keys_with_ttl, s.totals.keys),
        if s.totals.keys_with_ttl == 1 {
            "has"
        } else {
            "have"
        },
        match s.totals.keys_without_ttl {
            1 => "1 has".to_string(),
            n => format!("{n} have"),
        },
    );
    if s.totals.keys_with_ttl > 0 {
        out.push_str("<h3>Memory freed by expiry over time</h3>");
        freed_curve(out, s);
        out.push_str(
            "<p class=\"note\">Cumulative memory of the keys expired that long after ctime (exact to \
             the minute at each mark; the line only joins them).</p>",
        );
    }
    out.push_str(
        "<table id=\"ttl-buckets\"><tr><th>expires</th><th class=\"n\">keys</th><th class=\"n\">memory</th>\
         <th class=\"n\">share</th></tr>",
    );
    for b in &s.ttl.buckets {
        let label = TtlBucket::ALL
            .into_iter()
            .find(|t| t.name() == b.bucket)
            .map_or(b.bucket.as_str(), |t| t.label());
        let _ = write!(
            out,
            "<tr><td>{label}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.1} %</td></tr>",
            b.keys,
            human_bytes(b.memory_bytes),
            share(b.memory_bytes, s.totals.memory_bytes)
        );
    }
    out.push_str("</table>\n");
    no_ttl_by_prefix(out, s);
    storms(out, s);
    out.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans() {
        assert_eq!(span(40_000), "40 s");
        assert_eq!(span(5 * MINUTE_MS), "5 min");
        assert_eq!(span(2 * HOUR_MS), "2 h");
        assert_eq!(span(2 * HOUR_MS + 5 * MINUTE_MS), "2 h 5 min");
        assert_eq!(span(30 * DAY_MS), "30 d");
        assert_eq!(span(3 * DAY_MS + 4 * HOUR_MS + 1), "3 d 4 h");
        assert_eq!(span(-5), "0 s");
    }
}
