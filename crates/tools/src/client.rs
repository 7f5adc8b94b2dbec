//! How the subcommands that call a running server (`healthcheck`, `inspect`, `replay`,
//! `eval`) reach it: plaintext, or TLS verifying the server's certificate against a
//! given CA (and presenting a client certificate to a server with mutual TLS), with the
//! API key as a bearer token.
use std::path::PathBuf;
use std::time::Duration;

use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

use ctxd_server::tls::read_pem;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// TLS settings of a client subcommand; without `--tls-ca` it connects in plaintext.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ClientTls {
    /// CA certificate(s) (PEM) the server's certificate must chain to; given, the
    /// connection uses TLS (for a server started with --tls-cert).
    #[arg(long, env = "CTXD_TLS_CA")]
    pub tls_ca: Option<PathBuf>,
    /// Client certificate (PEM) to present to a server that requires one
    /// (--tls-client-ca); needs --tls-client-key and --tls-ca.
    #[arg(
        long,
        env = "CTXD_TLS_CLIENT_CERT",
        requires = "tls_client_key",
        requires = "tls_ca"
    )]
    pub tls_client_cert: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long, env = "CTXD_TLS_CLIENT_KEY", requires = "tls_client_cert")]
    pub tls_client_key: Option<PathBuf>,
    /// Name the server's certificate must be valid for [default: the host of --addr].
    #[arg(long, env = "CTXD_TLS_SERVER_NAME", requires = "tls_ca")]
    pub tls_server_name: Option<String>,
}

/// `message` as a request carrying `api_key` (when given) as its bearer token.
pub fn with_key<T>(message: T, api_key: Option<&str>) -> Result<tonic::Request<T>, BoxError> {
    let mut request = tonic::Request::new(message);
    if let Some(key) = api_key {
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {key}").parse()?);
    }
    Ok(request)
}

/// A channel to the server at `addr` (HOST:PORT), connected.
pub async fn connect(
    addr: &str,
    tls: &ClientTls,
    connect_timeout: Duration,
    timeout: Duration,
) -> Result<Channel, BoxError> {
    let scheme = if tls.tls_ca.is_some() {
        "https"
    } else {
        "http"
    };
    let mut endpoint = Endpoint::from_shared(format!("{scheme}://{addr}"))?
        .connect_timeout(connect_timeout)
        .timeout(timeout);
    if let Some(config) = tls_config(tls)? {
        endpoint = endpoint.tls_config(config)?;
    }
    endpoint.connect().await.map_err(|error| {
        format!(
            "cannot connect to {addr}: {}",
            ctxd_server::error::chain(&error)
        )
        .into()
    })
}

/// The TLS configuration `tls` asks for, its files read; `None`: plaintext.
fn tls_config(tls: &ClientTls) -> Result<Option<ClientTlsConfig>, BoxError> {
    let Some(ca) = &tls.tls_ca else {
        return Ok(None);
    };
    let mut config = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(read_pem(ca)?));
    if let (Some(cert), Some(key)) = (&tls.tls_client_cert, &tls.tls_client_key) {
        config = config.identity(Identity::from_pem(read_pem(cert)?, read_pem(key)?));
    }
    if let Some(name) = &tls.tls_server_name {
        config = config.domain_name(name.clone());
    }
    Ok(Some(config))
}
