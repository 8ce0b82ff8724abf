//! `skillscout demo`: the whole pipeline on one machine with no internet. The fixture web
//! (built into the binary from `seeds/web`, or a folder given with `--web`) is served
//! in-process on 127.0.0.1 (each folder a site, chosen by the `Host` header), crawled through `--resolve`-style overrides with no pause between requests, synced
//! into the index, and served as a directory.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use api::{CrawlProgress, Tokens};
use crawler::crawl::CrawlConfig;
use crawler::fetch::guard::ResolveOverride;
use formats::seeds::SeedTarget;

use crate::cli::DemoArgs;
use crate::serve::{Directory, Shutdown, announce, bind, crawl_once, runtime};
use crate::static_site::{self, Web};
use crate::{ExitStatus, usage};

/// Runs `skillscout demo`; `data` is the data directory when one was given.
pub(crate) fn run(data: Option<&Path>, args: &DemoArgs) -> anyhow::Result<ExitStatus> {
    let web = match &args.web {
        Some(folder) => Web::Folder(folder.clone()),
        None => Web::BuiltIn,
    };
    let sites = match web.site_names() {
        Ok(sites) => sites,
        Err(error) => {
            return Err(usage(anyhow::Error::new(error).context(format!(
                "cannot read the fixture web {web}: --web names a folder with one folder per \
                 site (leave it out for the built-in web)"
            ))));
        }
    };
    if sites.is_empty() {
        return Err(usage(anyhow::anyhow!(
            "{web} holds no site folder (one folder per site, named by its host, such as \
             example.test)"
        )));
    }
    let (data, _temporary) = match data {
        Some(data) => (data.to_owned(), None),
        None => {
            let temporary = TemporaryDir::create()?;
            (temporary.path.clone(), Some(temporary))
        }
    };
    runtime()?.block_on(async {
        let shutdown = Shutdown::on_signals();
        // The fixture web, on a port of its own.
        let site_listener = bind("127.0.0.1:0".parse().context("a literal address")?).await?;
        let site_addr = site_listener.local_addr()?;
        tokio::spawn(
            axum::serve(
                site_listener,
                static_site::router(web.clone(), sites.clone()),
            )
            .with_graceful_shutdown(shutdown.wait())
            .into_future(),
        );
        tracing::info!(%site_addr, sites = sites.len(), %web, "fixture web serving");

        let directory = Directory::open(&data, None, None).await?;
        let progress = CrawlProgress::default();
        let mut config = CrawlConfig {
            prefetch_files: true,
            keep_report_lines: false,
            ..CrawlConfig::default()
        };
        config.fetch.host_delay = Duration::ZERO;
        let mut targets = Vec::new();
        for site in &sites {
            let rule: ResolveOverride = format!("{site}={site_addr}")
                .parse()
                .map_err(anyhow::Error::msg)?;
            config.fetch.resolve.push(rule);
            targets.push(SeedTarget::parse(&format!("http://{site}")).map_err(anyhow::Error::msg)?);
        }
        let hosts = targets.len();
        let report = crawl_once(
            &directory,
            config,
            crawler::crawl::Feed::targets(targets, crate::crawl::worker_name()),
            hosts,
            &progress,
            shutdown.wait(),
        )
        .await?;
        let totals = report.totals;
        tracing::info!(
            domains = totals.domains,
            skills = totals.skills,
            data = %data.display(),
            "demo web crawled"
        );

        let listener = bind(args.addr).await?;
        let state =
            directory.state(&listener, None, Tokens::none(), api::ServeConfig::default())?;
        // The status page shows the demo crawl.
        state.progress().crawl_started(report.totals.domains);
        state.progress().crawl_finished(&report);
        announce(&format!(
            "crawled {} demo sites: {} skills",
            totals.domains, totals.skills
        ))?;
        announce(&format!("open http://{}", listener.local_addr()?))?;
        api::serve(listener, state, shutdown.wait())
            .await
            .context("the server failed")?;
        Ok(ExitStatus::Success)
    })
}

/// A data directory that is removed when the demo ends.
struct TemporaryDir {
    path: PathBuf,
}

impl TemporaryDir {
    fn create() -> anyhow::Result<TemporaryDir> {
        let path = std::env::temp_dir().join(format!("skillscout-demo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        Ok(TemporaryDir { path })
    }
}

impl Drop for TemporaryDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
