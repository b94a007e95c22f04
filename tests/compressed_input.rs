//! Dumps arriving compressed (LZ4 frame, gzip, zstd, xz, bzip2) or on standard input give
//! the same rows as the plain file; a damaged stream gives the rows before the damage; a
//! stream that is not a dump, or does not fit, is refused before it fills the disk.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn keys(args: &[&str], stdin: Option<&[u8]>) -> (i32, Vec<u8>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .arg("keys")
        .args(args)
        .stderr(Stdio::null())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(bytes) = stdin {
        input.write_all(bytes).unwrap();
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    (out.status.code().unwrap(), out.stdout)
}

#[test]
fn compressed_and_piped_dumps_read_like_the_plain_file() {
    let plain =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/real/redis-7.4.1-alltypes.rdb");
    let bytes = std::fs::read(&plain).unwrap();
    let (code, expected) = keys(&[plain.to_str().unwrap()], None);
    assert_eq!(code, 0);
    assert_eq!(expected.iter().filter(|&&b| b == b'\n').count(), 45);

    let dir = tempfile::tempdir().unwrap();
    let mut lz4 = lz4_flex::frame::FrameEncoder::new(Vec::new());
    lz4.write_all(&bytes).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&bytes).unwrap();
    let zst =
        ruzstd::encoding::compress_to_vec(&bytes[..], ruzstd::encoding::CompressionLevel::Fastest);
    for (name, data) in [
        ("dump.rdb.lz4", lz4.finish().unwrap()),
        ("dump.rdb.gz", gz.finish().unwrap()),
        ("dump.rdb.xz", xz(&bytes)),
        ("dump.rdb.bz2", bz2(&bytes)),
        // Named without an extension: the format is recognised by its magic bytes.
        ("dump-zstd", zst),
    ] {
        assert_ne!(&data[..5], b"REDIS");
        let path = dir.path().join(name);
        std::fs::write(&path, &data).unwrap();
        let (code, rows) = keys(&[path.to_str().unwrap()], None);
        assert_eq!(code, 0, "{name}");
        assert_eq!(rows, expected, "{name}");
        let (code, rows) = keys(&["-"], Some(&data));
        assert_eq!((code, &rows), (0, &expected), "{name} on stdin");
    }
    let (code, rows) = keys(&["-"], Some(&bytes));
    assert_eq!((code, rows), (0, expected), "plain dump on stdin");
}

fn alltypes() -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/real/redis-7.4.1-alltypes.rdb"),
    )
    .unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

fn xz(bytes: &[u8]) -> Vec<u8> {
    let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 6);
    xz.write_all(bytes).unwrap();
    xz.finish().unwrap()
}

fn bz2(bytes: &[u8]) -> Vec<u8> {
    let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    bz.write_all(bytes).unwrap();
    bz.finish().unwrap()
}

/// `rdbscope ARGS` with the file size limited to 64 MiB (`ulimit -f`), as on a machine
/// whose disk is nearly full.
fn limited(args: &[&str]) -> Output {
    let command = format!(
        "ulimit -f 65536 && exec \"$0\" {}",
        args.iter()
            .map(|a| format!("'{a}'"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    // bash counts `ulimit -f` in KiB (POSIX sh in 512-byte blocks).
    Command::new("bash")
        .args(["-c", &command, env!("CARGO_BIN_EXE_rdbscope")])
        .output()
        .unwrap()
}

#[test]
fn a_truncated_gzip_dump_gives_the_rows_before_the_damage_and_its_offset() {
    let bytes = alltypes();
    let gz = gzip(&bytes);
    let cut = &gz[..gz.len() / 2];
    // What a decompressor makes of the cut stream: the offset the error must name.
    let mut decompressed = Vec::new();
    let e = flate2::read::GzDecoder::new(cut)
        .read_to_end(&mut decompressed)
        .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
    assert!(decompressed.len() > 100 && decompressed.len() < bytes.len());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.rdb.gz");
    std::fs::write(&path, cut).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args(["keys", "-q", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let rows = String::from_utf8(out.stdout).unwrap();
    let (_, full) = keys(
        &[Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/real/redis-7.4.1-alltypes.rdb")
            .to_str()
            .unwrap()],
        None,
    );
    let full = String::from_utf8(full).unwrap();
    // A prefix of the full listing: the header and every key read whole before the cut.
    let n = rows.lines().count();
    assert!(n > 1 && n < full.lines().count(), "{n} lines");
    assert!(full.starts_with(&rows));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let damage = format!(
        "the gzip stream is damaged at offset {} of its decompressed data",
        decompressed.len()
    );
    assert!(stderr.contains(&damage), "{stderr}");
    assert!(stderr.contains("last good key"), "{stderr}");
}

#[test]
fn a_decompression_bomb_is_refused_before_it_fills_the_disk() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().to_str().unwrap();
    // 256 MiB of zeros, then a dump header followed by 256 MiB of zeros: a few hundred KB
    // of gzip each.
    let zeros = vec![0u8; 1 << 20];
    let mut bomb = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut header_bomb = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    header_bomb.write_all(b"REDIS0011").unwrap();
    for _ in 0..256 {
        bomb.write_all(&zeros).unwrap();
        header_bomb.write_all(&zeros).unwrap();
    }
    let bomb_path = dir.path().join("bomb.gz");
    let header_path = dir.path().join("header-bomb.gz");
    std::fs::write(&bomb_path, bomb.finish().unwrap()).unwrap();
    std::fs::write(&header_path, header_bomb.finish().unwrap()).unwrap();
    assert!(std::fs::metadata(&bomb_path).unwrap().len() < 1 << 20);

    // Not a dump: refused on its first decompressed bytes.
    let out = limited(&["info", "--tmpdir", tmp, bomb_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("decompressing gzip input: not an RDB file (no REDIS/VALKEY magic: starts with 00 00 00 00 00 00)"),
        "{stderr}"
    );

    // A dump header, then more than the file size limit: refused at the limit, not killed
    // by it (SIGXFSZ).
    let out = limited(&["keys", "--tmpdir", tmp, header_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("decompressing gzip input takes more than the file size limit of 67108864 bytes (ulimit -f)"),
        "{stderr}"
    );
    // And at --max-spool, in any unit, when it is lower.
    let out = limited(&[
        "keys",
        "--max-spool",
        "1.5MiB",
        "--tmpdir",
        tmp,
        header_path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("takes more than --max-spool 1572864 bytes"),
        "{stderr}"
    );
    // Nothing is left behind in the temporary directory.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}
