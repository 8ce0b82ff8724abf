//! The crawl report file (`skillscout crawl --report FILE`, docs/crawl.md), written as the crawl
//! stores each domain: the crawl itself keeps no line, so its memory does not grow with the
//! number of domains.
//!
//! The file is built as `FILE.json.partial` and renamed into place when the crawl ends, so a
//! reader never sees half a report; `-` writes to standard output as the lines come.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use crawler::crawl::{CrawlObserver, CrawlReport, DomainReport};

/// Writes report lines as they come, then the totals.
pub(crate) struct ReportFile {
    state: Mutex<Writing>,
}

struct Writing {
    out: BufWriter<Box<dyn Write + Send>>,
    /// The file being written and its final name; `None` for standard output.
    paths: Option<(PathBuf, PathBuf)>,
    lines: usize,
    /// The first write that failed: the report is then incomplete, and says so at the end.
    error: Option<std::io::Error>,
}

impl ReportFile {
    /// Starts a report at `path` (`-`: standard output).
    pub(crate) fn create(path: &Path) -> anyhow::Result<ReportFile> {
        let (out, paths): (Box<dyn Write + Send>, _) = if path == Path::new("-") {
            (Box::new(std::io::stdout()), None)
        } else {
            let temporary = path.with_extension("json.partial");
            let file = File::create(&temporary)
                .with_context(|| format!("cannot write the report {}", temporary.display()))?;
            (Box::new(file), Some((temporary, path.to_owned())))
        };
        let mut writing = Writing {
            out: BufWriter::new(out),
            paths,
            lines: 0,
            error: None,
        };
        writing.write(b"{\n  \"domains\": [");
        Ok(ReportFile {
            state: Mutex::new(writing),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Writing> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds one domain's line.
    pub(crate) fn line(&self, line: &DomainReport) {
        let mut writing = self.lock();
        let separator: &[u8] = if writing.lines == 0 {
            b"\n    "
        } else {
            b",\n    "
        };
        writing.write(separator);
        match serde_json::to_vec(line) {
            Ok(json) => writing.write(&json),
            Err(error) => writing.fail(std::io::Error::other(error)),
        }
        writing.lines += 1;
    }

    /// Writes the totals and puts the file in place.
    pub(crate) fn finish(&self, report: &CrawlReport) -> anyhow::Result<()> {
        let mut writing = self.lock();
        let mut tail = String::from(if writing.lines == 0 {
            "],\n"
        } else {
            "\n  ],\n"
        });
        let totals = serde_json::to_string(&report.totals).context("cannot encode the totals")?;
        tail.push_str(&format!("  \"totals\": {totals}"));
        if report.interrupted {
            tail.push_str(",\n  \"interrupted\": true");
        }
        tail.push_str("\n}\n");
        writing.write(tail.as_bytes());
        if let Err(error) = writing.out.flush() {
            writing.fail(error);
        }
        if let Some(error) = writing.error.take() {
            return Err(error).context("cannot write the report");
        }
        if let Some((temporary, path)) = writing.paths.take() {
            std::fs::rename(&temporary, &path)
                .with_context(|| format!("cannot write the report {}", path.display()))?;
        }
        Ok(())
    }
}

impl Drop for ReportFile {
    /// A report that was never finished (the crawl could not run to its end) leaves no
    /// `.json.partial` file behind.
    fn drop(&mut self) {
        if let Some((temporary, _)) = &self.lock().paths {
            let _ = std::fs::remove_file(temporary);
        }
    }
}

impl Writing {
    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_none()
            && let Err(error) = self.out.write_all(bytes)
        {
            self.fail(error);
        }
    }

    fn fail(&mut self, error: std::io::Error) {
        self.error.get_or_insert(error);
    }
}

/// Tells the progress bar about each domain, writes the report as the crawl stores, and
/// counts for `--metrics-addr`.
pub(crate) struct Observers {
    /// The progress bar.
    pub(crate) progress: Arc<dyn CrawlObserver>,
    /// The report file, when one was asked for.
    pub(crate) report: Option<Arc<ReportFile>>,
    /// What `--metrics-addr` serves, when asked for.
    pub(crate) metrics: Option<api::CrawlProgress>,
    /// True while a round of a worker that keeps running is counted as a crawl.
    pub(crate) running: std::sync::atomic::AtomicBool,
}

impl CrawlObserver for Observers {
    fn domain_finished(&self, report: &DomainReport) {
        self.progress.domain_finished(report);
        if let Some(metrics) = &self.metrics {
            if !self.running.swap(true, std::sync::atomic::Ordering::SeqCst) {
                metrics.crawl_started(0);
            }
            metrics.domain_finished(report);
        }
    }

    fn stored(&self, last_seq: u64) {
        self.progress.stored(last_seq);
    }

    fn domain_stored(&self, line: &DomainReport) {
        if let Some(report) = &self.report {
            report.line(line);
        }
    }

    fn discovered(&self, added: &crawler::crawl::discover::DiscoveryStats) {
        if let Some(metrics) = &self.metrics {
            metrics.discovered(
                added.discovered as u64,
                added.probed as u64,
                added.publishing as u64,
            );
        }
    }

    fn round_finished(&self, next_due: Option<time::OffsetDateTime>) {
        if let Some(metrics) = &self.metrics
            && self
                .running
                .swap(false, std::sync::atomic::Ordering::SeqCst)
        {
            metrics.crawl_finished(&crawler::crawl::CrawlReport::default());
            metrics.next_crawl_at(next_due);
        }
    }
}
