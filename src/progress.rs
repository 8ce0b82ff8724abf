//! The crawl's progress bar on a terminal, and a log writer that lifts the bar out of the way
//! while a log line is written, so the two never garble each other.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crawler::crawl::{CrawlObserver, DomainReport};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tracing_subscriber::fmt::MakeWriter;

/// The bar currently drawn, if any; the log writer suspends it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ActiveBar(Arc<Mutex<Option<ProgressBar>>>);

impl ActiveBar {
    pub(crate) fn set(&self, bar: Option<ProgressBar>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = bar;
    }

    fn get(&self) -> Option<ProgressBar> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl<'a> MakeWriter<'a> for ActiveBar {
    type Writer = LogLine;

    fn make_writer(&'a self) -> LogLine {
        LogLine {
            bar: self.get(),
            buffer: Vec::new(),
        }
    }
}

/// One log event, written to stderr in one piece when dropped.
pub(crate) struct LogLine {
    bar: Option<ProgressBar>,
    buffer: Vec<u8>,
}

impl Write for LogLine {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        let buffer = std::mem::take(&mut self.buffer);
        let write = || {
            let _ = std::io::stderr().lock().write_all(&buffer);
        };
        match &self.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }
}

/// Shows hosts done out of the total, skills found, errors and the rate.
pub(crate) struct CrawlProgress {
    bar: ProgressBar,
    active: ActiveBar,
    skills: AtomicUsize,
    errors: AtomicUsize,
    started: Instant,
}

impl CrawlProgress {
    /// Starts a bar for `hosts` hosts; it is drawn only when stderr is a terminal and `show`.
    pub(crate) fn start(hosts: usize, show: bool, active: &ActiveBar) -> CrawlProgress {
        let target = if show {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(hosts as u64), target);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} hosts  {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        if show {
            active.set(Some(bar.clone()));
        }
        CrawlProgress {
            bar,
            active: active.clone(),
            skills: AtomicUsize::new(0),
            errors: AtomicUsize::new(0),
            started: Instant::now(),
        }
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        self.active.set(None);
        self.bar.finish_and_clear();
    }
}

impl CrawlObserver for CrawlProgress {
    fn domain_finished(&self, report: &DomainReport) {
        let skills = self.skills.fetch_add(report.skills, Ordering::Relaxed) + report.skills;
        let errors = report.errors.len() + report.errors_omitted;
        let errors = self.errors.fetch_add(errors, Ordering::Relaxed) + errors;
        self.bar.inc(1);
        let elapsed = self.started.elapsed().as_secs_f64().max(0.001);
        let rate = self.bar.position() as f64 / elapsed;
        self.bar.set_message(format!(
            "{skills} skills, {errors} errors, {rate:.1} hosts/s"
        ));
    }
}
