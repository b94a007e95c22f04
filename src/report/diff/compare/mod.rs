//! `diff`: what changed between two runs, computed from their summaries read back
//! ([`SummaryJson`]) — totals, prefixes and patterns, big keys, TTL classes, lint findings,
//! encoding crossings — and the alerts `--fail-on-growth` / `--fail-on-prefix-growth` raise.
//!
//! Prefix and pattern rows come from heavy-hitter tables, so a side's figure for a name is a
//! range: a listed row counts at least its figure and at most its error bound more; a name
//! a side does not list holds at most what that side's bounds allow (see
//! docs/summary-json.md). A change is stated only as far as both ranges allow: when the
//! ranges overlap, the change is "within bounds", not a number.
//!
//! [`changes`] holds the types of what changed; this module computes them.

mod changes;

pub use changes::*;

use crate::aggregates::figure::percent_of;
use crate::lint::{Severity, Thresholds};
use crate::model::encoding::Encoding;
use crate::report::lint::{FindingJson, LintJson};
use crate::report::run::summary::{
    CountsJson, FileJson, GroupJson, GroupTableJson, PatternEncodingJson, PatternEncodingsJson,
    SummaryJson, TopKeyJson,
};
use std::collections::{BTreeMap, BTreeSet};

/// Merges two lists keyed by `key` into (key, old, new) rows, in key order.
fn paired<'a, K: Ord + Clone, T>(
    old: &'a [T],
    new: &'a [T],
    key: impl Fn(&T) -> K,
) -> Vec<(K, Option<&'a T>, Option<&'a T>)> {
    let mut rows: BTreeMap<K, (Option<&T>, Option<&T>)> = BTreeMap::new();
    for o in old {
        rows.entry(key(o)).or_default().0 = Some(o);
    }
    for n in new {
        rows.entry(key(n)).or_default().1 = Some(n);
    }
    rows.into_iter().map(|(k, (o, n))| (k, o, n)).collect()
}

fn counts_change(old: Option<&CountsJson>, new: Option<&CountsJson>) -> CountsChange {
    let zero = CountsJson::default();
    CountsChange::new(old.unwrap_or(&zero), new.unwrap_or(&zero))
}

/// What a side may hold for a name its table does not list: nothing when the table lists
/// every name it ever saw; else up to what a name out of the table may hold, plus, when
/// the listed rows were cut short, what an unlisted held name may hold.
fn unlisted_range(t: &GroupTableJson) -> (Range, Range) {
    let cut_short = t.distinct_kept > t.rows.len();
    let (mut keys, mut memory) = (t.absent_max_keys, t.absent_max_memory_bytes);
    if cut_short {
        keys = keys.saturating_add(t.unlisted_keys.unwrap_or(u64::MAX));
        let last_memory = t.rows.last().map(|r| r.memory_bytes);
        let held = match (t.unlisted_memory_bytes, last_memory) {
            (Some(u), Some(l)) => u.min(l),
            (Some(u), None) => u,
            (None, Some(l)) => l,
            (None, None) => u64::MAX,
        };
        memory = memory.saturating_add(held);
    }
    (
        Range { min: 0, max: keys },
        Range {
            min: 0,
            max: memory,
        },
    )
}

fn row_ranges(g: &GroupJson) -> (Range, Range) {
    (
        Range {
            min: g.keys,
            max: g.keys.saturating_add(g.error_keys),
        },
        Range {
            min: g.memory_bytes,
            max: g.memory_bytes.saturating_add(g.error_bytes),
        },
    )
}

/// The changes of one table; with `alerts`, every prefix that grew past
/// `--fail-on-prefix-growth` is added to it.
fn group_changes(
    old: &GroupTableJson,
    new: &GroupTableJson,
    depth: Option<usize>,
    options: &DiffOptions,
    alerts: Option<&mut Vec<Alert>>,
) -> GroupTableChange {
    let (old_absent, new_absent) = (unlisted_range(old), unlisted_range(new));
    let mut out = GroupTableChange {
        depth,
        ..GroupTableChange::default()
    };
    let mut changes = Vec::new();
    for (_, o, n) in paired(&old.rows, &new.rows, |g| g.name.clone()) {
        let (old_keys, old_memory) = o.map_or(old_absent, row_ranges);
        let (new_keys, new_memory) = n.map_or(new_absent, row_ranges);
        let keys_change = Delta::between(old_keys, new_keys);
        let memory_change = Delta::between(old_memory, new_memory);
        if (
            memory_change.min,
            memory_change.max,
            keys_change.min,
            keys_change.max,
        ) == (0, 0, 0, 0)
            || memory_change.largest() < options.min_change
        {
            continue;
        }
        let status = if old_keys.max == 0 && new_keys.min > 0 {
            GroupStatus::Appeared
        } else if old_keys.min > 0 && new_keys.max == 0 {
            GroupStatus::Vanished
        } else if memory_change.min > 0 {
            GroupStatus::Grew
        } else if memory_change.max < 0 {
            GroupStatus::Shrank
        } else if memory_change.within_bounds {
            GroupStatus::WithinBounds
        } else if keys_change.min > 0 {
            // Same memory, more keys.
            GroupStatus::Grew
        } else if keys_change.max < 0 {
            GroupStatus::Shrank
        } else {
            GroupStatus::WithinBounds
        };
        let memory_change_percent = match status {
            GroupStatus::Appeared => None,
            _ if memory_change.min > 0 => Some(pct(memory_change.min, old_memory.max)),
            _ if memory_change.max < 0 => Some(pct(memory_change.max, old_memory.min)),
            _ if memory_change.exact() => Some(0.0),
            _ => None,
        };
        let g = n.or(o).expect("a paired row has a side");
        changes.push(GroupChange {
            name: g.name.clone(),
            name_base64: g.name_base64.clone(),
            status,
            old_keys,
            new_keys,
            keys_change,
            old_memory_bytes: old_memory,
            new_memory_bytes: new_memory,
            memory_change,
            memory_change_percent,
        });
    }
    if let (Some(alerts), Some(limit)) = (alerts, options.fail_on_prefix_growth) {
        for c in changes.iter().filter(|c| c.memory_change.min > 0) {
            let p = c.memory_change_percent.unwrap_or(f64::INFINITY);
            if p > limit {
                alerts.push(Alert {
                    flag: "--fail-on-prefix-growth",
                    subject: c.name.clone(),
                    growth_percent: p.is_finite().then_some(p),
                    limit_percent: limit,
                });
            }
        }
    }
    for c in &changes {
        match c.status {
            GroupStatus::Appeared => out.appeared += 1,
            GroupStatus::Vanished => out.vanished += 1,
            GroupStatus::Grew => out.grew += 1,
            GroupStatus::Shrank => out.shrank += 1,
            GroupStatus::WithinBounds => out.within_bounds += 1,
        }
    }
    // Appeared and vanished names have their own lists.
    let certain = |c: &&GroupChange| matches!(c.status, GroupStatus::Grew | GroupStatus::Shrank);
    let pick = |keep: &dyn Fn(&GroupChange) -> bool, rank: &dyn Fn(&GroupChange) -> i64| {
        let mut v: Vec<GroupChange> = changes
            .iter()
            .filter(certain)
            .filter(|c| keep(c))
            .cloned()
            .collect();
        v.sort_by(|a, b| rank(b).cmp(&rank(a)).then_with(|| a.name.cmp(&b.name)));
        v.truncate(options.rows);
        v
    };
    out.growers_by_memory = pick(&|c| c.memory_change.min > 0, &|c| c.memory_change.min);
    out.shrinkers_by_memory = pick(&|c| c.memory_change.max < 0, &|c| -c.memory_change.max);
    out.growers_by_keys = pick(&|c| c.keys_change.min > 0, &|c| c.keys_change.min);
    out.shrinkers_by_keys = pick(&|c| c.keys_change.max < 0, &|c| -c.keys_change.max);
    let listed = |status: GroupStatus, rank: &dyn Fn(&GroupChange) -> u64| {
        let mut v: Vec<GroupChange> = changes
            .iter()
            .filter(|c| c.status == status)
            .cloned()
            .collect();
        v.sort_by(|a, b| rank(b).cmp(&rank(a)).then_with(|| a.name.cmp(&b.name)));
        v.truncate(options.rows);
        v
    };
    out.appeared_names = listed(GroupStatus::Appeared, &|c| c.new_memory_bytes.min);
    out.vanished_names = listed(GroupStatus::Vanished, &|c| c.old_memory_bytes.min);
    out
}

fn pct(change: i64, of: u64) -> f64 {
    percent_of(change as f64, of).unwrap_or(f64::INFINITY)
}

type KeyId = (u64, String);

fn key_id(k: &TopKeyJson) -> KeyId {
    (k.db, k.key.clone())
}

fn key_change(status: KeyStatus, old: Option<&TopKeyJson>, new: Option<&TopKeyJson>) -> KeyChange {
    let k = new.or(old).expect("a key change has a side");
    KeyChange {
        status,
        db: k.db,
        key: k.key.clone(),
        key_base64: k.key_base64.clone(),
        type_name: k.type_name.clone(),
        old_encoding: old.map(|o| o.encoding.to_string()),
        new_encoding: new.map(|n| n.encoding.to_string()),
        old_memory_bytes: old.map(|o| o.memory_bytes),
        new_memory_bytes: new.map(|n| n.memory_bytes),
        old_memory_at_most: None,
        new_memory_at_most: None,
        old_elements: old.and_then(|o| o.elements),
        new_elements: new.and_then(|n| n.elements),
    }
}

/// Grew, shrank, or `None` when nothing the lists show changed.
fn size_status(o: &TopKeyJson, n: &TopKeyJson) -> Option<KeyStatus> {
    match (
        n.memory_bytes.cmp(&o.memory_bytes),
        n.elements.cmp(&o.elements),
    ) {
        (std::cmp::Ordering::Greater, _) => Some(KeyStatus::Grew),
        (std::cmp::Ordering::Less, _) => Some(KeyStatus::Shrank),
        (_, std::cmp::Ordering::Greater) => Some(KeyStatus::Grew),
        (_, std::cmp::Ordering::Less) => Some(KeyStatus::Shrank),
        _ if n.encoding != o.encoding || n.type_name != o.type_name => Some(KeyStatus::Grew),
        _ => None,
    }
}

fn big_keys(
    old: &SummaryJson,
    new: &SummaryJson,
    exact: Option<&ExactKeys>,
    options: &DiffOptions,
) -> BigKeysChange {
    let mut keys = Vec::new();
    let mut seen: BTreeSet<KeyId> = BTreeSet::new();
    if let Some(exact) = exact {
        for (id, o, n) in paired(&exact.old, &exact.new, key_id) {
            let status = match (o, n) {
                (None, Some(_)) => Some(KeyStatus::New),
                (Some(_), None) => Some(KeyStatus::Vanished),
                (Some(o), Some(n)) => size_status(o, n),
                (None, None) => None,
            };
            if let Some(status) = status {
                keys.push(key_change(status, o, n));
            }
            seen.insert(id);
        }
    }
    let (ot, nt) = (&old.top_keys, &new.top_keys);
    // A list shorter than its n holds every key of its run.
    let floor = |t: &crate::report::run::summary::TopKeysJson| {
        (t.by_memory.len() >= t.n).then(|| t.by_memory.last().map_or(0, |k| k.memory_bytes))
    };
    let (old_floor, new_floor) = (floor(ot), floor(nt));
    for (id, o, n) in paired(&ot.by_memory, &nt.by_memory, key_id) {
        if seen.contains(&id) {
            continue;
        }
        let change = match (o, n) {
            (Some(o), Some(n)) => size_status(o, n).map(|s| key_change(s, Some(o), Some(n))),
            (None, Some(n)) => Some(match old_floor {
                None => key_change(KeyStatus::New, None, Some(n)),
                Some(at_most) => KeyChange {
                    old_memory_at_most: Some(at_most),
                    ..key_change(KeyStatus::EnteredTop, None, Some(n))
                },
            }),
            (Some(o), None) => Some(match new_floor {
                None => key_change(KeyStatus::Vanished, Some(o), None),
                Some(at_most) => KeyChange {
                    new_memory_at_most: Some(at_most),
                    ..key_change(KeyStatus::LeftTop, Some(o), None)
                },
            }),
            (None, None) => None,
        };
        keys.extend(change);
    }
    keys.retain(|k| k.memory_change().unsigned_abs() >= options.min_change);
    // Changes known beyond bounds first; a key that only entered or left a top N may not
    // have changed at all.
    let churn = |k: &KeyChange| matches!(k.status, KeyStatus::EnteredTop | KeyStatus::LeftTop);
    keys.sort_by(|a, b| {
        churn(a)
            .cmp(&churn(b))
            .then_with(|| {
                b.memory_change()
                    .unsigned_abs()
                    .cmp(&a.memory_change().unsigned_abs())
            })
            .then_with(|| (a.db, &a.key).cmp(&(b.db, &b.key)))
    });
    let omitted = keys.split_off(options.rows.min(keys.len()));
    BigKeysChange {
        n: ot.n.min(nt.n),
        exact_above_bytes: exact.map(|e| e.min_key_bytes),
        keys,
        omitted: omitted.len(),
        omitted_churn: omitted.iter().filter(|k| churn(k)).count(),
    }
}

fn ttl_change(
    old: &SummaryJson,
    new: &SummaryJson,
    lost_ttl_keys: Option<u64>,
    options: &DiffOptions,
) -> TtlChange {
    let classes = paired(&old.ttl.buckets, &new.ttl.buckets, |b| b.bucket.clone())
        .into_iter()
        .map(|(bucket, o, n)| TtlClassChange {
            keys: MetricChange::new(o.map_or(0, |b| b.keys), n.map_or(0, |b| b.keys)),
            memory_bytes: MetricChange::new(
                o.map_or(0, |b| b.memory_bytes),
                n.map_or(0, |b| b.memory_bytes),
            ),
            bucket,
        })
        .collect::<Vec<_>>();
    // Classes in the order summary.json lists them.
    let order: Vec<&str> = new
        .ttl
        .buckets
        .iter()
        .chain(&old.ttl.buckets)
        .map(|b| b.bucket.as_str())
        .collect();
    let mut classes = classes;
    classes.sort_by_key(|c| order.iter().position(|b| *b == c.bucket));
    let mut lost: Vec<TtlLossChange> =
        paired(&old.patterns.rows, &new.patterns.rows, |g| g.name.clone())
            .into_iter()
            .filter_map(|(pattern, o, n)| {
                let (o, n) = (o?, n?);
                let keys_change = signed(n.keys).saturating_sub(signed(o.keys));
                let no_ttl_change = signed(n.no_ttl_keys).saturating_sub(signed(o.no_ttl_keys));
                let lost = no_ttl_change.saturating_sub(keys_change.max(0));
                (lost > 0).then(|| TtlLossChange {
                    pattern,
                    keys_change,
                    no_ttl_keys_change: no_ttl_change,
                    lost_ttl_keys: lost.unsigned_abs(),
                    exact: o.error_keys == 0 && n.error_keys == 0,
                })
            })
            .collect();
    lost.sort_by(|a, b| {
        b.lost_ttl_keys
            .cmp(&a.lost_ttl_keys)
            .then_with(|| a.pattern.cmp(&b.pattern))
    });
    lost.truncate(options.rows);
    let old_minutes: BTreeSet<i64> = old
        .ttl
        .expiry_storms
        .iter()
        .map(|s| s.minute_start_ms)
        .collect();
    let new_storms = new
        .ttl
        .expiry_storms
        .iter()
        .filter(|s| !old_minutes.contains(&s.minute_start_ms))
        .map(|s| StormChange {
            minute_start_ms: s.minute_start_ms,
            keys: s.keys,
            memory_bytes: s.memory_bytes,
        })
        .collect();
    TtlChange {
        classes,
        keys_without_ttl: MetricChange::new(
            old.totals.keys.saturating_sub(old.totals.keys_with_ttl),
            new.totals.keys.saturating_sub(new.totals.keys_with_ttl),
        ),
        lost_ttl_keys,
        lost_ttl_by_pattern: lost,
        new_storms,
    }
}

type FindingId = (String, Option<u64>, &'static str, String);

/// A finding's identity across runs; a dump is named by its place on the command line
/// (`files`), since the two runs' dumps have different paths.
fn finding_id(f: &FindingJson, files: &[FileJson]) -> FindingId {
    let (kind, subject) = f.subject();
    let subject = match files.iter().position(|p| p.path == subject) {
        Some(i) if kind == "file" => format!("dump #{}", i + 1),
        _ => subject,
    };
    (f.rule.clone(), f.db, kind, subject)
}

fn lint_change(old: &SummaryJson, new: &SummaryJson) -> Option<LintChange> {
    let (old_files, new_files) = (&old.files, &new.files);
    let (old, new) = (old.lint.as_ref()?, new.lint.as_ref()?);
    let rules: Vec<RuleChange> = paired(&old.summary, &new.summary, |r| r.rule.clone())
        .into_iter()
        .map(|(rule, o, n)| RuleChange {
            severity: n.or(o).map_or(Severity::Info, |r| r.severity),
            findings: MetricChange::new(o.map_or(0, |r| r.findings), n.map_or(0, |r| r.findings)),
            keys: MetricChange::new(o.map_or(0, |r| r.keys), n.map_or(0, |r| r.keys)),
            memory_bytes: MetricChange::new(
                o.map_or(0, |r| r.memory_bytes),
                n.map_or(0, |r| r.memory_bytes),
            ),
            rule,
        })
        .filter(|r| r.findings.change != 0 || r.keys.change != 0 || r.memory_bytes.change != 0)
        .collect();
    // Whether a side lists every finding of a rule (`--max-findings` keeps the worst).
    let complete = |l: &LintJson, rule: &str| {
        let listed = l.findings.iter().filter(|f| f.rule == rule).count() as u64;
        l.summary
            .iter()
            .find(|r| r.rule == rule)
            .is_none_or(|r| r.findings <= listed)
    };
    let mut out = LintChange {
        rules,
        ..LintChange::default()
    };
    let mut by_id: BTreeMap<FindingId, (Option<&FindingJson>, Option<&FindingJson>)> =
        BTreeMap::new();
    for f in &old.findings {
        by_id.entry(finding_id(f, old_files)).or_default().0 = Some(f);
    }
    for f in &new.findings {
        by_id.entry(finding_id(f, new_files)).or_default().1 = Some(f);
    }
    for ((rule, db, kind, subject), (o, n)) in by_id {
        let (f, other, list) = match (o, n) {
            (None, Some(f)) => (f, old, &mut out.new),
            (Some(f), None) => (f, new, &mut out.resolved),
            _ => continue,
        };
        list.push(FindingChange {
            certain: complete(other, &rule),
            severity: f.severity,
            rule,
            db,
            subject_kind: kind,
            subject,
            keys: f.keys,
            memory_bytes: f.memory_bytes,
        });
    }
    Some(out)
}

/// Whether a summary's encoding name is one a server keeps small values in until a
/// threshold is crossed.
fn compact(encoding: &str) -> bool {
    Encoding::from_name(encoding).is_some_and(Encoding::is_compact)
}

fn crossings(
    old: &PatternEncodingsJson,
    new: &PatternEncodingsJson,
    options: &DiffOptions,
) -> Vec<Crossing> {
    type Cell = (i64, u64, u64, bool); // keys change, old memory, new memory, exact
                                       // (pattern, type) -> encoding -> cell
    let mut by: BTreeMap<(String, String), BTreeMap<String, Cell>> = BTreeMap::new();
    let rows = paired(&old.rows, &new.rows, |r| {
        (r.pattern.clone(), r.type_name.clone(), r.encoding.clone())
    });
    for ((pattern, type_name, encoding), o, n) in rows {
        let keys = |r: Option<&PatternEncodingJson>| r.map_or(0, |r| r.keys);
        let mem = |r: Option<&PatternEncodingJson>| r.map_or(0, |r| r.memory_bytes);
        let exact_row = |r: Option<&PatternEncodingJson>, t: &PatternEncodingsJson| match r {
            Some(r) => r.error_keys == 0,
            None => !t.capped && t.distinct_kept <= t.rows.len(),
        };
        by.entry((pattern, type_name)).or_default().insert(
            encoding,
            (
                signed(keys(n)).saturating_sub(signed(keys(o))),
                mem(o),
                mem(n),
                exact_row(o, old) && exact_row(n, new),
            ),
        );
    }
    let mut out = Vec::new();
    for ((pattern, type_name), cells) in by {
        let best = |want_compact: bool, gain: bool| {
            cells
                .iter()
                .filter(|(e, _)| compact(e) == want_compact)
                .map(|(e, c)| (e, c, if gain { c.0 } else { -c.0 }))
                .filter(|(_, _, v)| *v > 0)
                .max_by_key(|(_, _, v)| *v)
        };
        // Up: compact lost keys, the big encoding gained; down: the reverse.
        for up in [true, false] {
            let (Some(from), Some(to)) = (best(up, false), best(!up, true)) else {
                continue;
            };
            let keys = from.2.min(to.2).unsigned_abs();
            let old_memory = cells.values().fold(0u64, |m, c| m.saturating_add(c.1));
            let new_memory = cells.values().fold(0u64, |m, c| m.saturating_add(c.2));
            if new_memory.abs_diff(old_memory) < options.min_change {
                continue;
            }
            out.push(Crossing {
                pattern: pattern.clone(),
                type_name: type_name.clone(),
                from: from.0.clone(),
                to: to.0.clone(),
                keys,
                old_memory_bytes: old_memory,
                new_memory_bytes: new_memory,
                exact: cells.values().all(|c| c.3),
            });
        }
    }
    out.sort_by(|a, b| {
        b.new_memory_bytes
            .abs_diff(b.old_memory_bytes)
            .cmp(&a.new_memory_bytes.abs_diff(a.old_memory_bytes))
            .then_with(|| a.pattern.cmp(&b.pattern))
    });
    out.truncate(options.rows);
    out
}

fn notes(old: &SummaryJson, new: &SummaryJson) -> Vec<String> {
    let mut notes = Vec::new();
    let (o, n) = (&old.options, &new.options);
    if o.delimiter != n.delimiter || o.depth != n.depth {
        notes.push(format!(
            "the runs split prefixes differently (OLD delimiter {:?} depth {}, NEW {:?} depth {}): prefix and pattern changes compare different groupings",
            o.delimiter, o.depth, n.delimiter, n.depth
        ));
    }
    if o.filtered || n.filtered {
        notes.push("a run was filtered (--db, --type, --match, …): the numbers cover its matching keys only".into());
    }
    for (what, side) in [("OLD", old), ("NEW", new)] {
        if side.partial {
            notes.push(format!(
                "PARTIAL: {what} covers only what could be read of its dumps"
            ));
        }
    }
    fn thresholds(s: &SummaryJson) -> Option<&Thresholds> {
        s.lint.as_ref()?.thresholds.as_ref()
    }
    if thresholds(old) != thresholds(new) {
        notes.push("the runs judged lint findings by different thresholds or rules".into());
    }
    if old.pattern_encodings.is_none() || new.pattern_encodings.is_none() {
        notes.push("a summary.json predates pattern × encoding tables: encoding crossings by pattern are not compared".into());
    }
    notes
}

fn depth_table<'a>(s: &'a SummaryJson, i: usize, empty: &'a GroupTableJson) -> &'a GroupTableJson {
    s.prefixes.depths.get(i).map_or(empty, |d| &d.table)
}

/// Compares OLD with NEW.
pub fn compare(
    (old_side, old): (Side, &SummaryJson),
    (new_side, new): (Side, &SummaryJson),
    exact_keys: Option<&ExactKeys>,
    lost_ttl_keys: Option<u64>,
    options: &DiffOptions,
) -> Diff {
    let totals = CountsChange::new(&old.totals, &new.totals);
    let by_db = paired(&old.by_db, &new.by_db, |d| d.db)
        .into_iter()
        .map(|(db, o, n)| DbChange {
            db,
            counts: counts_change(o.map(|d| &d.counts), n.map(|d| &d.counts)),
        })
        .collect();
    let type_order = |s: &SummaryJson| -> Vec<String> {
        s.by_type.iter().map(|t| t.type_name.clone()).collect()
    };
    let mut by_type: Vec<TypeChange> = paired(&old.by_type, &new.by_type, |t| t.type_name.clone())
        .into_iter()
        .map(|(type_name, o, n)| TypeChange {
            type_name,
            counts: counts_change(o.map(|t| &t.counts), n.map(|t| &t.counts)),
        })
        .collect();
    let order: Vec<String> = type_order(old).into_iter().chain(type_order(new)).collect();
    by_type.sort_by_key(|t| order.iter().position(|o| *o == t.type_name));
    let mut by_encoding: Vec<EncodingChange> = paired(&old.by_encoding, &new.by_encoding, |e| {
        (e.type_name.clone(), e.encoding.to_string())
    })
    .into_iter()
    .map(|((type_name, encoding), o, n)| EncodingChange {
        type_name,
        encoding,
        counts: counts_change(o.map(|e| &e.counts), n.map(|e| &e.counts)),
    })
    .collect();
    by_encoding.sort_by_key(|e| order.iter().position(|o| *o == e.type_name));
    let empty = GroupTableJson {
        unlisted_keys: Some(0),
        unlisted_memory_bytes: Some(0),
        ..GroupTableJson::default()
    };
    let mut alerts = Vec::new();
    let depths = old.prefixes.depths.len().max(new.prefixes.depths.len());
    let prefixes: Vec<GroupTableChange> = (0..depths)
        .map(|i| {
            let table = |s| depth_table(s, i, &empty);
            group_changes(
                table(old),
                table(new),
                Some(i + 1),
                options,
                Some(&mut alerts),
            )
        })
        .collect();
    let patterns = group_changes(&old.patterns, &new.patterns, None, options, None);
    let big_keys = big_keys(old, new, exact_keys, options);
    let ttl = ttl_change(old, new, lost_ttl_keys, options);
    let lint = lint_change(old, new);
    let encoding_crossings = match (&old.pattern_encodings, &new.pattern_encodings) {
        (Some(o), Some(n)) => crossings(o, n, options),
        _ => Vec::new(),
    };
    if let Some(limit) = options.fail_on_growth {
        let growth = totals.memory_bytes.change_percent;
        let grew_past = match growth {
            Some(p) => p > limit,
            None => totals.memory_bytes.new > 0,
        };
        if grew_past {
            // Before the prefixes: the first alert is the headline.
            alerts.insert(
                0,
                Alert {
                    flag: "--fail-on-growth",
                    subject: "total memory".into(),
                    growth_percent: growth,
                    limit_percent: limit,
                },
            );
        }
    }
    let changed = totals.changed()
        || prefixes.iter().any(GroupTableChange::changed)
        || patterns.changed()
        || !big_keys.keys.is_empty()
        || ttl
            .classes
            .iter()
            .any(|c| c.keys.change != 0 || c.memory_bytes.change != 0)
        || lost_ttl_keys.is_some_and(|k| k > 0)
        || lint
            .as_ref()
            .is_some_and(|l| !l.rules.is_empty() || !l.new.is_empty() || !l.resolved.is_empty())
        || !encoding_crossings.is_empty();
    Diff {
        notes: notes(old, new),
        old: old_side,
        new: new_side,
        changed,
        totals,
        by_db,
        by_type,
        by_encoding,
        prefixes,
        patterns,
        big_keys,
        ttl,
        lint,
        encoding_crossings,
        alerts,
    }
}
