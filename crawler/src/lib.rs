//! Fetching, politeness, parsing and normalising of agent skills published on the web.
//!
//! This crate owns the canonical record, [`Skill`]: the only place it is defined, and the only
//! code that builds one ([`normalize`]). Everything that reads published bytes lives here, as
//! pure functions from bytes to values and diagnostics; only the fetch layer ([`fetch`])
//! touches the network.
//!
//! # Layout
//!
//! - [`diagnostic`]: [`Diagnostic`], [`Severity`] and the stable [`Code`]s.
//! - [`skill`]: the canonical [`Skill`] record and its validated newtypes.
//! - [`skill_md`]: SKILL.md frontmatter and body, checked against the Agent Skills format and
//!   the GAIA extensions.
//! - [`index`]: agent-skills discovery indexes, v0.2 and v0.1 (and the variants in the wild).
//! - [`archive`]: safe listing and reading of `.tar.gz` and `.zip` skill archives.
//! - [`sharing`]: skill-sharing indexes and descriptors.
//! - [`normalize`]: index entry + fetched artifact -> [`Skill`].
//! - [`seeds`]: the seed file format.
//! - [`local`]: reads a skill folder, a file, or a well-known tree from disk.
//! - [`store`]: the crawl state in the data directory (records, tombstones, change log,
//!   domain status, HTTP cache), in redb.
//! - [`blobs`]: content-addressed bytes in the data directory (artifacts, skill files, cached
//!   bodies).
//! - [`robots`]: robots.txt (RFC 9309) for the `skillscout` product token.
//! - [`politeness`]: per-host turns and pauses, `Retry-After`, backoff.
//! - [`credentials`]: per-host headers for a publisher's private skills.
//! - [`fetch`]: the only network code: SSRF guard, TLS, HTTP cache, capped bodies, redirects.
//! - [`crawl`]: many domains at once, each to the end, stored in batches; the crawl report.
//!
//! # Invariants
//!
//! - Parsing never panics and never fails as a whole because of one bad entry: problems
//!   become diagnostics on the entry or the index.
//! - Content whose digest does not match the published one never becomes a record's content.
//! - Nothing fetched is ever executed.

pub mod archive;
pub mod blobs;
pub mod crawl;
pub mod credentials;
pub mod diagnostic;
pub mod error;
pub mod fetch;
pub mod index;
pub mod local;
pub mod normalize;
pub mod politeness;
pub mod robots;
pub mod seeds;
pub mod sharing;
pub mod skill;
pub mod skill_md;
pub mod store;

pub use diagnostic::{Code, Diagnostic, Severity, VerdictKind};
pub use error::{Error, Result};
pub use skill::{
    Access, Artifact, Digest, DigestStatus, Domain, FileEntry, Format, Skill, SkillId, SkillName,
    Slug,
};
