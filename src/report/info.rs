//! `rdbscope info` output: text for people, JSON for scripts.

use super::human::utc_seconds;
use super::text_table::{output_width, wrap_indented, Keep, TextTable};
use crate::model::memory::DumpMemory;
use crate::pass::allocator_detection::AllocatorChoice;
use crate::pass::scan::{ChecksumVerdict, DumpInfo};
use crate::text::escape::escape_key;
use crate::text::words::plural;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

fn checksum_text(v: &ChecksumVerdict) -> String {
    match v {
        ChecksumVerdict::Absent => "absent (RDB < 5)".into(),
        ChecksumVerdict::Disabled => "disabled (written as 0)".into(),
        ChecksumVerdict::Valid(c) => format!("valid ({c:016x})"),
        ChecksumVerdict::Mismatch { stored, computed } => {
            format!("MISMATCH (stored {stored:016x}, computed {computed:016x})")
        }
        ChecksumVerdict::NotChecked => "not checked".into(),
    }
}

/// Aux values are mostly text; show them escaped like keys.
fn aux_pairs(info: &DumpInfo) -> Vec<(String, String)> {
    info.aux
        .iter()
        .map(|(k, v)| (escape_key(k).into_owned(), escape_key(v).into_owned()))
        .collect()
}

/// The model against `used-mem`, for a dump read whole only.
fn difference_percent(info: &DumpInfo, memory: &DumpMemory) -> Option<f64> {
    memory.difference_percent().filter(|_| info.error.is_none())
}

pub fn text(
    name: &str,
    info: &DumpInfo,
    memory: &DumpMemory,
    allocator: &AllocatorChoice,
) -> String {
    let mut out = String::new();
    let mut line = |k: &str, v: String| {
        out.push_str(&wrap_indented(
            &format!("{k:<16} {v}"),
            "",
            &" ".repeat(17),
            output_width(),
        ))
    };
    line("file", escape_key(name.as_bytes()).into_owned());
    if let Some(h) = info.header {
        line(
            "magic",
            format!("{} (RDB version {})", h.magic(), h.version),
        );
    }
    if let Some(p) = info.profile() {
        line(
            "modelled server",
            format!("{:?} {}", p.family, p.version).to_lowercase(),
        );
    }
    if let Some(ctime) = info.ctime_s() {
        line("written (ctime)", utc_seconds(ctime.saturating_mul(1000)));
    }
    line("file bytes", info.file_bytes.to_string());
    line("keys", info.keys.to_string());
    line(
        "used_memory",
        format!(
            "{} modelled = keys {} + db overhead {}{}",
            memory.total(),
            memory.keys_bytes,
            memory.overhead_bytes,
            if info.error.is_some() {
                " (the keys read before the damage)"
            } else {
                ""
            }
        ),
    );
    match (memory.used_mem_aux, difference_percent(info, memory)) {
        (Some(used), Some(diff)) => line(
            "used-mem (aux)",
            format!(
                "{used} (the server's used_memory at save; model + server baseline {}: {diff:+.1}%)",
                memory.baseline_bytes
            ),
        ),
        (Some(used), None) => line(
            "used-mem (aux)",
            format!("{used} (the server's used_memory at save; not compared: the dump was not read whole)"),
        ),
        (None, _) => {}
    }
    line("allocator", allocator.describe());
    line("checksum", checksum_text(&info.checksum));
    if info.trailing_bytes > 0 {
        line(
            "trailing bytes",
            format!(
                "{} after the trailer (ignored, as Redis does)",
                info.trailing_bytes
            ),
        );
    }
    line(
        "functions",
        if info.functions.is_empty() {
            "0".into()
        } else {
            format!("{} ({})", info.functions.len(), info.functions.join(", "))
        },
    );
    if !info.module_aux.is_empty() {
        line("module aux", info.module_aux.join(", "));
    }
    if info.slot_infos > 0 {
        line("slot info", plural(info.slot_infos, "record"));
    }
    if info.hash_templates > 0 {
        line("hash templates", info.hash_templates.to_string());
    }
    for (job, ranges) in &info.slot_imports {
        line(
            "slot import",
            format!("job {} ({ranges} slot ranges)", escape_key(job.as_bytes())),
        );
    }
    if let Some(e) = &info.error {
        line("ERROR", e.to_string());
    }
    out.push_str("\naux fields\n");
    let mut aux = TextTable::new(&["field", "value"], 2);
    aux.names_in(1, Keep::Middle);
    for (k, v) in aux_pairs(info) {
        aux.add_row(vec![k, v]);
    }
    out.push_str(&format!("{aux}\n\ndatabases\n"));
    let mut dbs = TextTable::new(
        &["db", "keys", "expires", "resizedb keys", "resizedb expires"],
        1,
    );
    let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
    for (db, c) in &info.dbs {
        dbs.add_row(vec![
            db.to_string(),
            c.keys.to_string(),
            c.expires.to_string(),
            opt(c.resize_keys),
            opt(c.resize_expires),
        ]);
    }
    out.push_str(&format!("{dbs}\n"));
    out
}

/// The allocator a dump was modelled with, how it was chosen, and each candidate's
/// residual against `used-mem` (`info --format json` and `summary.json`).
/// The allocator the memory model used and how it was chosen: `info --format json`'s
/// `allocator` and summary.json's `files[].model.allocator`. Fields in alphabetical order,
/// as both have always written them.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AllocatorJson {
    pub candidates: Vec<CandidateJson>,
    pub chosen_by: String,
    pub first_guess: Option<FirstGuessJson>,
    pub list_compress_depth: Option<DepthChoiceJson>,
    pub margin_bytes: Option<u64>,
    pub name: String,
    pub note: Option<String>,
    pub sampled_keys: u64,
    pub uncertainty_bytes: Option<u64>,
    pub whole_dump_sampled: bool,
}

/// One allocator (at one `list-compress-depth`) the dump's `used-mem` was modelled with.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CandidateJson {
    pub allocator: String,
    pub list_compress_depth: Option<u64>,
    pub modelled_used_memory_bytes: u64,
    pub residual_percent: f64,
}

/// The guess from the first keys that the whole dump overturned.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FirstGuessJson {
    pub allocator: String,
    pub list_compress_depth: Option<u64>,
    pub reread: bool,
    pub sampled_keys: u64,
}

/// The `list-compress-depth` the dump's evidence chose.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DepthChoiceJson {
    pub chosen_by: String,
    pub depth: u64,
    pub margin_bytes: u64,
}

impl From<&AllocatorChoice> for AllocatorJson {
    fn from(a: &AllocatorChoice) -> Self {
        AllocatorJson {
            candidates: a
                .candidates
                .iter()
                .map(|c| CandidateJson {
                    allocator: c.allocator.name().to_string(),
                    list_compress_depth: c.list_compress_depth,
                    modelled_used_memory_bytes: c.modelled_bytes,
                    residual_percent: c.residual_percent,
                })
                .collect(),
            chosen_by: a.chosen_by.name().to_string(),
            first_guess: a.first_guess.as_ref().map(|f| FirstGuessJson {
                allocator: f.allocator.name().to_string(),
                list_compress_depth: f.list_compress_depth,
                reread: f.reread,
                sampled_keys: f.sampled_keys,
            }),
            list_compress_depth: a.list_compress_depth.map(|d| DepthChoiceJson {
                chosen_by: d.chosen_by.name().to_string(),
                depth: d.depth,
                margin_bytes: d.margin_bytes,
            }),
            margin_bytes: a.margin_bytes,
            name: a.allocator.name().to_string(),
            note: a.note.clone(),
            sampled_keys: a.sampled_keys,
            uncertainty_bytes: a.uncertainty_bytes,
            whole_dump_sampled: a.whole_dump,
        }
    }
}

pub fn json(
    name: &str,
    info: &DumpInfo,
    memory: &DumpMemory,
    allocator: &AllocatorChoice,
) -> Value {
    let checksum = match &info.checksum {
        ChecksumVerdict::Absent => json!({"status": "absent"}),
        ChecksumVerdict::Disabled => json!({"status": "disabled"}),
        ChecksumVerdict::Valid(c) => json!({"status": "valid", "stored": format!("{c:016x}")}),
        ChecksumVerdict::Mismatch { stored, computed } => json!({
            "status": "mismatch",
            "stored": format!("{stored:016x}"),
            "computed": format!("{computed:016x}"),
        }),
        ChecksumVerdict::NotChecked => json!({"status": "not_checked"}),
    };
    let profile = info.profile();
    json!({
        "file": name,
        "magic": info.header.map(|h| h.magic()),
        "rdb_version": info.header.map(|h| h.version),
        "server_family": profile.map(|p| format!("{:?}", p.family).to_lowercase()),
        "server_version": profile.map(|p| p.version.to_string()),
        "aux": aux_pairs(info).into_iter().map(|(k, v)| (k, Value::String(v))).collect::<serde_json::Map<_, _>>(),
        "databases": info.dbs.iter().map(|(db, c)| json!({
            "db": db, "keys": c.keys, "expires": c.expires,
            "resizedb_keys": c.resize_keys, "resizedb_expires": c.resize_expires,
        })).collect::<Vec<_>>(),
        "functions": info.functions,
        "module_aux": info.module_aux,
        "slot_info_records": info.slot_infos,
        "hash_templates": info.hash_templates,
        "slot_imports": info.slot_imports.iter().map(|(job, ranges)| json!({
            "job": job, "slot_ranges": ranges,
        })).collect::<Vec<_>>(),
        "keys": info.keys,
        "memory": {
            "keys_bytes": memory.keys_bytes,
            "overhead_bytes": memory.overhead_bytes,
            "total_bytes": memory.total(),
            "server_baseline_bytes": memory.baseline_bytes,
            "used_mem_aux": memory.used_mem_aux,
            "difference_percent": difference_percent(info, memory),
        },
        "allocator": AllocatorJson::from(allocator),
        "file_bytes": info.file_bytes,
        "trailing_bytes": info.trailing_bytes,
        "checksum": checksum,
        "error": info.error.as_ref().map(|e| json!({
            "message": e.to_string(), "offset": e.offset,
            "last_key": info.last_key.as_ref().map(|(db, k)| json!({"db": db, "key": escape_key(k)})),
        })),
    })
}
