//! The replication handshake that makes a server send its dataset as an RDB payload, and
//! the payload's two framings.
//!
//! The steps, and the error each fault gives:
//! 1. `AUTH [user] password` when a password was given (`WRONGPASS`: the user or the
//!    password is wrong).
//! 2. `INFO replication`: a master is refused unless `--allow-master` (a full sync forks
//!    a BGSAVE on it; the error names the replicas it lists), and so is a replica whose
//!    link to its master is not `up` (its data is stale or empty). A port that answers
//!    something else than RESP is not a Redis or Valkey server.
//! 3. `REPLCONF rdb-only 1` (Redis ≥ 7.0, Valkey: the server keeps no replication buffer
//!    for this reader and ends the connection after the payload; an error from an older
//!    server is ignored), then `REPLCONF capa eof capa psync2` (a diskless server may
//!    stream the payload without writing a file).
//! 4. `PSYNC ? -1` (a full sync), or `SYNC` from a server that does not know `PSYNC`.
//!    `+FULLRESYNC <replid> <offset>` comes back, then newlines (one a second, while the
//!    server forks and saves), then the payload: `$<length>\r\n` and that many bytes
//!    after a save to disk, or `$EOF:<40-byte mark>\r\n`, the bytes and the mark again
//!    when the server streams it (`repl-diskless-sync yes`).

use super::address::Address;
use super::connection::{read_error, shown, Connection, Reply};
use std::io::{self, BufRead, Read};

/// Bytes of the mark around a diskless payload.
const MARK_LEN: usize = 40;

fn refused(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, message)
}

fn protocol(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// Why a server answered a command with an error, made to say what to do.
fn command_error(command: &str, error: &str) -> io::Error {
    let upper = error.to_ascii_uppercase();
    if upper.starts_with("NOAUTH") {
        refused(format!(
            "{command}: the server needs a password (in the address, \
             redis://[user:]password@host:port, or in REDISCLI_AUTH)"
        ))
    } else if upper.starts_with("WRONGPASS") || upper.contains("INVALID PASSWORD") {
        refused(format!("AUTH: wrong user or password ({error})"))
    } else if upper.starts_with("NOPERM") {
        refused(format!(
            "{command}: the user may not run it ({error}); a live read needs \
             +info +replconf +psync +sync (see the README's live-read section)"
        ))
    } else {
        protocol(format!("{command}: the server answered {error:?}"))
    }
}

/// Sends a command that must succeed, naming it in the error.
fn expect_ok(conn: &mut Connection, name: &str, args: &[&[u8]]) -> io::Result<Reply> {
    match conn.call(args)? {
        Reply::Error(e) => Err(command_error(name, &e)),
        reply => Ok(reply),
    }
}

/// What `INFO replication` says.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Replication {
    /// `master`, `slave` (or `replica`).
    pub role: String,
    /// A replica's link to its master: `up`, `down`, …
    pub link: Option<String>,
    pub master: Option<String>,
    /// The replicas a master lists, `host:port state`.
    pub replicas: Vec<String>,
}

impl Replication {
    pub fn parse(text: &str) -> Replication {
        let mut r = Replication::default();
        let (mut host, mut port) = (None, None);
        for line in text.lines() {
            let Some((name, value)) = line.trim_end().split_once(':') else {
                continue;
            };
            match name {
                "role" => r.role = value.to_owned(),
                "master_link_status" => r.link = Some(value.to_owned()),
                "master_host" => host = Some(value.to_owned()),
                "master_port" => port = Some(value.to_owned()),
                _ if (name.starts_with("slave") || name.starts_with("replica"))
                    && name[name
                        .find(|c: char| c.is_ascii_digit())
                        .unwrap_or(name.len())..]
                        .bytes()
                        .all(|b| b.is_ascii_digit())
                    && name.bytes().any(|b| b.is_ascii_digit()) =>
                {
                    let field = |f: &str| {
                        value.split(',').find_map(|kv| {
                            kv.split_once('=').filter(|(k, _)| *k == f).map(|(_, v)| v)
                        })
                    };
                    if let (Some(ip), Some(p)) = (field("ip"), field("port")) {
                        let state = field("state").unwrap_or("?");
                        r.replicas.push(format!("{ip}:{p} {state}"));
                    }
                }
                _ => {}
            }
        }
        if let (Some(h), Some(p)) = (host, port) {
            r.master = Some(format!("{h}:{p}"));
        }
        r
    }

    pub fn is_master(&self) -> bool {
        self.role == "master"
    }
}

/// Authenticates when a password is given, and asks `INFO replication`.
pub fn hello(
    conn: &mut Connection,
    address: &Address,
    password: Option<&str>,
) -> io::Result<Replication> {
    if let Some(password) = password {
        let mut args: Vec<&[u8]> = vec![b"AUTH"];
        if let Some(user) = &address.user {
            args.push(user.as_bytes());
        }
        args.push(password.as_bytes());
        expect_ok(conn, "AUTH", &args)?;
    }
    let info = expect_ok(conn, "INFO", &[b"INFO", b"replication"])?;
    let text = info
        .text()
        .ok_or_else(|| protocol(format!("INFO: not a text reply: {info:?}")))?;
    if !text.contains("role:") {
        return Err(protocol(format!(
            "INFO replication has no role: not a Redis or Valkey server? It answered {}",
            shown(text.as_bytes())
        )));
    }
    Ok(Replication::parse(&text))
}

/// Checks the server may be read: a replica whose link is up, or a master when allowed.
pub fn check_role(replication: &Replication, allow_master: bool) -> io::Result<()> {
    if replication.is_master() {
        if allow_master {
            return Ok(());
        }
        let replicas = if replication.replicas.is_empty() {
            "it lists no replica".to_owned()
        } else {
            format!("its replicas: {}", replication.replicas.join(", "))
        };
        return Err(refused(format!(
            "is a master: a full sync would fork a BGSAVE on it ({replicas}); \
             read a replica, or pass --allow-master"
        )));
    }
    match replication.link.as_deref() {
        Some("up") => Ok(()),
        link => Err(refused(format!(
            "is a replica whose link to its master{} is {}: its data is stale or empty; \
             read another replica, or the master with --allow-master",
            replication
                .master
                .as_ref()
                .map_or(String::new(), |m| format!(" {m}")),
            link.unwrap_or("unknown")
        ))),
    }
}

/// How the payload is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `$<length>`: that many bytes.
    Length(u64),
    /// `$EOF:<mark>`: bytes until the mark.
    Mark([u8; MARK_LEN]),
}

/// Asks for a full sync and reads up to the payload's first byte.
pub fn start_sync(conn: &mut Connection) -> io::Result<Framing> {
    // Only an error saying the server does not know rdb-only is ignored: one saying the
    // user may not run REPLCONF stops here.
    if let Reply::Error(e) = conn.call(&[b"REPLCONF", b"rdb-only", b"1"])? {
        if e.to_ascii_uppercase().starts_with("NOPERM") {
            return Err(command_error("REPLCONF", &e));
        }
    }
    expect_ok(
        conn,
        "REPLCONF",
        &[b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"],
    )?;
    conn.send(&[b"PSYNC", b"?", b"-1"])?;
    loop {
        let line = conn.line()?;
        match line.first() {
            None => continue,
            Some(b'+') if line.starts_with(b"+FULLRESYNC") => continue,
            Some(b'-') => {
                let error = String::from_utf8_lossy(&line[1..]).into_owned();
                let upper = error.to_ascii_uppercase();
                if upper.starts_with("ERR UNKNOWN COMMAND") || upper.starts_with("ERR UNKNOWN") {
                    conn.send(&[b"SYNC"])?;
                    continue;
                }
                if upper.starts_with("NOMASTERLINK") || upper.contains("MASTER") {
                    return Err(refused(format!(
                        "PSYNC: the server will not sync now ({error})"
                    )));
                }
                return Err(command_error("PSYNC", &error));
            }
            Some(b'$') => return framing(&line),
            _ => {
                return Err(protocol(format!(
                    "PSYNC: expected the payload, the server answered {}",
                    shown(&line)
                )))
            }
        }
    }
}

fn framing(line: &[u8]) -> io::Result<Framing> {
    if let Some(mark) = line.strip_prefix(b"$EOF:") {
        let mark: [u8; MARK_LEN] = mark.try_into().map_err(|_| {
            protocol(format!(
                "a diskless payload mark of {} bytes, not {MARK_LEN}",
                mark.len()
            ))
        })?;
        return Ok(Framing::Mark(mark));
    }
    std::str::from_utf8(&line[1..])
        .ok()
        .and_then(|n| n.parse().ok())
        .map(Framing::Length)
        .ok_or_else(|| protocol(format!("a bad payload length: {}", shown(line))))
}

/// The payload's bytes, as a reader: it ends where the framing says, and fails with what
/// broke when the connection ends or stalls before.
pub struct Payload<'c> {
    conn: &'c mut Connection,
    framing: Framing,
    /// Bytes handed out.
    read: u64,
    /// Diskless: bytes received but held back, as they may be the start of the mark.
    held: Vec<u8>,
    /// Diskless: once the mark is found, the held bytes before it.
    before_mark: Option<usize>,
    done: bool,
}

impl<'c> Payload<'c> {
    pub fn new(conn: &'c mut Connection, framing: Framing) -> Payload<'c> {
        Payload {
            conn,
            framing,
            read: 0,
            held: Vec::with_capacity(MARK_LEN * 2),
            before_mark: None,
            done: false,
        }
    }

    /// The payload's length when the server said it.
    pub fn total(&self) -> Option<u64> {
        match self.framing {
            Framing::Length(n) => Some(n),
            Framing::Mark(_) => None,
        }
    }

    fn broke(&self, e: io::Error) -> io::Error {
        let e = read_error(e, self.conn.timeout());
        let of = self.total().map_or(String::new(), |n| format!(" of {n}"));
        io::Error::new(
            e.kind(),
            format!(
                "the replication link broke after {}{of} payload bytes: {e}",
                self.read
            ),
        )
    }
}

impl Read for Payload<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.done || buf.is_empty() {
            return Ok(0);
        }
        match self.framing {
            Framing::Length(total) => {
                let left = total.saturating_sub(self.read);
                if left == 0 {
                    self.done = true;
                    return Ok(0);
                }
                let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                let n = match self.conn.reader().read(&mut buf[..want]) {
                    Ok(0) => return Err(self.broke(io::ErrorKind::UnexpectedEof.into())),
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => return Err(e),
                    Err(e) => return Err(self.broke(e)),
                };
                self.read += n as u64;
                Ok(n)
            }
            Framing::Mark(mark) => loop {
                if self.before_mark.is_none() {
                    // What arrived is appended to the bytes held back; everything but the
                    // last MARK_LEN bytes may be handed out, until the mark is there.
                    let reader = self.conn.reader();
                    let chunk = match reader.fill_buf() {
                        Ok([]) => return Err(self.broke(io::ErrorKind::UnexpectedEof.into())),
                        Ok(chunk) => chunk,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => return Err(e),
                        Err(e) => return Err(self.broke(e)),
                    };
                    let take = chunk.len();
                    self.held.extend_from_slice(chunk);
                    reader.consume(take);
                    self.before_mark = find(&self.held, &mark);
                }
                let ready = self
                    .before_mark
                    .unwrap_or_else(|| self.held.len().saturating_sub(MARK_LEN));
                let n = ready.min(buf.len());
                buf[..n].copy_from_slice(&self.held[..n]);
                self.held.drain(..n);
                self.read += n as u64;
                if let Some(before) = &mut self.before_mark {
                    *before -= n;
                    self.done = *before == 0;
                }
                // Nothing handed out yet is not the end: read on (fewer bytes than a
                // mark arrived).
                if n > 0 || self.done {
                    return Ok(n);
                }
            },
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_master_and_a_replica() {
        let master = Replication::parse(
            "# Replication\r\nrole:master\r\nconnected_slaves:2\r\n\
             slave0:ip=10.0.0.2,port=6380,state=online,offset=1,lag=0\r\n\
             slave1:ip=10.0.0.3,port=6381,state=wait_bgsave,offset=0,lag=0\r\n\
             master_replid:abc\r\n",
        );
        assert_eq!(
            master.replicas,
            ["10.0.0.2:6380 online", "10.0.0.3:6381 wait_bgsave"]
        );
        let e = check_role(&master, false).unwrap_err().to_string();
        assert!(
            e.contains("is a master") && e.contains("10.0.0.2:6380 online"),
            "{e}"
        );
        assert!(check_role(&master, true).is_ok());
        let replica = Replication::parse(
            "role:slave\r\nmaster_host:10.0.0.1\r\nmaster_port:6379\r\nmaster_link_status:down\r\n\
             slave_read_repl_offset:0\r\nslave_priority:100\r\n",
        );
        assert!(replica.replicas.is_empty());
        let e = check_role(&replica, false).unwrap_err().to_string();
        assert!(e.contains("10.0.0.1:6379 is down"), "{e}");
    }

    #[test]
    fn framings() {
        assert_eq!(framing(b"$1234").unwrap(), Framing::Length(1234));
        let mark = [b'a'; MARK_LEN];
        let mut line = b"$EOF:".to_vec();
        line.extend_from_slice(&mark);
        assert_eq!(framing(&line).unwrap(), Framing::Mark(mark));
        assert!(framing(b"$EOF:short").is_err());
        assert!(framing(b"$x").is_err());
    }
}
