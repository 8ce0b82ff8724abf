//! A small static web server for the demo: answers `GET` requests for the sites in a fixture
//! folder, choosing the site by the `Host` header (`<root>/<host>/<path>`), as if each folder
//! were a web site of its own. Only hosts that have a folder are served, paths cannot leave
//! their site's folder, and nothing but regular files is read.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::header::{CONTENT_TYPE, HOST};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

/// Returns the site names (folder names that are host names) under `root`, sorted.
pub(crate) fn site_names(root: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(root)? {
        let entry = entry?;
        if !entry.file_type()?.is_dir() {
            continue;
        }
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if name.parse::<formats::Domain>().is_ok() {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

/// The sites served: the root folder and the names of its site folders.
#[derive(Debug)]
struct Sites {
    root: PathBuf,
    names: Vec<String>,
}

/// Returns a router that serves `sites` (folder names from [`site_names`]) under `root`.
pub(crate) fn router(root: PathBuf, sites: Vec<String>) -> Router {
    Router::new()
        .fallback(serve_file)
        .with_state(Arc::new(Sites { root, names: sites }))
}

async fn serve_file(
    State(sites): State<Arc<Sites>>,
    method: Method,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let Some(file) = locate(&sites, &headers, &uri) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let read = tokio::task::spawn_blocking(move || {
        let metadata = std::fs::symlink_metadata(&file).ok()?;
        if !metadata.is_file() {
            return None;
        }
        std::fs::read(&file)
            .ok()
            .map(|bytes| (bytes, content_type(&file)))
    })
    .await
    .ok()
    .flatten();
    match read {
        Some((bytes, content_type)) => (
            [(CONTENT_TYPE, HeaderValue::from_static(content_type))],
            bytes,
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Maps a request to a file below `root/<host>/`, or `None` when it names none. Only the
/// listed site names are hosts: a `Host` header is never turned into a path by itself.
fn locate(sites: &Sites, headers: &HeaderMap, uri: &Uri) -> Option<PathBuf> {
    let host = headers.get(HOST)?.to_str().ok()?;
    let host = host
        .rsplit_once(':')
        .map_or(host, |(name, _)| name)
        .to_ascii_lowercase();
    let site = sites.names.iter().find(|name| **name == host)?;
    let mut file = sites.root.join(site);
    for segment in uri.path().split('/').filter(|segment| !segment.is_empty()) {
        let decoded = percent_decode(segment)?;
        if decoded == "." || decoded == ".." || decoded.contains(['/', '\\', '\0']) {
            return None;
        }
        file.push(decoded);
    }
    Some(file)
}

/// Decodes `%XX` escapes (a `%` not followed by two hex digits stays as it is); `None` when
/// the result is not UTF-8.
fn percent_decode(segment: &str) -> Option<String> {
    percent_encoding::percent_decode_str(segment)
        .decode_utf8()
        .ok()
        .map(|decoded| decoded.into_owned())
}

fn content_type(path: &Path) -> &'static str {
    let name = path.to_string_lossy();
    if name.ends_with(".json") || name.ends_with("/skill-sharing") {
        "application/json"
    } else if name.ends_with(".md") {
        "text/markdown; charset=utf-8"
    } else if name.ends_with(".tar.gz") {
        "application/gzip"
    } else if name.ends_with(".zip") {
        "application/zip"
    } else {
        "application/octet-stream"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locate_in(root: &Path, host: &str, path: &str) -> Option<PathBuf> {
        let mut headers = HeaderMap::new();
        headers.insert(HOST, HeaderValue::from_str(host).unwrap());
        let sites = Sites {
            root: root.to_owned(),
            names: site_names(root).unwrap(),
        };
        locate(&sites, &headers, &path.parse().unwrap())
    }

    #[test]
    fn requests_map_to_files_of_their_site_only() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("seeds/web");
        let index = locate_in(
            &root,
            "pdfworks.test:8080",
            "/.well-known/agent-skills/index.json",
        );
        assert_eq!(
            index,
            Some(root.join("pdfworks.test/.well-known/agent-skills/index.json"))
        );
        assert!(locate_in(&root, "unknown.test", "/").is_none());
        assert!(locate_in(&root, "pdfworks.test", "/../services.test/x").is_none());
        assert!(locate_in(&root, "pdfworks.test", "/%2e%2e/services.test").is_none());
        assert!(locate_in(&root, "pdfworks.test", "/a%2Fb").is_none());
        assert!(locate_in(&root, "..", "/").is_none());
        assert!(locate_in(&root, "..:80", "/pdfworks.test").is_none());
        assert_eq!(
            site_names(&root).unwrap(),
            [
                "legacy-tools.test",
                "pdfworks.test",
                "services.test",
                "sloppy.test"
            ]
        );
    }
}
