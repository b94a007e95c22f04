//! Every shipped dump from other projects and real servers parses whole, except the few
//! that are meant to be rejected, which fail with the documented reason and offset.

mod common;

use common::{dumps_in, read_rows, testdata};
use rdbscope::pass::scan::ChecksumVerdict;

/// Dumps a correct reader must reject, and a phrase its error must contain.
const REJECTED: &[(&str, &str)] = &[
    (
        "peers/redis-librdb/future_v19.rdb",
        "unsupported RDB version 99 at offset 5",
    ),
    (
        "peers/redis-librdb/redis_ent_opcode_ram_lru.rdb",
        "unsupported type 107 (RDB v12)",
    ),
    (
        "peers/redis-replicator/module.rdb",
        "pre-GA module value (type 6) cannot be skipped",
    ),
    (
        "peers/redis-tests-assets/corrupt_ziplist.rdb",
        "reading ziplist header",
    ),
];

#[test]
fn every_peer_and_real_dump_parses_or_is_rejected_with_a_reason() {
    let mut parsed = 0;
    let mut keys = 0;
    for dump in dumps_in("peers").into_iter().chain(dumps_in("real")) {
        let name = dump.strip_prefix(testdata()).unwrap().display().to_string();
        let bytes = std::fs::read(&dump).unwrap();
        let (rows, info, stop) = read_rows(&bytes);
        match REJECTED.iter().find(|(n, _)| *n == name) {
            Some((_, phrase)) => {
                let err = info
                    .error
                    .unwrap_or_else(|| panic!("{name} should be rejected"));
                assert!(err.to_string().contains(phrase), "{name}: {err}");
            }
            None => {
                assert!(stop.is_none(), "{name}: {:?}", info.error);
                assert_eq!(rows.len() as u64, info.keys);
                let ok = match name.as_str() {
                    "peers/redis-librdb/invalid_chksum_v8.rdb" => {
                        matches!(info.checksum, ChecksumVerdict::Mismatch { .. })
                    }
                    _ => matches!(
                        info.checksum,
                        ChecksumVerdict::Valid(_)
                            | ChecksumVerdict::Disabled
                            | ChecksumVerdict::Absent
                    ),
                };
                assert!(ok, "{name}: checksum {:?}", info.checksum);
                parsed += 1;
                keys += rows.len();
            }
        }
    }
    eprintln!("parsed {parsed} dumps, {keys} keys");
    assert!(parsed >= 95, "only {parsed} dumps parsed");
}

#[test]
fn checksum_verdicts() {
    let verdict = |p: &str| {
        read_rows(&std::fs::read(testdata().join(p)).unwrap())
            .1
            .checksum
    };
    assert!(matches!(
        verdict("real/redis-7.4.1-alltypes.rdb"),
        ChecksumVerdict::Valid(_)
    ));
    assert_eq!(
        verdict("real/redis-7.4.1-alltypes-nocompress-nochecksum.rdb"),
        ChecksumVerdict::Disabled
    );
    assert_eq!(
        verdict("peers/redis-rdb-tools/dictionary.rdb"),
        ChecksumVerdict::Absent
    );
    assert!(matches!(
        verdict("corrupt/wrong-checksum.rdb"),
        ChecksumVerdict::Mismatch { .. }
    ));
    // Redis stops reading after the trailer; so do we, and say how much was left.
    let (_, info, stop) =
        read_rows(&std::fs::read(testdata().join("corrupt/trailing-garbage.rdb")).unwrap());
    assert!(stop.is_none());
    assert_eq!(info.trailing_bytes, 9);
    assert!(matches!(info.checksum, ChecksumVerdict::Valid(_)));
}

#[test]
fn valkey_9_hash_with_field_ttls() {
    let bytes =
        std::fs::read(testdata().join("peers/hdt3213-rdb/valkey_hash2_with_hfe.rdb")).unwrap();
    let (rows, info, stop) = read_rows(&bytes);
    assert!(stop.is_none(), "{:?}", info.error);
    assert_eq!(info.header.unwrap().magic(), "VALKEY080");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].key, b"hash2-hfe");
    assert_eq!(
        (rows[0].type_name.as_str(), rows[0].elements),
        ("hash", Some(3))
    );
    assert_eq!(rows[0].encoding, "hashtable");
}

#[test]
fn module_values_report_the_module_type_name() {
    let bytes = std::fs::read(testdata().join("peers/redis-rdb-cli/all.rdb")).unwrap();
    let (rows, _, stop) = read_rows(&bytes);
    assert!(stop.is_none());
    let modules: Vec<_> = rows.iter().filter(|r| r.elements.is_none()).collect();
    assert!(!modules.is_empty());
    assert!(
        modules.iter().all(|r| r.type_name == "hellotype"),
        "{modules:?}"
    );
}
