//! `skillscout export`: writes the skills a search selects to disk in one of the export
//! layouts (the work is `api::export`, shared with `GET /v1/export`), with a progress bar on
//! a terminal and one summary line on stdout.
//!
//! The export reads the index and the crawl store; it opens the store, so it cannot run while
//! a server or a crawl holds the data directory.

use std::io::{IsTerminal, Write as _};
use std::path::Path;

use anyhow::Context;
use api::export::{ExportProgress, ExportRequest};
use api::{AppState, ServeConfig, Tokens};
use indexer::{Caller, SearchIndex};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::ExportArgs;
use crate::crawl::open_data;
use crate::progress::ActiveBar;
use crate::{ExitStatus, UsageResult, usage};

/// Runs `skillscout export`.
pub(crate) fn run(
    data: &Path,
    location: Option<&str>,
    args: &ExportArgs,
    active: &ActiveBar,
) -> anyhow::Result<ExitStatus> {
    if !args.force && args.out.symlink_metadata().is_ok() {
        return Err(usage(anyhow::anyhow!(
            "{} exists; use --force to replace it",
            args.out.display()
        )));
    }
    let dir = data.join(indexer::INDEX_DIR);
    let index = SearchIndex::open(&dir).with_context(|| {
        format!(
            "cannot open the index in {}; run `skillscout crawl` first",
            dir.display()
        )
    })?;
    let (store, blobs) = open_data(data, location)?;
    let state = AppState::new(index, store, blobs, Tokens::none(), ServeConfig::default());
    let filters = api::filters(args.filters.parameters()).usage()?;
    let request = ExportRequest {
        query: args.query.trim().to_owned(),
        filters,
        since: args.since,
        caller: if args.private {
            Caller::Authenticated
        } else {
            Caller::Anonymous
        },
        layout: args.layout,
        include_risky: args.include_risky,
    };
    let progress = Bar::new(std::io::stderr().is_terminal(), active);
    let exported = api::export::export_to_path(
        &state,
        &request,
        &args.out,
        args.archive,
        args.force,
        &progress,
    );
    progress.finish();
    let manifest = match exported {
        Ok(manifest) => manifest,
        Err(error) if error.is_usage() => return Err(usage(error)),
        Err(error) => return Err(anyhow::Error::new(error).context("the export failed")),
    };
    for renamed in &manifest.renamed {
        tracing::info!(id = %renamed.id, to = %renamed.to, "renamed: the name is taken by another publisher's skill");
    }
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "exported to {}: {}",
        args.out.display(),
        manifest.summary
    )
    .context("cannot write to stdout")?;
    if let Some(warning) = missing_files(&manifest.missing) {
        tracing::warn!("{warning}");
    }
    Ok(ExitStatus::Success)
}

/// Says, when files of exported skills are missing, how many, of which skills, why, and how to
/// get them (the manifest lists each with its reason).
fn missing_files(missing: &[api::export::Missing]) -> Option<String> {
    let first = missing.first()?;
    let skills: std::collections::BTreeSet<String> =
        missing.iter().map(|file| file.id.to_string()).collect();
    let mut named: Vec<&str> = skills.iter().map(String::as_str).take(3).collect();
    if skills.len() > 3 {
        named.push("…");
    }
    Some(format!(
        "{} file{} of {} skill{} ({}) could not be exported; manifest.json lists each with why. \
         The first: {}/{}: {}",
        missing.len(),
        if missing.len() == 1 { "" } else { "s" },
        skills.len(),
        if skills.len() == 1 { "" } else { "s" },
        named.join(", "),
        first.id,
        first.path,
        first.reason
    ))
}

/// The progress bar: skills handled out of those selected.
struct Bar {
    bar: ProgressBar,
    active: ActiveBar,
}

impl Bar {
    fn new(show: bool, active: &ActiveBar) -> Bar {
        let target = if show {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(None, target);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} skills",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        if show {
            active.set(Some(bar.clone()));
        }
        Bar {
            bar,
            active: active.clone(),
        }
    }

    fn finish(&self) {
        self.active.set(None);
        self.bar.finish_and_clear();
    }
}

impl ExportProgress for Bar {
    fn planned(&self, skills: usize) {
        self.bar.set_length(skills as u64);
    }

    fn advanced(&self) {
        self.bar.inc(1);
    }
}
