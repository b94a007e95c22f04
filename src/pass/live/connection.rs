//! One connection to a server: TCP (or TLS over it), commands written in RESP, replies
//! read back, every read bounded by the `--timeout`.
//!
//! Written by hand rather than with a Redis client crate: after `PSYNC` the connection
//! stops being request/reply and carries a raw byte payload framed two ways (`$<length>`,
//! or `$EOF:<mark>` … `<mark>`) after keep-alive newlines, which the client crates do not
//! expose; the few replies the handshake needs (status, error, bulk, array) are a
//! screenful to read.

use super::address::Address;
use super::tls::TlsStream;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// The longest reply line accepted (a status or an error), and the most an array or a
/// bulk reply may hold: the handshake's replies are small.
const MAX_LINE: usize = 64 * 1024;
const MAX_BULK: usize = 16 << 20;
const MAX_ARRAY: usize = 1 << 20;

/// A reply to a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Status(String),
    Error(String),
    Integer(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Reply>>),
}

impl Reply {
    /// A bulk or status reply as text.
    pub fn text(&self) -> Option<String> {
        match self {
            Reply::Status(s) => Some(s.clone()),
            Reply::Bulk(Some(b)) => Some(String::from_utf8_lossy(b).into_owned()),
            _ => None,
        }
    }
}

/// The byte stream under the connection.
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream>),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

pub struct Connection {
    reader: BufReader<Stream>,
    timeout: Duration,
}

/// A read that failed: the timeout named as such, anything else as it came.
pub fn read_error(e: io::Error, timeout: Duration) -> io::Error {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "the server sent nothing for {} s (--timeout)",
                timeout.as_secs_f64()
            ),
        ),
        io::ErrorKind::UnexpectedEof => io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the server closed the connection",
        ),
        _ => e,
    }
}

fn protocol(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

impl Connection {
    /// Connects to `address` (a TLS handshake too for `rediss://`), each step bounded by
    /// `timeout`.
    pub fn open(
        address: &Address,
        timeout: Duration,
        tls: Option<&super::tls::TlsSettings>,
    ) -> io::Result<Connection> {
        let target = address.host_port();
        let addrs: Vec<_> = (address.host.as_str(), address.port)
            .to_socket_addrs()
            .map_err(|e| io::Error::new(e.kind(), format!("cannot resolve {}: {e}", address.host)))?
            .collect();
        let mut last = None;
        let mut tcp = None;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, timeout) {
                Ok(s) => {
                    tcp = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let tcp = tcp.ok_or_else(|| {
            let e = last.unwrap_or_else(|| io::Error::other("no address"));
            let e = match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no answer within {} s (--timeout)", timeout.as_secs_f64()),
                ),
                _ => e,
            };
            io::Error::new(e.kind(), format!("cannot connect to {target}: {e}"))
        })?;
        tcp.set_read_timeout(Some(timeout))?;
        tcp.set_write_timeout(Some(timeout))?;
        let _ = tcp.set_nodelay(true);
        let stream = match tls {
            Some(settings) => Stream::Tls(Box::new(
                settings
                    .connect(&address.host, tcp)
                    .map_err(|e| read_error(e, timeout))?,
            )),
            None => Stream::Plain(tcp),
        };
        Ok(Connection {
            reader: BufReader::with_capacity(1 << 16, stream),
            timeout,
        })
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Sends one command.
    pub fn send(&mut self, args: &[&[u8]]) -> io::Result<()> {
        let mut buf = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            buf.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            buf.extend_from_slice(a);
            buf.extend_from_slice(b"\r\n");
        }
        let stream = self.reader.get_mut();
        stream
            .write_all(&buf)
            .and_then(|()| stream.flush())
            .map_err(|e| read_error(e, self.timeout))
    }

    /// Sends one command and reads its reply.
    pub fn call(&mut self, args: &[&[u8]]) -> io::Result<Reply> {
        self.send(args)?;
        self.reply()
    }

    /// One line, without its `\r\n` (or lone `\n`: the keep-alive newlines).
    pub fn line(&mut self) -> io::Result<Vec<u8>> {
        let mut line = Vec::new();
        let read = (&mut self.reader)
            .take(MAX_LINE as u64 + 2)
            .read_until(b'\n', &mut line)
            .map_err(|e| read_error(e, self.timeout))?;
        if read == 0 {
            return Err(read_error(
                io::ErrorKind::UnexpectedEof.into(),
                self.timeout,
            ));
        }
        if line.last() != Some(&b'\n') {
            return Err(protocol(format!(
                "a reply line longer than {MAX_LINE} bytes or cut short: {}",
                shown(&line)
            )));
        }
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Ok(line)
    }

    /// One reply. A first byte that starts no RESP reply means the port speaks another
    /// protocol; the error quotes what it said.
    pub fn reply(&mut self) -> io::Result<Reply> {
        let line = self.line()?;
        let Some((&kind, body)) = line.split_first() else {
            return Err(protocol("an empty reply line".into()));
        };
        let text = || String::from_utf8_lossy(body).into_owned();
        let number = || -> io::Result<i64> {
            std::str::from_utf8(body)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| protocol(format!("a bad length in {}", shown(&line))))
        };
        Ok(match kind {
            b'+' => Reply::Status(text()),
            b'-' => Reply::Error(text()),
            b':' => Reply::Integer(number()?),
            b'$' => match usize::try_from(number()?) {
                Err(_) => Reply::Bulk(None),
                Ok(n) if n > MAX_BULK => {
                    return Err(protocol(format!("a {n}-byte reply (at most {MAX_BULK})")))
                }
                Ok(n) => {
                    let mut data = vec![0; n + 2];
                    self.reader
                        .read_exact(&mut data)
                        .map_err(|e| read_error(e, self.timeout))?;
                    data.truncate(n);
                    Reply::Bulk(Some(data))
                }
            },
            b'*' => match usize::try_from(number()?) {
                Err(_) => Reply::Array(None),
                Ok(n) if n > MAX_ARRAY => {
                    return Err(protocol(format!(
                        "a {n}-element reply (at most {MAX_ARRAY})"
                    )))
                }
                Ok(n) => Reply::Array(Some(
                    (0..n).map(|_| self.reply()).collect::<io::Result<_>>()?,
                )),
            },
            // RESP3 maps come only after HELLO 3, never sent.
            _ => {
                return Err(protocol(format!(
                    "not a Redis or Valkey server: it answered {}",
                    shown(&line)
                )))
            }
        })
    }

    /// Reads the payload's bytes.
    pub fn reader(&mut self) -> &mut BufReader<Stream> {
        &mut self.reader
    }
}

/// At most 60 bytes of what a server said, escaped, for an error message.
pub fn shown(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(60)];
    let mut text = format!("\"{}\"", crate::text::escape::escape_key(cut));
    if cut.len() < bytes.len() {
        text.push('…');
    }
    text
}
