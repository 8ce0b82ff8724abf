//! Turns the fetching flags into the crawler's settings, reading the files they name.

use std::time::Duration;

use anyhow::{Context, anyhow};
use crawler::credentials::Credentials;
use crawler::fetch::FetchSettings;
use crawler::fetch::guard::ResolveOverride;
use crawler::fetch::tls::parse_pem_certificates;

use crate::UsageResult;
use crate::cli::FetchArgs;

impl FetchArgs {
    /// Returns the settings these flags describe; a bad flag or unreadable file is a usage
    /// error that names it.
    pub(crate) fn settings(&self) -> anyhow::Result<FetchSettings> {
        self.read_settings().usage()
    }

    fn read_settings(&self) -> anyhow::Result<FetchSettings> {
        let mut settings = FetchSettings::default();
        for raw in &self.resolve {
            let rule: ResolveOverride = raw.parse().map_err(anyhow::Error::msg)?;
            settings.resolve.push(rule);
        }
        settings.allow_private = self.allow_private;
        if let Some(path) = &self.ca_cert {
            let pem = std::fs::read(path)
                .with_context(|| format!("cannot read --ca-cert {}", path.display()))?;
            settings.ca_certs = parse_pem_certificates(&pem)
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("--ca-cert {}", path.display()))?;
        }
        if let Some(agent) = &self.user_agent {
            if agent.trim().is_empty() || agent.chars().any(char::is_control) {
                return Err(anyhow!("--user-agent must be printable text"));
            }
            settings.user_agent = agent.clone();
        }
        settings.host_delay = Duration::from_millis(self.host_delay_ms);
        if self.connect_timeout_ms == 0 || self.request_timeout_ms == 0 {
            return Err(anyhow!("timeouts must be at least 1 ms"));
        }
        settings.connect_timeout = Duration::from_millis(self.connect_timeout_ms);
        settings.request_timeout = Duration::from_millis(self.request_timeout_ms);
        if let Some(path) = &self.credentials {
            let bytes = std::fs::read(path)
                .with_context(|| format!("cannot read --credentials {}", path.display()))?;
            settings.credentials = Credentials::parse(&bytes)
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("--credentials {}", path.display()))?;
        }
        Ok(settings)
    }
}
