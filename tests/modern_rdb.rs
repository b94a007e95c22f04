//! RDB 14 and 15 (Redis 8.8, 8.10 and the 8.9 pre-releases): the real dump Redis 8.9.241
//! wrote, the files crafted from docs/rdb-v13-v15.md, and crafted damage to each new
//! structure, which must end in an error naming its offset, never a panic.

mod common;
mod craft;

use common::{read_rows, scan_dump, testdata};
use craft::{listpack, ArrayValue, Entry, Rdb};
use rdbscope::model::key_stats::KeyStats;
use rdbscope::pass::scan::ChecksumVerdict;
use rdbscope::rdb::{DecodeError, Scratch};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn modern(name: &str) -> PathBuf {
    testdata().join("modern").join(name)
}

fn rdbscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args(args)
        .output()
        .expect("rdbscope runs")
}

/// Every key of a dump through the full per-key analysis, with the first error.
fn stats(bytes: &[u8]) -> (Vec<KeyStats<'_>>, Option<DecodeError>) {
    let mut scratch = Scratch::default();
    let mut keys = Vec::new();
    let info = scan_dump(bytes, true, |profile, record| {
        keys.push(KeyStats::from_record(record, profile, &mut scratch)?);
        Ok(())
    });
    (keys, info.error)
}

/// The dump Redis 8.9.241 saved (`REDIS0015`): what the bytes hold, key by key, and the
/// key count its RESIZEDB record announces.
#[test]
fn the_real_redis_8_9_dump_reads_whole() {
    let bytes = std::fs::read(modern("redis-8.9.241-native-types.rdb")).unwrap();
    let (rows, info, stop) = read_rows(&bytes);
    assert!(stop.is_none(), "{:?}", info.error);
    assert_eq!(info.header.map(|h| h.version), Some(15));
    assert_eq!(info.aux_value("redis-ver").as_deref(), Some("8.9.241"));
    assert!(matches!(info.checksum, ChecksumVerdict::Valid(_)));
    assert_eq!(info.dbs[&0].resize_keys, Some(11));
    let got: Vec<(String, &str, &str, Option<u64>, u64)> = rows
        .iter()
        .map(|r| {
            (
                String::from_utf8(r.key.clone()).unwrap(),
                r.type_name.as_str(),
                r.encoding.as_str(),
                r.elements,
                r.serialized_bytes,
            )
        })
        .collect();
    let expected = [
        ("lab:set", "set", "listpack", 1, 28),
        ("lab:bitmap", "string", "embstr", 0, 14),
        ("lab:stream", "stream", "stream", 1, 107),
        ("lab:hash", "hash", "listpack", 1, 37),
        ("lab:string", "string", "embstr", 0, 22),
        ("lab:bitfield", "string", "embstr", 0, 16),
        ("lab:array", "array", "sliced-array", 1, 27),
        ("lab:geo", "zset", "listpack", 1, 38),
        ("lab:zset", "zset", "listpack", 1, 36),
        ("lab:list", "list", "listpack", 1, 32),
        ("lab:hll", "string", "embstr", 0, 31),
    ]
    .map(|(k, t, e, n, b)| (k.to_string(), t, e, Some(n), b));
    assert_eq!(got, expected);

    let (keys, error) = stats(&bytes);
    assert!(error.is_none());
    let stream = keys.iter().find(|k| *k.key == *b"lab:stream").unwrap();
    let st = stream.summary.stream.unwrap();
    assert_eq!((st.nodes, st.groups, st.pending), (1, 0, 0));
    let array = keys.iter().find(|k| *k.key == *b"lab:array").unwrap();
    assert_eq!(array.largest_element_bytes, "array-value".len() as u64);
}

/// `arr` holds one element of each tag: ARCOUNT 4, the longest text `hello world!`, and the
/// documented memory estimate (a sparse slice of capacity 4, one heap string).
#[test]
fn the_crafted_array_has_every_tag() {
    let bytes = std::fs::read(modern("crafted-array_v14.rdb")).unwrap();
    let (keys, error) = stats(&bytes);
    assert!(error.is_none(), "{error:?}");
    let [arr] = &keys[..] else {
        panic!("one key expected, got {}", keys.len())
    };
    assert_eq!(
        (arr.type_name().as_ref(), arr.encoding.name(), arr.elements),
        ("array", "sliced-array", Some(4))
    );
    assert_eq!(arr.largest_element_bytes, 12);
    // Key: sds of 3 bytes (8) and a dict entry (24). Value: robj 16, header 80,
    // directory 8, sparse slice 32 + 8 + 32 = 72 → 80, heap string 2 + 12 → 16.
    assert_eq!(arr.memory_bytes, 8 + 24 + 16 + 80 + 8 + 80 + 16);
}

/// The crafted type-27 stream: its NACK zone is read past, and the NACKed entry stays
/// counted in the group's PEL.
#[test]
fn the_crafted_stream_with_a_nack_zone() {
    let bytes = std::fs::read(modern("crafted-stream_v14.rdb")).unwrap();
    let (keys, error) = stats(&bytes);
    assert!(error.is_none(), "{error:?}");
    let [s] = &keys[..] else {
        panic!("one key expected")
    };
    assert_eq!((s.encoding.name(), s.elements), ("stream", Some(2)));
    let st = s.summary.stream.unwrap();
    assert_eq!(
        (st.nodes, st.groups, st.consumers, st.pending),
        (1, 1, 1, 2)
    );
    assert_eq!(st.last_id, (1_700_000_000_001, 0));
}

/// An RDB 14 dump of db 0 holding what `write` adds.
fn array_dump(write: impl FnOnce(&mut Rdb<&mut Vec<u8>>) -> std::io::Result<()>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rdb = Rdb::with_version(&mut out, 14).unwrap();
    rdb.select_db(0).unwrap();
    write(&mut rdb).unwrap();
    rdb.finish().unwrap();
    out
}

#[test]
fn arrays_are_listed_filtered_and_linted_as_their_own_type() {
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().join("arrays.rdb");
    let big: Vec<(u64, ArrayValue)> = (0..5001)
        .map(|i| (i * 3, ArrayValue::Int(i as i64)))
        .collect();
    let bytes = array_dump(|rdb| {
        rdb.set_array(b"big:array", &big, Some(15000))?;
        rdb.set_array(b"fine:array", &big[..5000], None)?;
        rdb.set_string(b"str", b"v", None)?;
        Ok(())
    });
    std::fs::write(&path, &bytes).unwrap();
    let p = path.to_str().unwrap();

    let out = rdbscope(&["keys", "--type", "array", p]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(
        rows[0].starts_with("0,big:array,array,sliced-array,5001,"),
        "{csv}"
    );
    assert!(
        rows[1].starts_with("0,fine:array,array,sliced-array,5000,"),
        "{csv}"
    );

    let out_dir = dir.path().join("report");
    let out = rdbscope(&[
        "report",
        "--quiet",
        "--out-dir",
        out_dir.to_str().unwrap(),
        p,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("summary.json")).unwrap()).unwrap();
    let by_type = summary["by_type"].as_array().unwrap();
    let array = by_type.iter().find(|t| t["type"] == "array").unwrap();
    assert_eq!(array["keys"], 2, "{array}");
    let string = by_type.iter().find(|t| t["type"] == "string").unwrap();
    assert_eq!(string["keys"], 1);

    let out = rdbscope(&["lint", "--quiet", "--format", "json", p]);
    let findings: Value = serde_json::from_slice(&out.stdout).unwrap();
    let big_keys: Vec<&Value> = findings["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "bigkey.elements")
        .collect();
    assert_eq!(big_keys.len(), 1, "{findings}");
    assert_eq!(big_keys[0]["key"], "big:array");
}

/// The offset and text of the error a damaged dump ends with.
fn error_of(bytes: &[u8]) -> DecodeError {
    let (_, info, _) = read_rows(bytes);
    info.error.expect("the damage is reported")
}

/// Offset of the first value byte of the only key `k` of a crafted RDB 14 dump.
const VALUE_AT: u64 = 9 + 2 + 1 + 2;

#[test]
fn damaged_arrays_name_the_offset() {
    let cases: [(&str, &[u8], u64, &str); 6] = [
        ("no elements", &[0, 0], VALUE_AT, "array without elements"),
        ("cursor flag 2", &[1, 2], VALUE_AT + 1, "2, expected 0 or 1"),
        (
            "unknown tag",
            &[1, 0, 5, 7, 0],
            VALUE_AT + 3,
            "unknown tag 7",
        ),
        (
            "reserved index",
            &[
                1, 0, 0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1,
            ],
            VALUE_AT + 2,
            "index 2^64-1 is reserved",
        ),
        (
            "index in string form",
            &[1, 0, 0xc0, 1, 1],
            VALUE_AT + 2,
            "invalid length encoding",
        ),
        (
            "count past the end",
            &[50, 0, 0, 3, 1, b'a'],
            VALUE_AT,
            "truncated",
        ),
    ];
    for (what, value, offset, phrase) in cases {
        let bytes = array_dump(|rdb| {
            rdb.raw(&[28, 1, b'k'])?;
            rdb.raw(value)?;
            Ok(())
        });
        let e = error_of(&bytes);
        assert_eq!(e.offset, offset, "{what}: {e}");
        assert!(e.to_string().contains(phrase), "{what}: {e}");
    }
}

#[test]
fn a_truncated_array_names_the_offset_at_every_cut() {
    let bytes = std::fs::read(modern("crafted-array_v14.rdb")).unwrap();
    // The record runs from offset 11 to the EOF opcode at 60.
    for cut in 12..60 {
        let e = error_of(&bytes[..cut]);
        assert!(e.offset <= cut as u64, "cut {cut}: {e}");
        assert!(e.to_string().contains("truncated"), "cut {cut}: {e}");
    }
}

#[test]
fn gcra_values_and_new_types_under_the_valkey_magic_are_refused_with_their_offset() {
    let mut gcra = Vec::new();
    let mut rdb = Rdb::with_version(&mut gcra, 15).unwrap();
    rdb.select_db(0).unwrap();
    rdb.set_string(b"a", b"1", None).unwrap();
    rdb.raw(&[33, 1, b'g', 5]).unwrap();
    rdb.finish().unwrap();
    let e = error_of(&gcra);
    assert_eq!(e.offset, 9 + 2 + 5);
    assert!(e.to_string().contains("unsupported type 33 (GCRA"), "{e}");

    let mut valkey = b"VALKEY080\xfe\x00".to_vec();
    valkey.extend([28, 1, b'k', 1, 0, 0, 3, 1, b'a', 0xff]);
    valkey.extend([0; 8]);
    let e = error_of(&valkey);
    assert_eq!(e.offset, 11);
    assert!(
        e.to_string().contains("unsupported type 28 (RDB v80)"),
        "{e}"
    );
}

#[test]
fn a_nack_zone_longer_than_the_dump_is_truncation() {
    let mut bytes = std::fs::read(modern("crafted-stream_v14.rdb")).unwrap();
    // The NACK count (1) sits before its 16-byte ID, the 7-byte IDMP trailer, EOF and CRC.
    let at = bytes.len() - 9 - 7 - 16 - 1;
    assert_eq!(bytes[at], 1);
    bytes[at] = 60;
    let e = error_of(&bytes);
    assert_eq!(e.offset, at as u64);
    assert!(e.to_string().contains("consumer group NACK count"), "{e}");
}

#[test]
fn a_nacked_entry_missing_from_the_pel_is_damage() {
    let mut bytes = std::fs::read(modern("crafted-stream_v14.rdb")).unwrap();
    // The NACK zone's one ID (T+1-0) ends 7 + 9 bytes before the end; make it T+2-0.
    let id_at = bytes.len() - 9 - 7 - 16;
    assert_eq!(bytes[id_at + 7], 0x01);
    bytes[id_at + 7] = 0x02;
    let e = error_of(&bytes);
    assert_eq!(e.offset, id_at as u64);
    assert!(
        e.to_string()
            .contains("missing from its group's pending entries"),
        "{e}"
    );
}

/// An RDB 15 dump of db 0 holding what `write` adds.
fn v15_dump(write: impl FnOnce(&mut Rdb<&mut Vec<u8>>) -> std::io::Result<()>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rdb = Rdb::with_version(&mut out, 15).unwrap();
    write(&mut rdb).unwrap();
    rdb.finish().unwrap();
    out
}

/// The crafted RDB 15 file: template 0 (`age`, `name`) and one hash of each REF form.
#[test]
fn the_crafted_template_file() {
    let bytes = std::fs::read(modern("crafted-tmpl_v15.rdb")).unwrap();
    let (_, info, stop) = read_rows(&bytes);
    assert!(stop.is_none(), "{:?}", info.error);
    assert_eq!(info.hash_templates, 1);
    let (keys, _) = stats(&bytes);
    let got: Vec<_> = keys
        .iter()
        .map(|k| {
            (
                String::from_utf8(k.key.to_vec()).unwrap(),
                k.type_name().into_owned(),
                k.encoding.name(),
                k.elements,
                k.largest_element_bytes,
                k.memory_bytes,
            )
        })
        .collect();
    // u1: key sds 8 + dict entry 24; robj 16 and the 16-byte values listpack.
    // u2: the same key cost; robj 16, template pointer and two value pointers (24),
    // sds "41" (8) and "alice" (8).
    assert_eq!(
        got,
        [
            (
                "u1".into(),
                "hash".into(),
                "template-listpack",
                Some(2),
                4,
                32 + 16 + 16
            ),
            (
                "u2".into(),
                "hash".into(),
                "template-array",
                Some(2),
                5,
                32 + 16 + 24 + 16
            ),
        ]
    );
}

/// The self-contained forms DUMP writes (types 29 and 31), with either field format, and
/// templates past the listpack limits.
#[test]
fn self_contained_and_large_template_hashes() {
    let names = listpack(&[Entry::Str(b"field1"), Entry::Str(b"field2")]);
    let values = listpack(&[Entry::Int(0), Entry::Int(1), Entry::Int(2)]);
    let long = vec![b'v'; 65];
    let many: Vec<Vec<u8>> = (0..600).map(|i| format!("f{i:04}").into_bytes()).collect();
    let many: Vec<&[u8]> = many.iter().map(|n| n.as_slice()).collect();
    let bytes = v15_dump(|rdb| {
        rdb.hash_template(7, &many)?;
        rdb.hash_template(3, &[b"a", b"b"])?;
        rdb.select_db(0)?;
        // 29, field names as a listpack.
        rdb.raw(&[29, 2, b's', b'1', 0, names.len() as u8])?;
        rdb.raw(&names)?;
        rdb.raw(&[values.len() as u8])?;
        rdb.raw(&values)?;
        // 31, field names as strings; values int-encoded.
        rdb.raw(&[31, 2, b's', b'2', 1, 2, 6])?;
        rdb.raw(b"field1\x06field2\xc0\x01\xc0\x02")?;
        // 30 with a value over hash-max-listpack-value, 32 with 600 fields.
        rdb.set_template_listpack_hash(b"long", 3, &[b"x", &long[..60]])?;
        rdb.set_template_array_hash(b"wide", 7, &vec![&b"1"[..]; 600])?;
        rdb.set_template_array_hash(b"wide-long", 3, &[b"x", &long])?;
        Ok(())
    });
    let (keys, error) = stats(&bytes);
    assert!(error.is_none(), "{error:?}");
    let got: Vec<_> = keys
        .iter()
        .map(|k| (k.encoding.name(), k.elements, k.largest_element_bytes))
        .collect();
    assert_eq!(
        got,
        [
            ("template-listpack", Some(2), 6),
            ("template-array", Some(2), 6),
            ("template-listpack", Some(2), 60),
            ("template-array", Some(600), 5),
            ("template-array", Some(2), 65),
        ]
    );
}

#[test]
fn damaged_templates_name_the_offset() {
    // After "REDIS0015": the template record at 9.
    let template = |rdb: &mut Rdb<&mut Vec<u8>>| -> std::io::Result<()> {
        rdb.hash_template(0, &[b"age", b"name"])?;
        rdb.select_db(0)?;
        Ok(())
    };
    // Keys start after the template (12 bytes) and SELECTDB (2): at 23.
    let key_at = 9 + 12 + 2;
    type Write = Box<dyn Fn(&mut Rdb<&mut Vec<u8>>) -> std::io::Result<()>>;
    let cases: Vec<(&str, Write, u64, &str)> = vec![
        (
            "array ref to an unknown template",
            Box::new(move |rdb| {
                template(rdb)?;
                rdb.set_template_array_hash(b"k", 5, &[b"1", b"2"])?;
                Ok(())
            }),
            key_at + 3,
            "template 5 is not defined",
        ),
        (
            "listpack ref to an unknown template",
            Box::new(move |rdb| {
                template(rdb)?;
                rdb.set_template_listpack_hash(b"k", 9, &[b"1", b"2"])?;
                Ok(())
            }),
            // Type, key, the blob's length byte, the listpack header.
            key_at + 3 + 1 + 6,
            "template 9 is not defined",
        ),
        (
            "a reference before any template",
            Box::new(|rdb| {
                rdb.select_db(0)?;
                rdb.set_template_array_hash(b"k", 0, &[b"1"])?;
                Ok(())
            }),
            9 + 2 + 3,
            "template 0 is not defined",
        ),
        (
            "template without fields",
            Box::new(|rdb| {
                rdb.hash_template(0, &[])?;
                Ok(())
            }),
            11,
            "a template without fields",
        ),
        (
            "unsorted fields",
            Box::new(|rdb| {
                rdb.hash_template(0, &[b"name", b"age"])?;
                Ok(())
            }),
            9 + 3 + 5,
            "not strictly ascending",
        ),
        (
            "duplicate template id",
            Box::new(move |rdb| {
                rdb.hash_template(0, &[b"a"])?;
                rdb.hash_template(0, &[b"b"])?;
                Ok(())
            }),
            9 + 5,
            "template id 0 defined twice",
        ),
        (
            "one value short",
            Box::new(move |rdb| {
                template(rdb)?;
                rdb.set_template_listpack_hash(b"k", 0, &[b"1"])?;
                Ok(())
            }),
            // The values string (errors inside a listpack name the string holding it).
            key_at + 3,
            "2 entries for 2 fields",
        ),
        (
            "field format 2",
            Box::new(|rdb| {
                rdb.select_db(0)?;
                rdb.raw(&[31, 1, b'k', 2, 1, 1, b'a', 1, b'v'])?;
                Ok(())
            }),
            9 + 2 + 3,
            "2, expected 0 (a listpack) or 1 (strings)",
        ),
        (
            "self-contained without fields",
            Box::new(|rdb| {
                rdb.select_db(0)?;
                rdb.raw(&[31, 1, b'k', 1, 0])?;
                Ok(())
            }),
            9 + 2 + 3,
            "a template hash without fields",
        ),
    ];
    for (what, write, offset, phrase) in cases {
        let bytes = v15_dump(|rdb| write(rdb));
        let e = error_of(&bytes);
        assert_eq!(e.offset, offset, "{what}: {e}");
        assert!(e.to_string().contains(phrase), "{what}: {e}");
    }
}

#[test]
fn a_truncated_template_file_names_the_offset_at_every_cut() {
    let bytes = std::fs::read(modern("crafted-tmpl_v15.rdb")).unwrap();
    for cut in 9..bytes.len() - 9 {
        let e = error_of(&bytes[..cut]);
        assert!(e.offset <= cut as u64, "cut {cut}: {e}");
    }
}

/// Byte 243 is key metadata under `REDIS` magic and a slot import under `VALKEY080`;
/// byte 242 means nothing to Valkey.
#[test]
fn opcode_243_follows_the_magic() {
    let bytes = std::fs::read(modern("crafted-keymeta_v13.rdb")).unwrap();
    let (rows, info, stop) = read_rows(&bytes);
    assert!(stop.is_none(), "{:?}", info.error);
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].key.as_slice(), rows[0].serialized_bytes),
        (&b"k"[..], 5)
    );
    assert!(info.slot_imports.is_empty());

    // At most 7 metadata classes (the count byte follows the opcode at 11).
    let mut eight = bytes.clone();
    eight[12] = 8;
    eight.splice(13..13, [0u8; 7 * 5]);
    let e = error_of(&eight);
    assert_eq!(e.offset, 12);
    assert!(e.to_string().contains("8 classes, at most 7"), "{e}");

    let job = "0123456789abcdef0123456789abcdef01234567";
    let mut valkey = b"VALKEY080".to_vec();
    valkey.push(243);
    valkey.push(40);
    valkey.extend(job.as_bytes());
    valkey.extend([2, 0, 0x40, 100, 0x41, 0, 0x7f, 0xff]);
    valkey.extend([0xfe, 0, 0, 1, b'k', 1, b'v', 0xff]);
    valkey.extend([0; 8]);
    let (rows, info, stop) = read_rows(&valkey);
    assert!(stop.is_none(), "{:?}", info.error);
    assert_eq!(rows.len(), 1);
    assert_eq!(info.slot_imports, [(job.to_string(), 2)]);

    let mut valkey = b"VALKEY080\xf2\x00\x01\x01a\xff".to_vec();
    valkey.extend([0; 8]);
    let e = error_of(&valkey);
    assert_eq!(e.offset, 9);
    assert!(e.to_string().contains("unsupported type 242"), "{e}");
}

/// `report` on the real Redis 8.9.241 dump: every key, arrays and streams in their rows.
#[test]
fn report_on_the_real_redis_8_9_dump() {
    let dir = tempfile::TempDir::new().unwrap();
    let path = modern("redis-8.9.241-native-types.rdb");
    let out = rdbscope(&[
        "report",
        "--quiet",
        "--out-dir",
        dir.path().to_str().unwrap(),
        path.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    let by_type: Vec<(String, u64)> = summary["by_type"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["type"].as_str().unwrap().to_string(),
                t["keys"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("string", 4),
        ("list", 1),
        ("set", 1),
        ("zset", 2),
        ("hash", 1),
        ("stream", 1),
        ("array", 1),
    ]
    .map(|(t, n)| (t.to_string(), n));
    assert_eq!(by_type, expected);
}
