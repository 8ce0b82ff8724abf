//! A small static web server for the demo: answers `GET` requests for the sites of a fixture
//! web, choosing the site by the `Host` header (`<root>/<host>/<path>`), as if each folder
//! were a web site of its own. The web is a folder on disk or the one built into the binary
//! (`seeds/web`, see `build.rs`). Only hosts that have a folder are served, paths cannot leave
//! their site's folder, and nothing but regular files is read.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::header::{CONTENT_TYPE, HOST};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

mod built_in {
    include!(concat!(env!("OUT_DIR"), "/demo_web.rs"));
}

/// A fixture web: one folder per site, named by its host.
#[derive(Debug, Clone)]
pub(crate) enum Web {
    /// A folder on disk.
    Folder(PathBuf),
    /// The web built into the binary (the repository's `seeds/web`).
    BuiltIn,
}

impl std::fmt::Display for Web {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Web::Folder(root) => write!(f, "{}", root.display()),
            Web::BuiltIn => f.write_str("the built-in fixture web"),
        }
    }
}

impl Web {
    /// Returns the site names (folder names that are host names), sorted.
    pub(crate) fn site_names(&self) -> std::io::Result<Vec<String>> {
        match self {
            Web::Folder(root) => site_names(root),
            Web::BuiltIn => {
                let mut names: Vec<String> = built_in::FILES
                    .iter()
                    .filter_map(|(path, _)| path.split_once('/').map(|(site, _)| site))
                    .filter(|site| site.parse::<formats::Domain>().is_ok())
                    .map(str::to_owned)
                    .collect();
                names.dedup();
                Ok(names)
            }
        }
    }

    /// Reads the file at `segments` (decoded, checked path segments) of `site`; `None` when
    /// there is no such regular file.
    fn read(&self, site: &str, segments: &[String]) -> Option<Cow<'static, [u8]>> {
        match self {
            Web::Folder(root) => {
                let mut file = root.join(site);
                file.extend(segments);
                let metadata = std::fs::symlink_metadata(&file).ok()?;
                if !metadata.is_file() {
                    return None;
                }
                std::fs::read(&file).ok().map(Cow::Owned)
            }
            Web::BuiltIn => {
                let path = std::iter::once(site)
                    .chain(segments.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join("/");
                built_in::FILES
                    .binary_search_by(|(name, _)| (*name).cmp(path.as_str()))
                    .ok()
                    .map(|found| Cow::Borrowed(built_in::FILES[found].1))
            }
        }
    }
}

/// Returns the site names (folder names that are host names) under `root`, sorted.
fn site_names(root: &Path) -> std::io::Result<Vec<String>> {
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

/// The sites served: the web and the names of its sites.
#[derive(Debug)]
struct Sites {
    web: Web,
    names: Vec<String>,
}

/// Returns a router that serves `sites` (names from [`Web::site_names`]) of `web`.
pub(crate) fn router(web: Web, sites: Vec<String>) -> Router {
    Router::new()
        .fallback(serve_file)
        .with_state(Arc::new(Sites { web, names: sites }))
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
    let Some((site, segments)) = locate(&sites, &headers, &uri) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let content_type = content_type(segments.last().map_or("", String::as_str));
    let read = tokio::task::spawn_blocking(move || sites.web.read(&site, &segments))
        .await
        .ok()
        .flatten();
    match read {
        Some(bytes) => (
            [(CONTENT_TYPE, HeaderValue::from_static(content_type))],
            bytes.into_owned(),
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Maps a request to a site and the path segments of a file below it, or `None` when it
/// names none. Only the listed site names are hosts: a `Host` header is never turned into a
/// path by itself, and no segment can leave the site's folder.
fn locate(sites: &Sites, headers: &HeaderMap, uri: &Uri) -> Option<(String, Vec<String>)> {
    let host = headers.get(HOST)?.to_str().ok()?;
    let host = host
        .rsplit_once(':')
        .map_or(host, |(name, _)| name)
        .to_ascii_lowercase();
    let site = sites.names.iter().find(|name| **name == host)?;
    let mut segments = Vec::new();
    for segment in uri.path().split('/').filter(|segment| !segment.is_empty()) {
        let decoded = percent_decode(segment)?;
        if decoded == "." || decoded == ".." || decoded.contains(['/', '\\', '\0']) {
            return None;
        }
        segments.push(decoded);
    }
    Some((site.clone(), segments))
}

/// Decodes `%XX` escapes (a `%` not followed by two hex digits stays as it is); `None` when
/// the result is not UTF-8.
fn percent_decode(segment: &str) -> Option<String> {
    percent_encoding::percent_decode_str(segment)
        .decode_utf8()
        .ok()
        .map(|decoded| decoded.into_owned())
}

/// The media type of a file, by its name.
fn content_type(name: &str) -> &'static str {
    if name.ends_with(".json") || name == "skill-sharing" {
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

    fn repository_web() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("seeds/web")
    }

    fn locate_in(web: Web, host: &str, path: &str) -> Option<(String, Vec<String>)> {
        let mut headers = HeaderMap::new();
        headers.insert(HOST, HeaderValue::from_str(host).unwrap());
        let sites = Sites {
            names: web.site_names().unwrap(),
            web,
        };
        locate(&sites, &headers, &path.parse().unwrap())
    }

    #[test]
    fn requests_map_to_files_of_their_site_only() {
        for web in [Web::Folder(repository_web()), Web::BuiltIn] {
            let (site, segments) = locate_in(
                web.clone(),
                "pdfworks.test:8080",
                "/.well-known/agent-skills/index.json",
            )
            .unwrap();
            assert_eq!(site, "pdfworks.test");
            assert_eq!(segments, [".well-known", "agent-skills", "index.json"]);
            assert!(web.read(&site, &segments).is_some(), "{web}");
            assert!(locate_in(web.clone(), "unknown.test", "/").is_none());
            assert!(locate_in(web.clone(), "pdfworks.test", "/../services.test/x").is_none());
            assert!(locate_in(web.clone(), "pdfworks.test", "/%2e%2e/services.test").is_none());
            assert!(locate_in(web.clone(), "pdfworks.test", "/a%2Fb").is_none());
            assert!(locate_in(web.clone(), "..", "/").is_none());
            assert!(locate_in(web.clone(), "..:80", "/pdfworks.test").is_none());
            // A folder is not a file.
            assert!(
                web.read("pdfworks.test", &[".well-known".to_owned()])
                    .is_none()
            );
            assert_eq!(
                web.site_names().unwrap(),
                [
                    "legacy-tools.test",
                    "pdfworks.test",
                    "services.test",
                    "sloppy.test"
                ]
            );
        }
    }

    /// The built-in web is the repository's `seeds/web`, file for file and byte for byte.
    #[test]
    fn the_built_in_web_is_the_repository_s() {
        fn walk(root: &Path, dir: &Path, files: &mut Vec<(String, Vec<u8>)>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(root, &path, files);
                } else {
                    let relative = path.strip_prefix(root).unwrap().to_str().unwrap();
                    files.push((relative.replace('\\', "/"), std::fs::read(&path).unwrap()));
                }
            }
        }
        let root = repository_web();
        let mut on_disk = Vec::new();
        walk(&root, &root, &mut on_disk);
        on_disk.sort();
        let built_in: Vec<(String, Vec<u8>)> = built_in::FILES
            .iter()
            .map(|(path, bytes)| ((*path).to_owned(), bytes.to_vec()))
            .collect();
        assert_eq!(built_in, on_disk);
    }
}
