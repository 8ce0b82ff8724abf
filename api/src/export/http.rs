//! `GET /v1/export?q=&type=&access=&domain=&format=&tag=&license=&verdict=&risk=&since=&layout=&archive=&include_risky=`:
//! the export of docs/api.md, streamed as it is written. With `archive=true` (or a layout
//! made of files, `skills-dir` or `well-known`) the body is a `.tar.gz` with `manifest.json`
//! last; otherwise (`layout=jsonl`, the default) it is JSONL, one record per line.
//!
//! The export runs on one blocking thread, writing into a small bounded channel that the
//! response body reads, so a slow client slows the export instead of growing a buffer, and no
//! export is ever held whole in memory. It keeps the request's work permit until its last
//! byte is sent, so exports count against the server's work limit like any other request.
//! The caller's access applies, as everywhere.

use std::io::{self, Write};
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::HeaderValue;
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use time::OffsetDateTime;
use tokio::sync::mpsc;

use crate::auth::Auth;
use crate::error::ApiError;
use crate::export::{self, ExportRequest, Layout, NoProgress, Output, TarSink};
use crate::extract::Params;
use crate::state::{AppState, WorkPermit};

/// How many chunks may wait between the export and the client.
pub(crate) const CHANNEL_CHUNKS: usize = 8;
/// The size of one chunk of the body.
const CHUNK_BYTES: usize = 64 * 1024;

/// `GET /v1/export`.
#[utoipa::path(
    get,
    path = "/v1/export",
    tag = "export",
    params(
        ("q" = Option<String>, Query, description = "Which skills, as /v1/search selects them"),
        ("type" = Option<String>, Query, description = "Capability types"),
        ("domain" = Option<String>, Query, description = "Publishers' domains"),
        ("since" = Option<String>, Query, description = "RFC 3339 time: skills changed since"),
        ("layout" = Option<String>, Query, description = "`skills-dir` (default), `well-known` or `jsonl`"),
        ("archive" = Option<bool>, Query, description = "One `.tar.gz` (`skills-dir` and `well-known` are always archives over HTTP)"),
    ),
    responses(
        (status = 200, description = "The export, streamed: a `.tar.gz` with a `manifest.json`, or (layout `jsonl` without `archive`) one record per line", content(
            (Vec<u8> = "application/gzip"),
            (String = "application/x-ndjson"),
        )),
        (status = 400, description = "A parameter is invalid", body = crate::error::ErrorBody),
        (status = 401, description = "The bearer token is wrong", body = crate::error::ErrorBody),
        (status = 503, description = "Overloaded: try again after `Retry-After`", body = crate::error::ErrorBody)
    ),
    security((), ("bearer" = []))
)]
pub(crate) async fn export(
    State(state): State<AppState>,
    Auth(caller): Auth,
    permit: Option<axum::Extension<WorkPermit>>,
    params: Params,
) -> Result<Response, ApiError> {
    let layout = match params.one("layout")? {
        Some(raw) => raw
            .parse::<Layout>()
            .map_err(|message| ApiError::parameter("layout", message))?,
        None => Layout::Jsonl,
    };
    let archive = match params.one("archive")? {
        // Over HTTP a tree of files can only come as an archive.
        None => layout != Layout::Jsonl,
        Some("false" | "0") if layout != Layout::Jsonl => {
            return Err(ApiError::parameter(
                "archive",
                "the skills-dir and well-known layouts come only as a .tar.gz over HTTP: \
                 leave archive out or set it to true",
            ));
        }
        Some("false" | "0") => false,
        Some("true" | "1" | "") => true,
        Some(other) => {
            return Err(ApiError::parameter(
                "archive",
                format!("archive must be true or false, not {other:?}"),
            ));
        }
    };
    let include_risky = match params.one("include_risky")? {
        None | Some("false" | "0") => false,
        Some("true" | "1" | "") => true,
        Some(other) => {
            return Err(ApiError::parameter(
                "include_risky",
                format!("include_risky must be true or false, not {other:?}"),
            ));
        }
    };
    let since = params.since()?;
    let request = ExportRequest {
        query: params.query()?,
        filters: params.filters()?,
        since,
        caller,
        layout,
        include_risky,
    };
    // The selection is made before the first byte, so a bad request is still a 4xx.
    let plan = {
        let request = request.clone();
        state
            .directory()
            .ask(move |directory| export::plan(directory, &request))
            .await?
    };
    let permit = permit.map(|axum::Extension(permit)| permit);
    let (sender, receiver) = mpsc::channel(CHANNEL_CHUNKS);
    let spool = std::env::temp_dir();
    let directory = state.directory().clone();
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let mut body = ChannelWriter::new(sender);
        let now = OffsetDateTime::now_utc();
        let written = if archive {
            let mut sink = TarSink::new(&mut body, export::unix_time(now));
            export::write(
                &directory,
                &request,
                plan,
                Output::Files(&mut sink),
                &spool,
                now,
                &NoProgress,
            )
            .and_then(|_| sink.finish().map(|_| ()).map_err(stream_error))
        } else {
            export::write(
                &directory,
                &request,
                plan,
                Output::Lines(&mut body),
                &spool,
                now,
                &NoProgress,
            )
            .map(|_| ())
        };
        match written.and_then(|()| body.flush().map_err(stream_error)) {
            Ok(()) => {}
            Err(error) => {
                // The status line is sent: the client sees the body end early.
                tracing::warn!(error = %error.detail(), "export stopped before its end");
                body.fail(io::Error::other("the export failed"));
            }
        }
    });
    let (content_type, file_name) = if archive {
        ("application/gzip", "skillscout-export.tar.gz")
    } else {
        ("application/x-ndjson", "skillscout-export.jsonl")
    };
    let disposition = format!("attachment; filename=\"{file_name}\"");
    Ok((
        [
            (CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (
                CONTENT_DISPOSITION,
                HeaderValue::from_str(&disposition).expect("an ASCII file name"),
            ),
            // Not cached: an export is made for one request, and may be large.
            (CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        Body::from_stream(ChunkStream(receiver)),
    )
        .into_response())
}

fn stream_error(error: io::Error) -> ApiError {
    ApiError::Internal(format!("cannot stream the export: {error}"))
}

/// The blocking side of the body: buffers a chunk, then waits for room in the channel.
pub(crate) struct ChannelWriter {
    sender: mpsc::Sender<io::Result<Bytes>>,
    buffer: Vec<u8>,
}

impl ChannelWriter {
    pub(crate) fn new(sender: mpsc::Sender<io::Result<Bytes>>) -> ChannelWriter {
        ChannelWriter {
            sender,
            buffer: Vec::with_capacity(CHUNK_BYTES),
        }
    }

    fn send(&mut self, item: io::Result<Bytes>) -> io::Result<()> {
        self.sender
            .blocking_send(item)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the client went away"))
    }

    pub(crate) fn fail(&mut self, error: io::Error) {
        let _ = self.send(Err(error));
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        if self.buffer.len() >= CHUNK_BYTES {
            self.flush()?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(
            &mut self.buffer,
            Vec::with_capacity(CHUNK_BYTES),
        ));
        self.send(Ok(chunk))
    }
}

/// The async side of the body.
pub(crate) struct ChunkStream(pub(crate) mpsc::Receiver<io::Result<Bytes>>);

impl futures_util::Stream for ChunkStream {
    type Item = io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}
