//! The TLS client configuration, built once per crawl and shared by every host's client.
//!
//! Roots are the system's (through `rustls-platform-verifier`) plus any `--ca-cert`. Building
//! the configuration once matters: loading the system's certificates takes milliseconds, and
//! the crawler makes one client per host so that idle connections die with the host's crawl.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};

/// Parses the certificates of a PEM file (`--ca-cert`).
pub fn parse_pem_certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let mut certificates = Vec::new();
    for item in CertificateDer::pem_slice_iter(pem) {
        certificates.push(item.map_err(|error| format!("invalid PEM certificate: {error}"))?);
    }
    if certificates.is_empty() {
        return Err("no PEM certificate (-----BEGIN CERTIFICATE-----) found".to_owned());
    }
    Ok(certificates)
}

/// Returns the client configuration: HTTP/1.1 only (the crawler makes one request at a time
/// per host, so HTTP/2 would buy nothing), the system's roots plus `extra_roots`.
pub fn client_config(extra_roots: &[CertificateDer<'static>]) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier: Arc<dyn ServerCertVerifier> =
        match rustls_platform_verifier::Verifier::new_with_extra_roots(
            extra_roots.iter().cloned(),
            Arc::clone(&provider),
        ) {
            Ok(verifier) => Arc::new(verifier),
            Err(error) if extra_roots.is_empty() => {
                // A machine without CA certificates can still crawl http:// origins; https
                // ones fail with this reason instead of the whole crawl failing.
                tracing::warn!(%error, "no trusted CA certificates; https origins will fail");
                Arc::new(NoRoots {
                    provider: Arc::clone(&provider),
                })
            }
            Err(error) => return Err(format!("cannot use the CA certificates: {error}")),
        };
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| format!("cannot configure TLS: {error}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// A verifier for a machine with no trusted roots: every certificate is refused, saying why.
#[derive(Debug)]
struct NoRoots {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for NoRoots {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Err(rustls::Error::General(
            "no trusted CA certificates on this machine: install ca-certificates or pass --ca-cert"
                .to_owned(),
        ))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_parsing_names_the_problem() {
        assert!(
            parse_pem_certificates(b"not pem")
                .unwrap_err()
                .contains("no PEM certificate")
        );
        let broken = b"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n";
        assert!(parse_pem_certificates(broken).is_err());
    }

    #[test]
    fn the_default_configuration_builds() {
        let config = client_config(&[]).unwrap();
        assert_eq!(config.alpn_protocols, [b"http/1.1".to_vec()]);
    }
}
