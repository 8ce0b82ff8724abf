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

/// A sync of at least this many changes (a rebuild, a large crawl) shows its progress.
pub(crate) const INDEX_PROGRESS_MIN: u64 = 200;
/// Without a terminal, a progress line is logged at each tenth of the work, and at least this
/// often.
const INDEX_LOG_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// The progress of a bulk index sync: a bar with the rate and the time left on a terminal,
/// log lines otherwise (each tenth of the work, and every [`INDEX_LOG_EVERY`]).
pub(crate) struct IndexProgress {
    bar: Option<ProgressBar>,
    active: ActiveBar,
    /// Whether a terminal is there to draw on.
    terminal: bool,
    started: Instant,
    last_logged: Instant,
    /// The last tenth logged.
    tenth: u64,
    total: u64,
}

impl IndexProgress {
    /// Starts watching a sync; draws on stderr when it is a terminal.
    pub(crate) fn new(active: &ActiveBar) -> IndexProgress {
        use std::io::IsTerminal;
        IndexProgress {
            bar: None,
            active: active.clone(),
            terminal: std::io::stderr().is_terminal(),
            started: Instant::now(),
            last_logged: Instant::now(),
            tenth: 0,
            total: 0,
        }
    }

    /// Takes the sync's progress.
    pub(crate) fn observe(&mut self, progress: indexer::SyncProgress) {
        if progress.total < INDEX_PROGRESS_MIN {
            return;
        }
        if self.total == 0 {
            self.total = progress.total;
            self.started = Instant::now();
            self.last_logged = self.started;
            if self.terminal {
                let bar = ProgressBar::with_draw_target(
                    Some(progress.total),
                    ProgressDrawTarget::stderr(),
                );
                bar.set_style(
                    ProgressStyle::with_template(
                        "indexing [{elapsed_precise}] {bar:30} {pos}/{len} changes  {per_sec}  ETA {eta}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                self.active.set(Some(bar.clone()));
                self.bar = Some(bar);
            } else {
                tracing::info!(changes = progress.total, "indexing");
            }
        }
        if let Some(bar) = &self.bar {
            bar.set_position(progress.done);
            return;
        }
        let tenth = progress.done * 10 / self.total.max(1);
        if tenth > self.tenth || self.last_logged.elapsed() >= INDEX_LOG_EVERY {
            self.tenth = tenth;
            self.last_logged = Instant::now();
            let elapsed = self.started.elapsed().as_secs_f64().max(0.001);
            let rate = progress.done as f64 / elapsed;
            let left = if rate > 0.0 {
                (self.total.saturating_sub(progress.done)) as f64 / rate
            } else {
                0.0
            };
            tracing::info!(
                done = progress.done,
                total = self.total,
                per_second = format!("{rate:.0}"),
                eta_seconds = format!("{left:.0}"),
                "indexed {} of {} changes",
                progress.done,
                self.total
            );
        }
    }

    /// Removes the bar.
    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            self.active.set(None);
            bar.finish_and_clear();
        }
    }
}
