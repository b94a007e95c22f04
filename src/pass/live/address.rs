//! A live source as the command line names it: `redis://[user[:password]@]host[:port]`,
//! or `rediss://` for TLS. The password is taken out of the address as soon as it is read
//! ([`Address::parse`] hands it back apart), so nothing that prints an address can print it.

use std::fmt;
use std::io;

/// The port a URI without one means.
pub const DEFAULT_PORT: u16 = 6379;

/// A server to read a dump from, without its password.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Address {
    pub tls: bool,
    pub user: Option<String>,
    /// A host name or an IP address (an IPv6 one without its brackets).
    pub host: String,
    pub port: u16,
    /// The cluster shard this node was picked for, when `--cluster` found it.
    pub shard: Option<String>,
}

/// Whether `arg` names a live source rather than a file.
pub fn is_live(arg: &str) -> bool {
    arg.starts_with("redis://") || arg.starts_with("rediss://")
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// `%XX` sequences decoded (a password with `@` or `:` is written `%40`, `%3A`).
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

impl Address {
    /// The address in `uri` and the password it holds, if any. Errors never repeat the
    /// part before `@`, where the password is.
    pub fn parse(uri: &str) -> io::Result<(Address, Option<String>)> {
        let (tls, rest) = if let Some(rest) = uri.strip_prefix("rediss://") {
            (true, rest)
        } else if let Some(rest) = uri.strip_prefix("redis://") {
            (false, rest)
        } else {
            return Err(invalid("not a redis:// or rediss:// address".into()));
        };
        let (rest, shard) = match rest.split_once('#') {
            Some((rest, shard)) => (rest, Some(shard.to_owned())),
            None => (rest, None),
        };
        let (credentials, server) = match rest.rsplit_once('@') {
            Some((c, s)) => (Some(c), s),
            None => (None, rest),
        };
        // A database number (`/0`) is accepted and ignored: a dump holds every database.
        let server = server.split_once('/').map_or(server, |(s, _)| s);
        let scheme = if tls { "rediss" } else { "redis" };
        let (host, port) = if let Some(v6) = server.strip_prefix('[') {
            let (host, after) = v6.split_once(']').ok_or_else(|| {
                invalid(format!("{scheme}://{server}: no ] after the IPv6 address"))
            })?;
            (host, after.strip_prefix(':'))
        } else {
            match server.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (server, None),
            }
        };
        if host.is_empty() {
            return Err(invalid(format!("{scheme}://{server}: no host")));
        }
        let port = match port {
            None => DEFAULT_PORT,
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| invalid(format!("{scheme}://{server}: {p:?} is not a port")))?,
        };
        let undecodable = || {
            invalid(format!(
                "{scheme}://…@{server}: the user or password has a bad %-escape"
            ))
        };
        let (user, password) = match credentials {
            None => (None, None),
            Some(c) => {
                let (user, password) = match c.split_once(':') {
                    Some((u, p)) => (u, Some(p)),
                    None => (c, None),
                };
                let user = percent_decode(user).ok_or_else(undecodable)?;
                let password = password
                    .map(|p| percent_decode(p).ok_or_else(undecodable))
                    .transpose()?;
                (
                    (!user.is_empty()).then_some(user),
                    password.filter(|p| !p.is_empty()),
                )
            }
        };
        let address = Address {
            tls,
            user,
            host: host.to_owned(),
            port,
            shard,
        };
        Ok((address, password))
    }

    /// The address as a URI again, without password: what the command's source list holds.
    pub fn uri(&self) -> String {
        let mut uri = format!("{}://", if self.tls { "rediss" } else { "redis" });
        if let Some(user) = &self.user {
            uri.push_str(
                &user
                    .replace('%', "%25")
                    .replace('@', "%40")
                    .replace(':', "%3A"),
            );
            uri.push('@');
        }
        uri.push_str(&self.host_port());
        if let Some(shard) = &self.shard {
            uri.push('#');
            uri.push_str(shard);
        }
        uri
    }

    /// `host:port` (`[::1]:6379` for IPv6), what a connection is made to.
    pub fn host_port(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// How reports name the source: `host:port`, `user@host:port`, with `(shard id)` for a
/// cluster shard.
impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(user) = &self.user {
            write!(f, "{user}@")?;
        }
        f.write_str(&self.host_port())?;
        if let Some(shard) = &self.shard {
            write!(f, " (shard {shard})")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_part_and_keeps_the_password_apart() {
        let (a, p) = Address::parse("redis://app:s%40cret@10.0.0.5:6380/0").unwrap();
        assert_eq!(p.as_deref(), Some("s@cret"));
        assert_eq!(a.to_string(), "app@10.0.0.5:6380");
        assert_eq!(a.uri(), "redis://app@10.0.0.5:6380");
        let (a, p) = Address::parse("rediss://:pw@[::1]").unwrap();
        assert_eq!((a.tls, a.port, p.as_deref()), (true, 6379, Some("pw")));
        assert_eq!(a.to_string(), "[::1]:6379");
        let (a, _) = Address::parse("redis://h:7000#3f2a").unwrap();
        assert_eq!(a.to_string(), "h:7000 (shard 3f2a)");
        assert_eq!(Address::parse(&a.uri()).unwrap().0, a);
    }

    #[test]
    fn errors_do_not_repeat_the_password() {
        for bad in [
            "redis://u:topsecret@h:0",
            "redis://u:topsecret@h:x",
            "redis://u:top%zzsecret@h",
        ] {
            let e = Address::parse(bad).unwrap_err().to_string();
            assert!(!e.contains("topsecret") && !e.contains("secret"), "{e}");
        }
        assert!(Address::parse("redis://:6379").is_err());
    }
}
