//! TLS on the gRPC port: the server's certificate chain and key (and, for mutual TLS,
//! the CA that client certificates must chain to) read from PEM files into a rustls
//! configuration, which a reload replaces as a whole. The accept loop
//! (`connections/`) takes the configuration in force when a connection arrives; a
//! connection keeps the one it was accepted with, so a reload never touches established
//! connections. A reload that fails (a missing or bad file, a key that does not match
//! the certificate) leaves the configuration in force as it was.
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject as _;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_util::sync::CancellationToken;

/// The protocol a gRPC client asks for in the TLS handshake (ALPN); gRPC clients such
/// as grpcio refuse a server that does not select it.
const ALPN_H2: &[u8] = b"h2";

/// Largest PEM file read (a certificate chain or a CA bundle is a few KiB; a system
/// trust store about 200 KiB).
const MAX_PEM_BYTES: u64 = 4 * 1024 * 1024;

/// The files the server's TLS configuration is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The server's certificate chain, leaf first (PEM).
    pub cert: PathBuf,
    /// The certificate's private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// CA certificates (PEM) a client's certificate must chain to; `None`: no client
    /// certificates are asked for.
    pub client_ca: Option<PathBuf>,
}

/// Why a TLS configuration could not be made; each names the file (or files) at fault.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is larger than {MAX_PEM_BYTES} bytes; not a PEM file")]
    TooLarge { path: PathBuf },
    #[error("{path}: {what}")]
    Pem { path: PathBuf, what: String },
    #[error("{path}: no {what} in it")]
    Missing { path: PathBuf, what: &'static str },
    #[error("the certificate {cert} and the key {key} cannot be used: {reason}")]
    CertKey {
        cert: PathBuf,
        key: PathBuf,
        reason: rustls::Error,
    },
    #[error("the client CA file {path} cannot be used: {reason}")]
    ClientCa { path: PathBuf, reason: String },
}

/// Builds the server's configuration from `files`: TLS 1.2 and 1.3 with ring's safe
/// defaults, ALPN `h2`, and client certificates required and verified when a client CA
/// is given.
pub fn server_config(files: &TlsFiles) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs = certificates(&files.cert, "certificate")?;
    let key = private_key(&files.key)?;
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|reason| TlsError::CertKey {
            cert: files.cert.clone(),
            key: files.key.clone(),
            reason,
        })?;
    let builder = match &files.client_ca {
        None => builder.with_no_client_auth(),
        Some(path) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in certificates(path, "CA certificate")? {
                roots.add(cert).map_err(|reason| TlsError::ClientCa {
                    path: path.clone(),
                    reason: reason.to_string(),
                })?;
            }
            let verifier =
                rustls::server::WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
                    .build()
                    .map_err(|reason| TlsError::ClientCa {
                        path: path.clone(),
                        reason: reason.to_string(),
                    })?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|reason| TlsError::CertKey {
            cert: files.cert.clone(),
            key: files.key.clone(),
            reason,
        })?;
    config.alpn_protocols = vec![ALPN_H2.to_vec()];
    Ok(Arc::new(config))
}

/// Reads a PEM file, bounded in size.
pub fn read_pem(path: &Path) -> Result<Vec<u8>, TlsError> {
    let read = |source| TlsError::Read {
        path: path.to_path_buf(),
        source,
    };
    let len = std::fs::metadata(path).map_err(read)?.len();
    if len > MAX_PEM_BYTES {
        return Err(TlsError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    std::fs::read(path).map_err(read)
}

/// Every certificate in the PEM file at `path`; at least one.
fn certificates(path: &Path, what: &'static str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = read_pem(path)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| TlsError::Pem {
            path: path.to_path_buf(),
            what: error.to_string(),
        })?;
    if certs.is_empty() {
        return Err(TlsError::Missing {
            path: path.to_path_buf(),
            what,
        });
    }
    Ok(certs)
}

/// The first private key in the PEM file at `path`.
fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let pem = read_pem(path)?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|error| match error {
        rustls::pki_types::pem::Error::NoItemsFound => TlsError::Missing {
            path: path.to_path_buf(),
            what: "private key",
        },
        error => TlsError::Pem {
            path: path.to_path_buf(),
            what: error.to_string(),
        },
    })
}

/// The server's TLS configuration in force, replaced as a whole by [`ServerTls::reload`].
#[derive(Debug)]
pub struct ServerTls {
    files: TlsFiles,
    current: RwLock<Arc<rustls::ServerConfig>>,
}

impl ServerTls {
    /// Reads `files`; an error names the file at fault.
    pub fn load(files: TlsFiles) -> Result<ServerTls, TlsError> {
        let config = server_config(&files)?;
        Ok(ServerTls {
            files,
            current: RwLock::new(config),
        })
    }

    /// The files the configuration is read from.
    pub fn files(&self) -> &TlsFiles {
        &self.files
    }

    /// The acceptor for a connection arriving now.
    pub fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(
            self.current
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        )
    }

    /// The acceptor for an HTTP/1.1 connection (the provider endpoint) arriving now: the
    /// same certificates, with HTTP/1.1 as the application protocol.
    pub fn http1_acceptor(&self) -> TlsAcceptor {
        let current = self
            .current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let mut config = (*current).clone();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        TlsAcceptor::from(Arc::new(config))
    }

    /// Reads the files again; on success new connections use what they hold, on error
    /// the configuration in force stays (established connections are never touched).
    pub fn reload(&self) -> Result<(), TlsError> {
        let config = server_config(&self.files)?;
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = config;
        Ok(())
    }
}

/// Until `shutdown`, reloads `tls` on every SIGHUP (files read on the blocking pool),
/// logging the outcome; a failed reload keeps the configuration in force. Without TLS
/// a SIGHUP is logged and ignored (it does not stop the server). Returns once the
/// signal handler is installed, so a SIGHUP sent after it is never the default action
/// (which would end the process).
pub fn reload_on_sighup(tls: Option<Arc<ServerTls>>, shutdown: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hangups = match signal(SignalKind::hangup()) {
        Ok(hangups) => hangups,
        Err(error) => {
            tracing::warn!(error = %error, "cannot listen for SIGHUP; TLS files will not be reloaded");
            return;
        }
    };
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                received = hangups.recv() => if received.is_none() { return },
            }
            let Some(tls) = &tls else {
                tracing::info!("SIGHUP: no TLS configured, nothing to reload");
                continue;
            };
            let reloading = tls.clone();
            match tokio::task::spawn_blocking(move || reloading.reload()).await {
                Ok(Ok(())) => tracing::info!(
                    cert = %tls.files().cert.display(),
                    "SIGHUP: TLS certificate, key and client CA reloaded; new connections use them"
                ),
                Ok(Err(error)) => tracing::error!(
                    error = %error,
                    "SIGHUP: reloading TLS failed; keeping the configuration in force"
                ),
                Err(error) => tracing::error!(
                    error = %error,
                    "SIGHUP: reloading TLS failed; keeping the configuration in force"
                ),
            }
        }
    });
}
