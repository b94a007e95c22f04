//! `--cluster`: the shards of a cluster, from any one node, and the node each is read from.
//!
//! `CLUSTER SHARDS` (Redis ≥ 7.0, Valkey) says, for each shard, its slots and its nodes
//! with their role, health and replication offset; older servers answer `CLUSTER NODES`,
//! one line a node. A shard is a master owning slots; it is read from its online replica
//! with the highest replication offset (the one most in sync), from its master only under
//! `--allow-master`, and left out only under `--allow-partial`.

use super::address::Address;
use super::connection::{Connection, Reply};
use std::collections::BTreeMap;
use std::io;

/// One node as the cluster describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub id: String,
    pub host: String,
    pub port: u16,
    pub master: bool,
    /// Online and linked: `health online` (SHARDS), no `fail` flag and `connected` (NODES).
    pub healthy: bool,
    pub offset: u64,
}

/// One shard: its id, slots and nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shard {
    pub id: String,
    pub slots: Vec<(u16, u16)>,
    pub nodes: Vec<Node>,
}

impl Shard {
    /// How errors name the shard: its id, slots and master.
    pub fn describe(&self) -> String {
        let slots: Vec<String> = self
            .slots
            .iter()
            .map(|&(a, b)| {
                if a == b {
                    a.to_string()
                } else {
                    format!("{a}-{b}")
                }
            })
            .collect();
        let master = self
            .nodes
            .iter()
            .find(|n| n.master)
            .map_or(String::new(), |m| format!(", master {}:{}", m.host, m.port));
        format!(
            "shard {} (slots {}{master})",
            short_id(&self.id),
            slots.join(",")
        )
    }

    /// The replica to read: online, most in sync.
    pub fn replica(&self) -> Option<&Node> {
        self.nodes
            .iter()
            .filter(|n| !n.master && n.healthy)
            .max_by_key(|n| n.offset)
    }

    pub fn master(&self) -> Option<&Node> {
        self.nodes.iter().find(|n| n.master && n.healthy)
    }
}

/// The first 8 characters of a 40-character id, as reports show it.
pub fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

fn protocol(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// The shards the node on `conn` knows.
pub fn discover(conn: &mut Connection, tls: bool) -> io::Result<Vec<Shard>> {
    match conn.call(&[b"CLUSTER", b"SHARDS"])? {
        Reply::Array(Some(shards)) => shards_reply(&shards, tls),
        Reply::Error(e) if e.to_ascii_uppercase().starts_with("NOPERM") => Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("CLUSTER SHARDS: the user may not run it ({e}); --cluster needs +cluster|shards or +cluster|nodes"),
        )),
        Reply::Error(e) if e.contains("cluster support disabled") => Err(protocol(
            "--cluster: the server is not in cluster mode (cluster-enabled no); read it without --cluster".into(),
        )),
        Reply::Error(_) => match conn.call(&[b"CLUSTER", b"NODES"])? {
            Reply::Error(e) => Err(protocol(format!("CLUSTER NODES: the server answered {e:?}"))),
            reply => {
                let text = reply
                    .text()
                    .ok_or_else(|| protocol(format!("CLUSTER NODES: not a text reply: {reply:?}")))?;
                nodes_reply(&text)
            }
        },
        other => Err(protocol(format!("CLUSTER SHARDS: an unexpected reply {other:?}"))),
    }
}

/// A RESP2 map (an array of names and values) as name → value.
fn fields(reply: &Reply) -> BTreeMap<String, &Reply> {
    let mut map = BTreeMap::new();
    if let Reply::Array(Some(items)) = reply {
        for pair in items.chunks_exact(2) {
            if let Some(name) = pair[0].text() {
                map.insert(name, &pair[1]);
            }
        }
    }
    map
}

fn integer(reply: Option<&&Reply>) -> Option<i64> {
    match reply {
        Some(Reply::Integer(i)) => Some(*i),
        Some(r) => r.text()?.parse().ok(),
        None => None,
    }
}

fn shards_reply(shards: &[Reply], tls: bool) -> io::Result<Vec<Shard>> {
    let mut out = Vec::new();
    for shard in shards {
        let f = fields(shard);
        let slots: Vec<i64> = match f.get("slots") {
            Some(Reply::Array(Some(s))) => s.iter().filter_map(|r| integer(Some(&r))).collect(),
            _ => Vec::new(),
        };
        let slots: Vec<(u16, u16)> = slots
            .chunks_exact(2)
            .filter_map(|p| Some((u16::try_from(p[0]).ok()?, u16::try_from(p[1]).ok()?)))
            .collect();
        let mut nodes = Vec::new();
        if let Some(Reply::Array(Some(list))) = f.get("nodes") {
            for node in list {
                let n = fields(node);
                let text = |name: &str| n.get(name).and_then(|r| r.text()).unwrap_or_default();
                let endpoint = text("endpoint");
                let host = match endpoint.as_str() {
                    "" | "?" => text("ip"),
                    e => e.to_owned(),
                };
                let port = if tls {
                    n.get("tls-port").or(n.get("port"))
                } else {
                    n.get("port").or(n.get("tls-port"))
                };
                let port = integer(port)
                    .and_then(|p| u16::try_from(p).ok())
                    .unwrap_or(0);
                nodes.push(Node {
                    id: text("id"),
                    host,
                    port,
                    master: text("role") == "master",
                    healthy: text("health") == "online",
                    offset: integer(n.get("replication-offset"))
                        .and_then(|o| u64::try_from(o).ok())
                        .unwrap_or(0),
                });
            }
        }
        if slots.is_empty() {
            continue;
        }
        let id = f
            .get("shard-id")
            .and_then(|r| r.text())
            .or_else(|| nodes.iter().find(|n| n.master).map(|m| m.id.clone()))
            .unwrap_or_default();
        out.push(Shard { id, slots, nodes });
    }
    if out.is_empty() {
        return Err(protocol("CLUSTER SHARDS: no shard owns a slot".into()));
    }
    Ok(out)
}

/// `CLUSTER NODES`: `<id> <ip:port@cport[,hostname]> <flags> <master id|-> <ping> <pong>
/// <epoch> <link> <slot>…`, one line a node.
fn nodes_reply(text: &str) -> io::Result<Vec<Shard>> {
    let mut masters: Vec<(Shard, String)> = Vec::new();
    let mut replicas: Vec<(String, Node)> = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let [id, address, flags, master, _ping, _pong, _epoch, link, slots @ ..] = &parts[..]
        else {
            return Err(protocol(format!("CLUSTER NODES: a short line {line:?}")));
        };
        let address = address.split(['@', ',']).next().unwrap_or_default();
        let (host, port) = address
            .rsplit_once(':')
            .ok_or_else(|| protocol(format!("CLUSTER NODES: no port in {address:?}")))?;
        let flags: Vec<&str> = flags.split(',').collect();
        let node = Node {
            id: (*id).to_owned(),
            host: host.trim_matches(['[', ']']).to_owned(),
            port: port.parse().unwrap_or(0),
            master: flags.contains(&"master"),
            healthy: *link == "connected"
                && !flags
                    .iter()
                    .any(|f| matches!(*f, "fail" | "fail?" | "handshake" | "noaddr")),
            offset: 0,
        };
        if node.master {
            let ranges = slots
                .iter()
                .filter(|s| !s.starts_with('['))
                .filter_map(|s| {
                    let (a, b) = s.split_once('-').unwrap_or((s, s));
                    Some((a.parse().ok()?, b.parse().ok()?))
                })
                .collect();
            masters.push((
                Shard {
                    id: node.id.clone(),
                    slots: ranges,
                    nodes: vec![node],
                },
                (*id).to_owned(),
            ));
        } else {
            replicas.push(((*master).to_owned(), node));
        }
    }
    for (master, node) in replicas {
        if let Some((shard, _)) = masters.iter_mut().find(|(_, id)| *id == master) {
            shard.nodes.push(node);
        }
    }
    let shards: Vec<Shard> = masters
        .into_iter()
        .map(|(s, _)| s)
        .filter(|s| !s.slots.is_empty())
        .collect();
    if shards.is_empty() {
        return Err(protocol("CLUSTER NODES: no master owns a slot".into()));
    }
    Ok(shards)
}

/// The node each shard is read from, as addresses named after their shard; shards left
/// out (`allow_partial`) are described in the second list.
pub fn pick(
    shards: &[Shard],
    seed: &Address,
    allow_master: bool,
    allow_partial: bool,
) -> io::Result<(Vec<Address>, Vec<String>)> {
    let mut picked = Vec::new();
    let mut left_out = Vec::new();
    for shard in shards {
        let node = shard
            .replica()
            .or_else(|| allow_master.then(|| shard.master()).flatten());
        match node {
            Some(node) => picked.push(Address {
                host: node.host.clone(),
                port: node.port,
                shard: Some(short_id(&shard.id).to_owned()),
                ..seed.clone()
            }),
            None => {
                let replicas: Vec<String> = shard
                    .nodes
                    .iter()
                    .filter(|n| !n.master)
                    .map(|n| format!("{}:{}", n.host, n.port))
                    .collect();
                let why = format!(
                    "{} has no in-sync replica{}",
                    shard.describe(),
                    if replicas.is_empty() {
                        String::new()
                    } else {
                        format!(" ({} not online)", replicas.join(", "))
                    }
                );
                if !allow_partial {
                    return Err(io::Error::new(
                        io::ErrorKind::NotFound,
                        format!("{why}: read it from its master with --allow-master, or leave it out with --allow-partial"),
                    ));
                }
                left_out.push(why);
            }
        }
    }
    Ok((picked, left_out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cluster_nodes() {
        let text = "\
a1 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460
b2 127.0.0.1:7001@17001 master - 0 0 2 connected 5461-10922
c3 127.0.0.1:7002@17002 master - 0 0 3 connected 10923-16383
d4 127.0.0.1:7003@17003 slave a1 0 0 1 connected
e5 127.0.0.1:7004@17004 slave,fail b2 0 0 2 disconnected
f6 127.0.0.1:7005@17005 slave c3 0 0 3 connected
";
        let shards = nodes_reply(text).unwrap();
        assert_eq!(shards.len(), 3);
        assert_eq!(shards[0].slots, [(0, 5460)]);
        let seed = Address::parse("redis://u@127.0.0.1:7000").unwrap().0;
        let e = pick(&shards, &seed, false, false).unwrap_err().to_string();
        assert!(e.contains("shard b2 (slots 5461-10922, master 127.0.0.1:7001) has no in-sync replica (127.0.0.1:7004 not online)"), "{e}");
        let (picked, left) = pick(&shards, &seed, false, true).unwrap();
        let names: Vec<String> = picked.iter().map(ToString::to_string).collect();
        assert_eq!(
            names,
            ["u@127.0.0.1:7003 (shard a1)", "u@127.0.0.1:7005 (shard c3)"]
        );
        assert_eq!(left.len(), 1);
        let (picked, _) = pick(&shards, &seed, true, false).unwrap();
        assert_eq!(picked[1].port, 7001);
    }
}
