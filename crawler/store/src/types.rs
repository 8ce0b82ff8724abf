//! The values the store keeps and hands out, whatever the backend.

use std::collections::BTreeSet;

use formats::{Diagnostic, Digest, Domain, Format, Skill, SkillId};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use url::Url;

/// What went wrong with the store; the caller cannot crawl without it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The data directory cannot be created or the database cannot be opened or written.
    #[error("crawl store {location}: {message}")]
    Database {
        /// Where the store is: its database file or server.
        location: String,
        /// What the database said.
        message: String,
    },
    /// A stored value cannot be decoded: the store was written by an incompatible version.
    #[error("crawl store {location}: cannot decode {what}: {message}")]
    Corrupt {
        /// Where the store is: its database file or server.
        location: String,
        /// Which value.
        what: String,
        /// The decoding error.
        message: String,
    },
    /// A blocking call into the store was cancelled or panicked; what it wrote, if anything,
    /// is whole (every write is one transaction).
    #[error("crawl store call did not finish: {message}")]
    Interrupted {
        /// Why.
        message: String,
    },
    /// The database server cannot be reached, or the connection to it was lost: the call may
    /// succeed later. A write that fails so was not stored (it is one transaction).
    #[error("crawl store {location} is unavailable: {message}")]
    Unavailable {
        /// Where the store is: its server and database (never a password).
        location: String,
        /// What failed.
        message: String,
    },
    /// The database was migrated by a newer skillscout than this one: this binary does not
    /// know its tables and must not write them. Upgrade the binary.
    #[error(
        "crawl store {location} has schema version {found}, newer than version {known} that this skillscout knows: upgrade skillscout"
    )]
    SchemaTooNew {
        /// Where the store is.
        location: String,
        /// The schema version found in the database.
        found: i64,
        /// The newest schema version this binary knows.
        known: i64,
    },
    /// The embedded store is open in another process (a running `skillscout serve`, a crawl):
    /// redb lets one process at a time hold its file.
    #[error("crawl store {location} is in use by another skillscout process")]
    InUse {
        /// The database file.
        location: String,
    },
    /// A value given to the store cannot be used (a domain that does not parse); nothing was
    /// written.
    #[error("{message}")]
    InvalidInput {
        /// What is wrong, naming the value.
        message: String,
    },
    /// The store location is not one this crate can open: neither the embedded store nor a
    /// `postgres://` / `postgresql://` URL, or a URL that does not parse.
    #[error("invalid crawl store location: {message}")]
    InvalidLocation {
        /// What is wrong with it (a URL's password is never repeated).
        message: String,
    },
}

/// A record as stored: the normalised skill plus its place in the change log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredRecord {
    /// The record.
    pub skill: Skill,
    /// When the skill vanished from its index; `None` while it is published.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub removed_at: Option<OffsetDateTime>,
    /// The change sequence number of the record's last upsert or delete.
    pub seq: u64,
}

impl StoredRecord {
    /// Returns true when the record is a tombstone.
    pub fn is_tombstone(&self) -> bool {
        self.removed_at.is_some()
    }
}

/// How a domain's last crawl ended (docs/crawl.md report `outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// At least one index was read.
    Ok,
    /// The origin answered, but publishes no index.
    NotFound,
    /// robots.txt forbids the well-known paths, or could not be read (429, 5xx, unreachable).
    Disallowed,
    /// The origin could not be reached at all.
    Unreachable,
    /// Something else went wrong (a refused destination, an index that could not be used).
    Error,
}

impl Outcome {
    /// Every value, in the order they are documented.
    pub const ALL: [Outcome; 5] = [
        Outcome::Ok,
        Outcome::NotFound,
        Outcome::Disallowed,
        Outcome::Unreachable,
        Outcome::Error,
    ];

    /// Returns the value's name, as the report writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::NotFound => "not_found",
            Outcome::Disallowed => "disallowed",
            Outcome::Unreachable => "unreachable",
            Outcome::Error => "error",
        }
    }

    /// Returns the outcome named `name`.
    pub fn from_name(name: &str) -> Option<Outcome> {
        Outcome::ALL
            .into_iter()
            .find(|outcome| outcome.as_str() == name)
    }
}

/// One error of a domain's crawl, as the report shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrawlErrorEntry {
    /// Stable snake_case code.
    pub code: String,
    /// What happened.
    pub message: String,
    /// The URL it happened at.
    pub url: String,
    /// The record it concerns, when it concerns one: whoever may not see the record does not
    /// see the error either. The crawl report leaves it out (see [`crate::report`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<SkillId>,
}

/// The state of one domain after its last crawl.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DomainStatus {
    /// The domain.
    pub domain: Domain,
    /// The origin crawled, e.g. `https://example.com` or `https://example.com/docs`.
    pub origin: String,
    /// How the crawl ended.
    pub outcome: Outcome,
    /// The formats found.
    pub formats: Vec<Format>,
    /// The index URLs read successfully in the last crawl.
    pub indexes: Vec<Url>,
    /// Live skills after the crawl.
    pub skills: usize,
    /// HTTP requests made, robots.txt included.
    pub requests: usize,
    /// Errors of the crawl (at most a few hundred are listed).
    pub errors: Vec<CrawlErrorEntry>,
    /// Errors past the listed ones, counted only.
    #[serde(default)]
    pub errors_omitted: usize,
    /// Index-level diagnostics.
    pub diagnostics: Vec<Diagnostic>,
    /// When the crawl of this domain finished.
    #[serde(with = "time::serde::rfc3339")]
    pub crawled_at: OffsetDateTime,
    /// When an index of this domain was last read successfully; every live record was seen
    /// then.
    #[serde(default, with = "time::serde::rfc3339::option")]
    pub last_success: Option<OffsetDateTime>,
    /// What the answers to the index requests said about caching, when any was fetched in
    /// this crawl (a fresh entry of our own cache says nothing new).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caching: Option<CachingHeaders>,
}

impl DomainStatus {
    /// The status of a crawl of `domain` (from `origin`) that ended `ok` at `at`, having read
    /// `indexes` (of `formats`) and found `skills` skills, with no error and no request
    /// counted: what code that builds records itself (a local tree, a test, a benchmark)
    /// stores beside them. Set other fields with struct update syntax.
    pub fn read_ok(
        domain: Domain,
        origin: String,
        formats: Vec<Format>,
        indexes: Vec<Url>,
        skills: usize,
        at: OffsetDateTime,
    ) -> DomainStatus {
        DomainStatus {
            domain,
            origin,
            outcome: Outcome::Ok,
            formats,
            indexes,
            skills,
            requests: 0,
            errors: Vec::new(),
            errors_omitted: 0,
            diagnostics: Vec::new(),
            crawled_at: at,
            last_success: Some(at),
            caching: None,
        }
    }
}

/// What a site's responses said about caching (RFC 9111), for its publisher's health report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachingHeaders {
    /// Every response carried a validator (`ETag` or `Last-Modified`), so a client can
    /// revalidate instead of downloading again.
    pub validator: bool,
    /// Every response said how long it stays fresh (`Cache-Control: max-age`/`s-maxage` or
    /// `Expires`).
    pub freshness: bool,
}

impl CachingHeaders {
    /// Returns what both say together: each holds only when it holds for both.
    #[must_use]
    pub fn and(self, other: CachingHeaders) -> CachingHeaders {
        CachingHeaders {
            validator: self.validator && other.validator,
            freshness: self.freshness && other.freshness,
        }
    }
}

/// A cached HTTP response: what is needed to decide freshness and to revalidate, and where
/// the body is kept (in the blob store, by digest), for re-use on a 304 or while fresh.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheEntry {
    /// The serialised `http_cache_semantics::CachePolicy`.
    pub policy: serde_json::Value,
    /// The response status: 200 for a stored body, 404 or 410 for a cached "not found".
    #[serde(default = "ok_status")]
    pub status: u16,
    /// The digest of the body in the blob store (`None` for a cached "not found").
    pub body: Option<Digest>,
    /// When the response was stored.
    #[serde(with = "time::serde::rfc3339")]
    pub stored_at: OffsetDateTime,
    /// Set when the publisher said the copy is out of date (an IndexNow ping, a recrawl
    /// request): the next fetch revalidates it even while its `Cache-Control` calls it fresh.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub revalidate: bool,
}

fn ok_status() -> u16 {
    200
}

/// What applying a domain's crawl changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplyStats {
    /// Records that did not exist (or were tombstones) before.
    pub added: usize,
    /// Records whose content changed.
    pub updated: usize,
    /// Records that vanished from an index read in this crawl.
    pub removed: usize,
    /// Records seen again with the same content.
    pub unchanged: usize,
}

impl ApplyStats {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: ApplyStats) {
        self.added += other.added;
        self.updated += other.updated;
        self.removed += other.removed;
        self.unchanged += other.unchanged;
    }
}

/// One domain's crawl, as the store takes it.
#[derive(Debug, Clone)]
pub struct DomainUpdate {
    /// The domain's status after the crawl.
    pub status: DomainStatus,
    /// The records built in this crawl and not stored yet.
    pub fresh: Vec<Skill>,
    /// The records of this crawl that were stored while it ran
    /// ([`RecordStore::upsert`](crate::RecordStore::upsert)).
    pub streamed: Streamed,
    /// HTTP cache entries to store (`Some`) or forget (`None`).
    pub cache: Vec<(Url, Option<CacheEntry>)>,
    /// Index URLs the publisher withdrew (410 Gone, or refused by robots.txt): their live
    /// records become tombstones.
    pub withdrawn: Vec<Url>,
}

/// The records of a domain's crawl stored while it ran, so that a domain of many large skills
/// is never held in memory whole: the ids tell the crawl's final
/// [`RecordStore::apply`](crate::RecordStore::apply) that they were seen, and their counts
/// join the domain's.
#[derive(Debug, Clone, Default)]
pub struct Streamed {
    /// The ids of the records stored.
    pub ids: BTreeSet<SkillId>,
    /// What storing them changed.
    pub stats: ApplyStats,
}
