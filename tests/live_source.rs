//! `redis://` and `rediss://` sources against real servers: a master loaded from a testdata
//! dump and a replica of it, read as a replica would; what rdbscope reads from the replica
//! must be what it reads from the dump file. Then authentication, TLS, a cluster, and the
//! faults a live read meets (wrong password, a port speaking HTTP, a server killed
//! mid-payload, a server that never answers).
//!
//! Needs Debian's `redis-server` (TLS built in), `redis-cli` and `openssl`, and the Valkey
//! servers scripts/test.sh installs (RDBSCOPE_VALKEY9_SERVER, RDBSCOPE_VALKEY8_SERVER).

#[macro_use]
mod common;

use common::redis::{redis_server_binary, valkey_server_binary, RedisServer};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn rdbscope(args: &[&str]) -> Output {
    rdbscope_env(args, &[])
}

fn rdbscope_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rdbscope"));
    c.args(args).env_remove("REDISCLI_AUTH");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run rdbscope")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// One key as compared: db, key, type, encoding, elements, expiry.
type KeyRow = (u64, String, String, String, Value, Value);

/// `keys --format jsonl` rows by (db, key), keys already expired left out (a server
/// loading a dump drops them).
fn key_rows(jsonl: &str) -> BTreeMap<(u64, String), KeyRow> {
    let now = now_ms();
    jsonl
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["expiry_ms"].as_i64().is_none_or(|e| e > now + 60_000))
        .map(|v| {
            let db = v["db"].as_u64().unwrap();
            let key = v["key"].as_str().unwrap().to_owned();
            let row = (
                db,
                key.clone(),
                v["type"].as_str().unwrap().to_owned(),
                v["encoding"].as_str().unwrap().to_owned(),
                v["elements"].clone(),
                v["expiry_ms"].clone(),
            );
            ((db, key), row)
        })
        .collect()
}

/// A master started on a copy of `dump`, and a replica of it in sync.
struct Pair {
    master: RedisServer,
    replica: RedisServer,
}

fn start_loaded(binary: &Path, dump: &Path) -> RedisServer {
    let server = RedisServer::start_binary(binary);
    let mut c = server.connect();
    // The dump goes where the server keeps its own, and DEBUG RELOAD NOSAVE loads it.
    std::fs::copy(dump, server.dump_path()).unwrap();
    c.ok(cmd!("DEBUG", "RELOAD", "NOSAVE"));
    server
}

/// Waits until `server`'s `INFO replication` holds `what`.
fn wait_replication(server: &RedisServer, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut c = server.connect();
    loop {
        let info = c.call(cmd!("INFO", "replication")).text();
        if info.contains(what) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "never {what}:\n{info}\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The replica's link is up, and its master lists it `online` (which it does once the
/// replica acknowledges the payload, a moment after the replica's side is up).
fn wait_link_up(master: &RedisServer, replica: &RedisServer) {
    wait_replication(replica, "master_link_status:up");
    wait_replication(master, "state=online");
}

impl Pair {
    fn start(binary: &Path, dump: &Path) -> Pair {
        let master = start_loaded(binary, dump);
        let mut m = master.connect();
        m.ok(cmd!("CONFIG", "SET", "repl-diskless-sync-delay", "0"));
        let replica = RedisServer::start_binary(binary);
        let mut r = replica.connect();
        r.ok(cmd!("CONFIG", "SET", "repl-diskless-sync-delay", "0"));
        r.ok(cmd!("REPLICAOF", "127.0.0.1", master.port.to_string()));
        wait_link_up(&master, &replica);
        Pair { master, replica }
    }
}

/// The replica read live equals the dump file, key by key and in report's totals, with
/// the replica streaming its payload (diskless, `$EOF:` framing) and saving it first
/// (`$<length>`); `--progress` shows the bytes received, of the total the server
/// announces in the second form. The master is refused; an ACL user with only the
/// permissions a live read needs reads the replica, its password in no output.
/// `disk_honoured`: whether the server saves to disk for this reader under
/// `repl-diskless-sync no` (Valkey 9.1 streams to an rdb-only reader either way).
fn replica_matches_dump(binary: &Path, dump: &Path, disk_honoured: bool) {
    let pair = Pair::start(binary, dump);
    let port = pair.replica.port;
    let uri = format!("redis://127.0.0.1:{port}");
    let file = rdbscope(&["keys", "--format", "jsonl", dump.to_str().unwrap()]);
    assert!(file.status.success(), "{}", stderr(&file));
    let expected = key_rows(&stdout(&file));
    assert!(expected.len() > 20, "{} keys", expected.len());
    let mut r = pair.replica.connect();
    let kept = tempfile::tempdir().unwrap();
    for (diskless, target) in [("yes", "replicas sockets"), ("no", "disk")] {
        r.ok(cmd!("CONFIG", "SET", "repl-diskless-sync", diskless));
        let payload = kept.path().join(format!("diskless-{diskless}.rdb"));
        let live = rdbscope(&[
            "keys",
            "--format",
            "jsonl",
            "--progress",
            "always",
            "--keep-dump",
            payload.to_str().unwrap(),
            &uri,
        ]);
        assert!(
            live.status.success(),
            "diskless {diskless}: {}",
            stderr(&live)
        );
        assert_eq!(key_rows(&stdout(&live)), expected, "diskless {diskless}");
        let log = pair.replica.log();
        let target = if disk_honoured {
            target
        } else {
            "replicas sockets"
        };
        assert!(
            log.contains(&format!("target: {target}")),
            "diskless {diskless}: the replica did not save to {target}:\n{log}"
        );
        // The progress line's last words: every byte kept, of the length the server
        // announced when it saved to disk first (the file it sent).
        let bytes = std::fs::metadata(&payload).unwrap().len();
        let shown = if target == "disk" {
            let announced = std::fs::metadata(pair.replica.dump_path()).unwrap().len();
            assert_eq!(announced, bytes);
            format!("received {bytes} of {announced} bytes from 127.0.0.1:{port}")
        } else {
            format!(
                "received {bytes} bytes from 127.0.0.1:{port} (streamed: the server announces no total)"
            )
        };
        assert!(
            stderr(&live).contains(&shown),
            "diskless {diskless}: no {shown:?} in {}",
            stderr(&live)
        );
        eprintln!("diskless {diskless}: {shown}");
    }
    let master = rdbscope(&["keys", &format!("redis://127.0.0.1:{}", pair.master.port)]);
    assert_eq!(master.status.code(), Some(2));
    assert!(
        stderr(&master).contains(&format!("is a master: a full sync would fork a BGSAVE on it (its replicas: 127.0.0.1:{port} online)")),
        "{}",
        stderr(&master)
    );
    r.ok(cmd!(
        "ACL",
        "SETUSER",
        "reader",
        "on",
        ">Reader-Pw-31",
        "-@all",
        "+info",
        "+replconf",
        "+psync"
    ));
    let acl = rdbscope(&[
        "keys",
        "--format",
        "jsonl",
        "--progress",
        "always",
        &format!("redis://reader:Reader-Pw-31@127.0.0.1:{port}"),
    ]);
    assert!(acl.status.success(), "{}", stderr(&acl));
    assert_eq!(key_rows(&stdout(&acl)), expected);
    assert!(stderr(&acl).contains(&format!("bytes from reader@127.0.0.1:{port}")));
    for text in [stdout(&acl), stderr(&acl)] {
        assert!(!text.contains("Reader-Pw-31"), "the password in {text}");
    }
    let totals = |src: &str| {
        let o = rdbscope(&[
            "report",
            "-q",
            "--format",
            "json",
            "--allocator",
            "libc",
            src,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let types: Vec<(String, u64, u64, u64)> = v["by_type"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let n = |f: &str| t[f].as_u64().unwrap();
                (
                    t["type"].as_str().unwrap().to_owned(),
                    n("keys"),
                    n("elements"),
                    n("memory_bytes"),
                )
            })
            .collect();
        (
            v["totals"]["keys"].as_u64().unwrap(),
            v["totals"]["elements"].as_u64().unwrap(),
            types,
            v["files"][0]["path"].clone(),
        )
    };
    let (live_keys, live_elements, live_types, name) = totals(&uri);
    let (file_keys, file_elements, file_types, _) = totals(dump.to_str().unwrap());
    assert_eq!((live_keys, live_elements), (file_keys, file_elements));
    assert_eq!(live_types, file_types);
    assert_eq!(name, format!("127.0.0.1:{}", pair.replica.port));
    eprintln!(
        "{}: {live_keys} keys, {live_elements} elements read live, both framings, as in the file",
        dump.file_name().unwrap().to_string_lossy()
    );
    drop(pair.master);
}

fn testdata(name: &str) -> PathBuf {
    common::testdata().join(name)
}

#[test]
fn redis_7_0_replica_matches_its_dump() {
    replica_matches_dump(
        &redis_server_binary(),
        &testdata("real/redis-7.0.15-alltypes.rdb"),
        true,
    );
}

#[test]
fn valkey_9_1_replica_matches_its_dump() {
    replica_matches_dump(
        &valkey_server_binary("RDBSCOPE_VALKEY9_SERVER"),
        &testdata("modern/valkey-9.1.2-alltypes.rdb"),
        false,
    );
}

#[test]
fn valkey_8_1_replica_matches_its_dump() {
    replica_matches_dump(
        &valkey_server_binary("RDBSCOPE_VALKEY8_SERVER"),
        &testdata("modern/valkey-8.1.8-alltypes.rdb"),
        true,
    );
}

/// A master is refused, naming its replica, unless --allow-master; a replica whose link is
/// down is refused.
#[test]
fn master_and_unlinked_replica_refused() {
    let pair = Pair::start(
        &redis_server_binary(),
        &testdata("real/redis-7.0.15-alltypes.rdb"),
    );
    let master = format!("redis://127.0.0.1:{}", pair.master.port);
    let o = rdbscope(&["keys", &master]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("is a master")
            && e.contains(&format!("127.0.0.1:{} online", pair.replica.port))
            && e.contains("--allow-master"),
        "{e}"
    );
    let kept = tempfile::tempdir().unwrap();
    let kept = kept.path().join("master.rdb");
    let o = rdbscope(&[
        "keys",
        "--allow-master",
        "--keep-dump",
        kept.to_str().unwrap(),
        &master,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 42, "a header and 41 keys");
    // The payload kept is a dump like any other: the same rows, named by its path.
    let from_file = rdbscope(&["keys", kept.to_str().unwrap()]);
    assert_eq!(stdout(&from_file), stdout(&o));
    let mut r = pair.replica.connect();
    r.ok(cmd!("REPLICAOF", "127.0.0.1", "1"));
    let o = rdbscope(&["keys", &format!("redis://127.0.0.1:{}", pair.replica.port)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("link to its master 127.0.0.1:1 is"),
        "{}",
        stderr(&o)
    );
}

/// A password in the address, in REDISCLI_AUTH, an ACL user with only the permissions a
/// live read needs; a wrong password and a user without +psync refused. The password is
/// in no output.
#[test]
fn authentication_and_the_password_in_no_output() {
    let pair = Pair::start(
        &redis_server_binary(),
        &testdata("real/redis-7.0.15-alltypes.rdb"),
    );
    let port = pair.replica.port;
    let mut r = pair.replica.connect();
    r.ok(cmd!(
        "ACL",
        "SETUSER",
        "reader",
        "on",
        ">Reader-Pw-77",
        "-@all",
        "+info",
        "+replconf",
        "+psync"
    ));
    r.ok(cmd!(
        "ACL",
        "SETUSER",
        "nosync",
        "on",
        ">Nosync-Pw-55",
        "-@all",
        "+info",
        "+replconf"
    ));
    r.ok(cmd!("CONFIG", "SET", "requirepass", "Default-Pw-99"));
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    let html = out.path().join("page.html");
    let o = rdbscope(&[
        "report",
        "-q",
        "--out-dir",
        dir.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
        &format!("redis://:Default-Pw-99@127.0.0.1:{port}"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut outputs = vec![
        stdout(&o),
        stderr(&o),
        std::fs::read_to_string(&html).unwrap(),
    ];
    for f in std::fs::read_dir(&dir).unwrap() {
        outputs.push(std::fs::read_to_string(f.unwrap().path()).unwrap());
    }
    let summary = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    assert!(summary.contains(&format!("\"127.0.0.1:{port}\"")));
    let o = rdbscope_env(
        &["keys", &format!("redis://127.0.0.1:{port}")],
        &[("REDISCLI_AUTH", "Default-Pw-99")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 42);
    outputs.push(stderr(&o));
    let o = rdbscope(&[
        "keys",
        "--format",
        "jsonl",
        &format!("redis://reader:Reader-Pw-77@127.0.0.1:{port}"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 41);
    outputs.push(stderr(&o));
    let o = rdbscope(&[
        "keys",
        &format!("redis://reader:Wrong-Pw-11@127.0.0.1:{port}"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("wrong user or password"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains(&format!("reader@127.0.0.1:{port}")),
        "{}",
        stderr(&o)
    );
    outputs.push(stderr(&o));
    let o = rdbscope(&[
        "keys",
        &format!("redis://nosync:Nosync-Pw-55@127.0.0.1:{port}"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("PSYNC: the user may not run it"),
        "{}",
        stderr(&o)
    );
    outputs.push(stderr(&o));
    let o = rdbscope(&["keys", &format!("redis://127.0.0.1:{port}")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("needs a password"), "{}", stderr(&o));
    for text in &outputs {
        for pw in [
            "Default-Pw-99",
            "Reader-Pw-77",
            "Wrong-Pw-11",
            "Nosync-Pw-55",
        ] {
            assert!(
                !text.contains(pw),
                "the password {pw} is in an output:\n{text}"
            );
        }
    }
}

/// A port that speaks HTTP, and one that accepts and never answers (--timeout).
#[test]
fn not_a_server_and_a_silent_one() {
    let http = TcpListener::bind("127.0.0.1:0").unwrap();
    let http_port = http.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in http.incoming().flatten() {
            let mut buf = [0u8; 256];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let o = rdbscope(&["report", "-q", &format!("redis://127.0.0.1:{http_port}")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o)
            .contains("not a Redis or Valkey server: it answered \"HTTP/1.1 400 Bad Request\""),
        "{}",
        stderr(&o)
    );
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    let held: std::sync::Arc<std::sync::Mutex<Vec<TcpStream>>> = Default::default();
    let keep = std::sync::Arc::clone(&held);
    std::thread::spawn(move || {
        for s in silent.incoming().flatten() {
            keep.lock().unwrap().push(s);
        }
    });
    let started = Instant::now();
    let o = rdbscope(&[
        "keys",
        "--timeout",
        "1.5",
        &format!("redis://127.0.0.1:{silent_port}"),
    ]);
    let took = started.elapsed();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the server sent nothing for 1.5 s (--timeout)"),
        "{}",
        stderr(&o)
    );
    assert!(took < Duration::from_secs(10), "took {took:?}");
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);
    let o = rdbscope(&["keys", &format!("redis://127.0.0.1:{closed_port}")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(&format!("cannot connect to 127.0.0.1:{closed_port}")),
        "{}",
        stderr(&o)
    );
}

/// A server killed while it streams its payload: the keys that arrived are reported, the
/// run fails (exit 2) saying the link broke.
#[test]
fn server_killed_mid_payload_gives_a_partial_report() {
    let server = RedisServer::start();
    let mut c = server.connect();
    c.ok(cmd!("DEBUG", "POPULATE", "20000", "key", "100"));
    c.ok(cmd!("CONFIG", "SET", "repl-diskless-sync", "yes"));
    c.ok(cmd!("CONFIG", "SET", "repl-diskless-sync-delay", "0"));
    // 20,000 keys at 200 µs each: four seconds of streaming.
    c.ok(cmd!("CONFIG", "SET", "rdb-key-save-delay", "200"));
    let uri = format!("redis://127.0.0.1:{}", server.port);
    let child = Command::new(env!("CARGO_BIN_EXE_rdbscope"))
        .args([
            "keys",
            "--allow-master",
            "--format",
            "jsonl",
            "--progress",
            "always",
            &uri,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let info = c.call(cmd!("INFO", "replication")).text();
    assert!(
        info.contains("connected_slaves:1"),
        "the read had not started:\n{info}"
    );
    drop(server);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let rows = stdout(&o).lines().count();
    assert!(rows > 0 && rows < 20_000, "{rows} rows");
    let e = stderr(&o);
    assert!(
        e.contains("the replication link broke after") && e.contains("payload bytes"),
        "{e}"
    );
    // The progress line stops at the bytes that arrived.
    let received = format!("bytes from {}, then stopped", &uri["redis://".len()..]);
    assert!(e.contains(&received), "no {received:?} in {e}");
    let e = &e[e.find("rdbscope: ").unwrap_or(0)..];
    eprintln!("killed mid-payload: {rows} of 20000 keys reported; {e}");
}

/// `rediss://` with a CA the test makes, a server certificate for 127.0.0.1 and a client
/// certificate the server requires.
#[test]
fn tls_with_a_ca_and_a_client_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_owned();
    let openssl = |args: &[&str]| {
        let o = Command::new("openssl")
            .args(args)
            .output()
            .expect("openssl (apt-get install openssl)");
        assert!(o.status.success(), "openssl {args:?}: {}", stderr(&o));
    };
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=test CA",
        "-keyout",
        &d("ca.key"),
        "-out",
        &d("ca.crt"),
    ]);
    std::fs::write(d("ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    for name in ["server", "client"] {
        openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            &format!("/CN={name}"),
            "-keyout",
            &d(&format!("{name}.key")),
            "-out",
            &d(&format!("{name}.csr")),
        ]);
        openssl(&[
            "x509",
            "-req",
            "-in",
            &d(&format!("{name}.csr")),
            "-CA",
            &d("ca.crt"),
            "-CAkey",
            &d("ca.key"),
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            &d("ext"),
            "-out",
            &d(&format!("{name}.crt")),
        ]);
    }
    let server = RedisServer::start();
    let mut c = server.connect();
    let tls_port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    c.ok(cmd!(
        "CONFIG",
        "SET",
        "tls-cert-file",
        d("server.crt"),
        "tls-key-file",
        d("server.key"),
        "tls-ca-cert-file",
        d("ca.crt")
    ));
    c.ok(cmd!("CONFIG", "SET", "tls-auth-clients", "yes"));
    c.ok(cmd!("CONFIG", "SET", "tls-port", tls_port.to_string()));
    c.ok(cmd!("CONFIG", "SET", "repl-diskless-sync-delay", "0"));
    c.ok(cmd!("DEBUG", "POPULATE", "1000", "tls", "10"));
    let uri = format!("rediss://127.0.0.1:{tls_port}");
    let o = rdbscope(&[
        "keys",
        "--allow-master",
        "--tls-ca-cert",
        &d("ca.crt"),
        "--tls-cert",
        &d("client.crt"),
        "--tls-key",
        &d("client.key"),
        &uri,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 1001);
    // Without the client certificate the server ends the handshake; without the CA the
    // server's certificate is not trusted.
    let o = rdbscope(&[
        "keys",
        "--allow-master",
        "--tls-ca-cert",
        &d("ca.crt"),
        "--timeout",
        "5",
        &uri,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = rdbscope(&[
        "keys",
        "--allow-master",
        "--tls-ca-cert",
        &d("server.crt"),
        &uri,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("certificate"), "{}", stderr(&o));
}

/// A 3-master, 3-replica cluster: `--cluster` reads every shard from its replica, counts
/// each key once, with a progress line a shard; finds the same shards from `CLUSTER
/// NODES` for a user denied `CLUSTER SHARDS`; refuses a shard whose replica is down,
/// naming it, or leaves it out (`--allow-partial`) or reads its master (`--allow-master`).
#[test]
fn cluster_of_three_shards() {
    let nodes: Vec<RedisServer> = (0..6)
        .map(|_| {
            // A node also listens on port + 10000: pick ports whose bus port is free too.
            loop {
                if let Some(s) = RedisServer::start_cluster_node(&redis_server_binary()) {
                    break s;
                }
            }
        })
        .collect();
    let addresses: Vec<String> = nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    let o = Command::new("redis-cli")
        .arg("--cluster")
        .arg("create")
        .args(&addresses)
        .args(["--cluster-replicas", "1", "--cluster-yes"])
        .output()
        .expect("redis-cli");
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let mut c = nodes[0].connect();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !c
        .call(cmd!("CLUSTER", "INFO"))
        .text()
        .contains("cluster_state:ok")
    {
        assert!(Instant::now() < deadline, "the cluster never came up");
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut commands = String::new();
    for i in 0..600 {
        commands.push_str(&format!("SET user:{i} v{i}\n"));
    }
    // redis-cli -c follows the MOVED redirections; a node that does not know the new
    // cluster yet may refuse a write, so the (idempotent) feed runs again until every key
    // is somewhere.
    let keys_held = || -> i64 {
        nodes
            .iter()
            .map(|n| n.connect().call(cmd!("DBSIZE")).int())
            .sum()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while keys_held() < 1200 {
        assert!(
            Instant::now() < deadline,
            "the cluster holds {} keys",
            keys_held()
        );
        let mut feed = Command::new("redis-cli")
            .args(["-c", "-p", &nodes[0].port.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        feed.stdin
            .take()
            .unwrap()
            .write_all(commands.as_bytes())
            .unwrap();
        assert!(feed.wait().unwrap().success());
        std::thread::sleep(Duration::from_millis(300));
    }
    let replicas: Vec<&RedisServer> = nodes
        .iter()
        .filter(|n| {
            n.connect()
                .call(cmd!("INFO", "replication"))
                .text()
                .contains("role:slave")
        })
        .collect();
    assert_eq!(replicas.len(), 3);
    // Every replica caught up with its master's 200-odd keys.
    let deadline = Instant::now() + Duration::from_secs(30);
    let total = || -> i64 {
        replicas
            .iter()
            .map(|r| r.connect().call(cmd!("DBSIZE")).int())
            .sum()
    };
    while total() != 600 {
        assert!(Instant::now() < deadline, "replicas hold {} keys", total());
        std::thread::sleep(Duration::from_millis(100));
    }
    // No wait before a sync, on the masters too (read under --allow-master).
    for n in &nodes {
        n.connect()
            .ok(cmd!("CONFIG", "SET", "repl-diskless-sync-delay", "0"));
    }
    // A replica is `online` in CLUSTER SHARDS once the cluster has heard its replication
    // offset (`loading` before).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let o = Command::new("redis-cli")
            .args(["-p", &nodes[0].port.to_string(), "CLUSTER", "SHARDS"])
            .output()
            .unwrap();
        let shards = stdout(&o);
        if shards.lines().filter(|l| *l == "online").count() == 6 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the nodes never all online:\n{shards}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let seed = format!("redis://127.0.0.1:{}", nodes[0].port);
    let kept = tempfile::tempdir().unwrap();
    let kept_dir = kept.path().join("shards");
    let o = rdbscope(&[
        "report",
        "--progress",
        "always",
        "--format",
        "json",
        "--cluster",
        "--keep-dump",
        kept_dir.to_str().unwrap(),
        &seed,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["totals"]["keys"], 600);
    // A progress line a shard, ending with the bytes of the payload kept.
    for r in &replicas {
        let bytes = std::fs::metadata(kept_dir.join(format!("127.0.0.1_{}.rdb", r.port)))
            .unwrap()
            .len();
        let shown = format!("received {bytes} bytes from 127.0.0.1:{} (shard ", r.port);
        assert!(
            stderr(&o).contains(&shown),
            "no {shown:?} in {}",
            stderr(&o)
        );
        eprintln!("cluster progress: {shown}…");
    }
    // --keep-dump: one dump a shard, which read as files give the same count.
    let mut shard_files: Vec<String> = std::fs::read_dir(&kept_dir)
        .unwrap()
        .map(|e| e.unwrap().path().to_str().unwrap().to_owned())
        .collect();
    shard_files.sort();
    assert_eq!(shard_files.len(), 3, "{shard_files:?}");
    let mut args = vec!["report", "-q", "--format", "json"];
    args.extend(shard_files.iter().map(String::as_str));
    let from_files: Value = serde_json::from_slice(&rdbscope(&args).stdout).unwrap();
    assert_eq!(from_files["totals"], v["totals"]);
    let files: Vec<String> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(files.len(), 3, "{files:?}");
    for r in &replicas {
        let name = format!("127.0.0.1:{} (shard ", r.port);
        assert!(
            files.iter().any(|f| f.starts_with(&name)),
            "{name} not in {files:?}"
        );
    }
    eprintln!("cluster: 600 keys over {files:?}");
    // A user denied CLUSTER SHARDS: the shards are found from CLUSTER NODES, the same.
    for n in &nodes {
        n.connect().ok(cmd!(
            "ACL",
            "SETUSER",
            "nodesonly",
            "on",
            ">Nodes-Pw-42",
            "~*",
            "+@all",
            "-cluster|shards"
        ));
    }
    nodes[0].connect().ok(cmd!(
        "ACL",
        "SETUSER",
        "noshards",
        "on",
        ">Noshards-Pw-43",
        "~*",
        "+@all",
        "-cluster|shards",
        "-cluster|nodes"
    ));
    let o = rdbscope(&[
        "report",
        "-q",
        "--format",
        "json",
        "--cluster",
        &format!("redis://nodesonly:Nodes-Pw-42@127.0.0.1:{}", nodes[0].port),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let from_nodes: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(from_nodes["totals"], v["totals"]);
    // The same replicas (the shard named by its master's node id: CLUSTER NODES has no
    // shard id).
    let servers = |names: Vec<&str>| {
        let mut servers: Vec<String> = names
            .iter()
            .map(|n| n.split(" (shard ").next().unwrap().to_owned())
            .collect();
        servers.sort_unstable();
        servers
    };
    let names: Vec<&str> = from_nodes["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = files.iter().map(|f| format!("nodesonly@{f}")).collect();
    assert_eq!(
        servers(names.clone()),
        servers(expected.iter().map(String::as_str).collect())
    );
    let o = rdbscope(&[
        "report",
        "-q",
        "--cluster",
        &format!(
            "redis://noshards:Noshards-Pw-43@127.0.0.1:{}",
            nodes[0].port
        ),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the user may run neither")
            && stderr(&o).contains("--cluster needs +cluster|shards or +cluster|nodes"),
        "{}",
        stderr(&o)
    );
    eprintln!("CLUSTER NODES fallback: {names:?}");
    // One replica down: its shard is refused, named.
    let down = replicas[0].port;
    let its_master = common::redis::info_field(
        &replicas[0]
            .connect()
            .call(cmd!("INFO", "replication"))
            .text(),
        "master_port",
    );
    let victim = nodes.iter().position(|n| n.port == down).unwrap();
    let mut nodes = nodes;
    drop(nodes.remove(victim));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let view = nodes[0].connect().call(cmd!("CLUSTER", "NODES")).text();
        if view
            .lines()
            // `fail`, agreed by the masters; not `fail?`, one node's suspicion.
            .any(|l| {
                l.contains(&format!(":{down}@"))
                    && l.split_whitespace()
                        .nth(2)
                        .is_some_and(|f| f.split(',').any(|f| f == "fail"))
            })
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the cluster never saw {down} fail:\n{view}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let seed = format!("redis://127.0.0.1:{}", nodes[0].port);
    let o = rdbscope(&["report", "-q", "--cluster", &seed]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(&format!(
            ", master 127.0.0.1:{its_master}) has no in-sync replica (127.0.0.1:{down} not online)"
        )),
        "{e}"
    );
    let cluster_json = |allow: &str| -> Value {
        let o = rdbscope(&[
            "report",
            "-q",
            "--format",
            "json",
            "--cluster",
            allow,
            &seed,
        ]);
        assert!(o.status.success(), "{allow}: {}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let v = cluster_json("--allow-partial");
    assert_eq!(v["files"].as_array().unwrap().len(), 2);
    // --allow-master reads that shard from its master: every key again.
    let v = cluster_json("--allow-master");
    assert_eq!(v["totals"]["keys"], 600);
    let files: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files.len(), 3);
    let master = format!("127.0.0.1:{its_master} (shard ");
    assert!(
        files.iter().any(|f| f.starts_with(&master)),
        "{master} not in {files:?}"
    );
    eprintln!("replica {down} down, --allow-master: 600 keys over {files:?}");
}
