//! Live sources: a dump read from a running server over the replication protocol, where a
//! command takes a dump file (`redis://[user[:password]@]host[:port]`, `rediss://` for TLS).
//!
//! The server is asked for a full sync as a replica would ([`replication`] says how, and
//! how each fault is reported); its RDB payload is spooled like standard input
//! ([`crate::pass::input`]: `--tmpdir`, `--max-spool`, the RDB magic checked first) or
//! into `--keep-dump`, and read from there like a file. A link that breaks mid-payload
//! keeps what arrived: the dump is read up to there and the run fails (exit 2) with a
//! partial report, as for a cut file.
//!
//! The password (from the address, else `REDISCLI_AUTH`) is taken out of the address as
//! the command line is read ([`sources`]) and kept here, in memory, by source: the sources
//! a command holds, prints and writes name `host:port` (`user@host:port`), never it.
//!
//! Under `--cluster` one address expands into one source a shard ([`cluster`]), read
//! `--parallel` at a time: opening shard i starts the fetches of the next ones in the
//! background. Each source is fetched once a run and its spool kept until the run ends,
//! so a command reading its dumps twice (`diff`'s key look-ups) syncs once.
//!
//! Layer: the pass's input, beside [`crate::pass::input`], which calls it.

pub mod address;
mod cluster;
mod connection;
mod replication;
mod tls;

pub use address::is_live;
use address::Address;
use connection::Connection;
pub use tls::TlsFiles;

use crate::pass::input::{spool_raw, Cut, CutSource, SpoolOptions};
use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

/// The default `--timeout`: longer than a server's `repl-diskless-sync-delay` (5 s by
/// default; the server sends keep-alive newlines meanwhile, and while it forks and saves,
/// so the timeout bounds a silence, not the whole sync).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// What the command line says about live sources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveOptions {
    /// Read a master (a full sync forks a BGSAVE on it).
    pub allow_master: bool,
    /// The longest silence from a server.
    pub timeout: Duration,
    /// Keep the payload here: a file, or a directory with one file a source when there
    /// are several (`--cluster`).
    pub keep_dump: Option<PathBuf>,
    pub tls: TlsFiles,
    /// Expand each address into the cluster's shards.
    pub cluster: bool,
    /// Leave out a shard with no in-sync replica instead of failing.
    pub allow_partial: bool,
    /// Shards read at once.
    pub parallel: usize,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            allow_master: false,
            timeout: DEFAULT_TIMEOUT,
            keep_dump: None,
            tls: TlsFiles::default(),
            cluster: false,
            allow_partial: false,
            parallel: 2,
        }
    }
}

/// A fetch's result, kept for every later open of the same source.
type Fetched = Result<(Arc<File>, Option<Cut>), (io::ErrorKind, String)>;

/// One source's fetch: not started, under way, or done.
#[derive(Default)]
struct Entry {
    state: Mutex<Option<Option<Fetched>>>,
    done: Condvar,
}

/// Every live source of the run: its password, its fetch, and the sources after it that
/// are fetched in the background when it is opened.
#[derive(Default)]
struct Registry {
    passwords: HashMap<String, String>,
    entries: HashMap<String, Arc<Entry>>,
    /// The sources of one `--cluster` expansion in order, and how many to fetch at once.
    groups: Vec<(Vec<String>, usize)>,
    /// Where each source keeps its payload (`--keep-dump`).
    keep: HashMap<String, PathBuf>,
}

fn registry() -> &'static Mutex<Registry> {
    static REGISTRY: OnceLock<Mutex<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(Mutex::default)
}

fn lock() -> std::sync::MutexGuard<'static, Registry> {
    registry()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How reports and errors name `path`: `host:port` for a live source, the path otherwise.
pub fn source_name(path: &Path) -> String {
    match path.to_str().filter(|p| is_live(p)).map(Address::parse) {
        Some(Ok((address, _))) => address.to_string(),
        _ => path.display().to_string(),
    }
}

/// The command line's dumps with each address stripped of its password (kept here) and,
/// under `--cluster`, expanded into its shards: one source a shard, named after it.
pub fn sources(dumps: &[PathBuf], options: &LiveOptions) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::with_capacity(dumps.len());
    let mut live = Vec::new();
    for dump in dumps {
        let Some(arg) = dump.to_str().filter(|a| is_live(a)) else {
            out.push(dump.clone());
            continue;
        };
        let (address, password) = Address::parse(arg)?;
        let password = password.or_else(|| {
            std::env::var("REDISCLI_AUTH")
                .ok()
                .filter(|p| !p.is_empty())
        });
        let addresses = if options.cluster {
            let shards = shards_of(&address, password.as_deref(), options)
                .map_err(|e| io::Error::new(e.kind(), format!("{address}: {e}")))?;
            let uris: Vec<String> = shards.iter().map(Address::uri).collect();
            lock().groups.push((uris, options.parallel.max(1)));
            shards
        } else {
            vec![address]
        };
        for address in addresses {
            let uri = address.uri();
            if let Some(p) = &password {
                lock().passwords.insert(uri.clone(), p.clone());
            }
            live.push(address);
            out.push(PathBuf::from(uri));
        }
    }
    if let Some(keep) = &options.keep_dump {
        let several = live.len() > 1 || options.cluster;
        if several {
            std::fs::create_dir_all(keep).map_err(|e| {
                io::Error::new(e.kind(), format!("--keep-dump {}: {e}", keep.display()))
            })?;
        }
        let mut registry = lock();
        for address in &live {
            let path = if several {
                keep.join(format!(
                    "{}.rdb",
                    address.host_port().replace([':', '[', ']', '/'], "_")
                ))
            } else {
                keep.clone()
            };
            registry.keep.insert(address.uri(), path);
        }
    }
    Ok(out)
}

/// The nodes to read a cluster's shards from, found from the node at `seed`.
fn shards_of(
    seed: &Address,
    password: Option<&str>,
    options: &LiveOptions,
) -> io::Result<Vec<Address>> {
    let tls = seed
        .tls
        .then(|| tls::TlsSettings::new(&options.tls))
        .transpose()?;
    let mut conn = Connection::open(seed, options.timeout, tls.as_ref())?;
    replication::hello(&mut conn, seed, password)?;
    let shards = cluster::discover(&mut conn, seed.tls)?;
    let (picked, left_out) =
        cluster::pick(&shards, seed, options.allow_master, options.allow_partial)?;
    for why in left_out {
        eprintln!("rdbscope: {seed}: {why}: left out (--allow-partial)");
    }
    Ok(picked)
}

/// The payload of the live source `arg`, spooled: the file, and where the link broke if
/// it did before the payload's end.
pub fn fetch(arg: &str, spool: &SpoolOptions) -> io::Result<(File, Option<Cut>)> {
    let (address, password) = Address::parse(arg)?;
    let uri = address.uri();
    let (entry, ahead) = {
        let mut registry = lock();
        if let Some(p) = password {
            registry.passwords.entry(uri.clone()).or_insert(p);
        }
        let entry = Arc::clone(registry.entries.entry(uri.clone()).or_default());
        let ahead: Vec<String> = registry
            .groups
            .iter()
            .find_map(|(uris, parallel)| {
                let at = uris.iter().position(|u| *u == uri)?;
                Some(
                    uris.iter()
                        .skip(at + 1)
                        .take(parallel - 1)
                        .cloned()
                        .collect(),
                )
            })
            .unwrap_or_default();
        (entry, ahead)
    };
    for next in ahead {
        let next_entry = Arc::clone(lock().entries.entry(next.clone()).or_default());
        if claim(&next_entry) {
            let spool = spool.clone();
            std::thread::spawn(move || run_fetch(&next_entry, &next, &spool));
        }
    }
    if claim(&entry) {
        run_fetch(&entry, &uri, spool);
    }
    let mut state = entry
        .state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    loop {
        match &*state {
            Some(Some(Ok((file, cut)))) => return Ok((file.try_clone()?, cut.clone())),
            Some(Some(Err((kind, message)))) => return Err(io::Error::new(*kind, message.clone())),
            _ => {
                state = entry
                    .done
                    .wait(state)
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
            }
        }
    }
}

/// Marks `entry` under way; false when it already was (or is done).
fn claim(entry: &Entry) -> bool {
    let mut state = entry
        .state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if state.is_some() {
        return false;
    }
    *state = Some(None);
    true
}

fn run_fetch(entry: &Entry, uri: &str, spool: &SpoolOptions) {
    let result = read_source(uri, spool)
        .map(|(file, cut)| (Arc::new(file), cut))
        .map_err(|e| (e.kind(), e.to_string()));
    *entry
        .state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Some(result));
    entry.done.notify_all();
}

/// Connects, checks the server may be read, and spools its payload.
fn read_source(uri: &str, spool: &SpoolOptions) -> io::Result<(File, Option<Cut>)> {
    let options = &spool.live;
    let (address, _) = Address::parse(uri)?;
    let (password, keep) = {
        let registry = lock();
        (
            registry.passwords.get(uri).cloned(),
            registry.keep.get(uri).cloned(),
        )
    };
    let tls = address
        .tls
        .then(|| tls::TlsSettings::new(&options.tls))
        .transpose()?;
    let mut conn = Connection::open(&address, options.timeout, tls.as_ref())?;
    let replication = replication::hello(&mut conn, &address, password.as_deref())?;
    replication::check_role(&replication, options.allow_master)?;
    let framing = replication::start_sync(&mut conn)?;
    let payload = replication::Payload::new(&mut conn, framing);
    let (file, damage) = spool_raw(payload, "the replication payload", spool, keep.as_deref())?;
    let cut = damage.map(|(offset, e)| Cut {
        source: CutSource::Replication,
        offset,
        error: e.to_string(),
    });
    Ok((file, cut))
}
