//! `rediss://`: TLS over the connection, with rustls (its ring provider; no OpenSSL).
//!
//! The server's certificate is checked against `--tls-ca-cert` when given, else against
//! the system's bundle (the first of the usual files found); `--tls-cert`/`--tls-key` give
//! a client certificate to servers that ask for one (`tls-auth-clients yes`).

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use std::io;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub type TlsStream = StreamOwned<ClientConnection, TcpStream>;

/// Where the system keeps its certificate authorities (Debian, Fedora, Alpine, …).
const SYSTEM_BUNDLES: [&str; 4] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
    "/etc/ssl/ca-bundle.pem",
];

/// The TLS files the command line names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsFiles {
    pub ca_cert: Option<PathBuf>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
}

/// A client configuration, built once a run.
pub struct TlsSettings {
    config: Arc<ClientConfig>,
}

fn invalid(flag: &str, path: &Path, e: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{flag} {}: {e}", path.display()),
    )
}

fn certificates(flag: &str, path: &Path) -> io::Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| invalid(flag, path, e))?;
    if certs.is_empty() {
        return Err(invalid(flag, path, "no PEM certificate in it"));
    }
    Ok(certs)
}

impl TlsSettings {
    pub fn new(files: &TlsFiles) -> io::Result<TlsSettings> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = RootCertStore::empty();
        let (flag, bundle) = match &files.ca_cert {
            Some(path) => ("--tls-ca-cert", path.clone()),
            None => (
                "the system's certificate authorities",
                SYSTEM_BUNDLES
                    .iter()
                    .map(PathBuf::from)
                    .find(|p| p.is_file())
                    .ok_or_else(|| {
                        io::Error::new(
                            io::ErrorKind::NotFound,
                            "no system certificate bundle found: name the server's CA with --tls-ca-cert",
                        )
                    })?,
            ),
        };
        for cert in certificates(flag, &bundle)? {
            // A system bundle may hold certificates rustls cannot parse: they are skipped.
            if let Err(e) = roots.add(cert) {
                if files.ca_cert.is_some() {
                    return Err(invalid(flag, &bundle, e));
                }
            }
        }
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(io::Error::other)?
            .with_root_certificates(roots);
        let config = match (&files.cert, &files.key) {
            (Some(cert), Some(key)) => {
                let chain = certificates("--tls-cert", cert)?;
                let key =
                    PrivateKeyDer::from_pem_file(key).map_err(|e| invalid("--tls-key", key, e))?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| invalid("--tls-cert", cert, e))?
            }
            (None, None) => builder.with_no_client_auth(),
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "--tls-cert and --tls-key go together",
                ))
            }
        };
        Ok(TlsSettings {
            config: Arc::new(config),
        })
    }

    /// The TLS handshake with `host` over `tcp`, done before the first command so a
    /// certificate the server's name does not match fails here, named.
    pub fn connect(&self, host: &str, mut tcp: TcpStream) -> io::Result<TlsStream> {
        let name = ServerName::try_from(host.to_owned())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{host}: {e}")))?;
        let mut conn = ClientConnection::new(Arc::clone(&self.config), name)
            .map_err(|e| io::Error::other(format!("TLS: {e}")))?;
        while conn.is_handshaking() {
            conn.complete_io(&mut tcp).map_err(|e| {
                if e.kind() == io::ErrorKind::InvalidData {
                    io::Error::new(e.kind(), format!("TLS handshake: {e}"))
                } else {
                    e
                }
            })?;
        }
        Ok(StreamOwned::new(conn, tcp))
    }
}
