//! Stopping on SIGINT (Ctrl-C) or SIGTERM: long-running commands finish what is safe to
//! finish, say what they did, and exit with the status a shell expects of the signal
//! (130 for SIGINT, 143 for SIGTERM) unless stopping is their normal end.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use tokio::sync::watch;

use crate::ExitStatus;

/// No signal yet.
const NONE: u8 = 0;
/// SIGINT came.
const INTERRUPT: u8 = 1;
/// SIGTERM came.
const TERMINATE: u8 = 2;

/// Tells everyone when the process is asked to stop; cheap to clone.
#[derive(Clone)]
pub(crate) struct Stop {
    receiver: watch::Receiver<bool>,
    which: Arc<AtomicU8>,
}

impl Stop {
    /// Starts listening for the signals (inside a runtime).
    pub(crate) fn on_signals() -> Stop {
        let (sender, receiver) = watch::channel(false);
        let which = Arc::new(AtomicU8::new(NONE));
        let seen = Arc::clone(&which);
        tokio::spawn(async move {
            let signal = signal().await;
            seen.store(signal, Ordering::SeqCst);
            tracing::info!("stopping: finishing what is in flight");
            let _ = sender.send(true);
        });
        Stop { receiver, which }
    }

    /// Completes when the process is told to stop.
    pub(crate) fn wait(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut receiver = self.receiver.clone();
        async move {
            let _ = receiver.wait_for(|stop| *stop).await;
        }
    }

    /// The exit status for a run the signal cut short.
    pub(crate) fn exit_status(&self) -> ExitStatus {
        match self.which.load(Ordering::SeqCst) {
            TERMINATE => ExitStatus::Terminated,
            INTERRUPT => ExitStatus::Interrupted,
            _ => ExitStatus::Failure,
        }
    }
}

/// Completes on Ctrl-C (SIGINT) or SIGTERM, saying which.
async fn signal() -> u8 {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut stream) => {
                stream.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => INTERRUPT,
        () = terminate => TERMINATE,
    }
}
