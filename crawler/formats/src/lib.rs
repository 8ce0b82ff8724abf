//! The canonical agent-skill record and every format skillscout reads, as pure functions.
//!
//! This crate owns the canonical record, [`Skill`]: the only place it is defined, and the only
//! code that builds one ([`normalize`]). Every parser takes bytes that someone else fetched or
//! read and returns values plus [`Diagnostic`]s; nothing here touches the network, the file
//! system, a database or an async runtime. That makes it usable on its own: a publisher's
//! build step can check its index and skills with exactly the rules a crawler applies.
//!
//! # Example
//!
//! Check a SKILL.md the way the directory does, and see what an agent client would say:
//!
//! ```
//! use formats::{Severity, skill_md};
//!
//! let text = "---\nname: pdf-tools\ndescription: Extract text and tables from PDF files.\n---\n# PDF tools\n";
//! let parsed = skill_md::parse(text.as_bytes(), Some("pdf-tools"));
//! assert_eq!(parsed.name.as_deref(), Some("pdf-tools"));
//! assert_eq!(parsed.body, "# PDF tools\n");
//! assert!(parsed.diagnostics.iter().all(|d| d.severity != Severity::Error));
//! ```
//!
//! # Layout
//!
//! - [`diagnostic`]: [`Diagnostic`], [`Severity`] and the stable [`Code`]s.
//! - [`skill`]: the canonical [`Skill`] record and its validated newtypes.
//! - [`skill_md`]: SKILL.md frontmatter and body, checked against the Agent Skills format and
//!   the GAIA extensions.
//! - [`index`]: agent-skills discovery indexes, v0.2 and v0.1 (and the variants in the wild).
//! - [`archive`]: safe listing and reading of `.tar.gz` and `.zip` skill archives.
//! - [`audit`]: the static safety audit of a skill's files: findings and a risk.
//! - [`fingerprint`]: one digest of all of a skill's files, the same for copies that differ
//!   only in line endings, trailing whitespace and frontmatter key order.
//! - [`sharing`]: skill-sharing indexes and descriptors.
//! - [`mcp`]: MCP servers' Skills Extension: request bodies, answers (JSON or event
//!   streams), listing entries checked against the specification, file checks.
//! - [`verdict`]: is this skill usable? The one judgement the directory, `validate` and the
//!   crawl report share.
//! - [`health`]: the publisher's health report (checks, score, which agent clients install
//!   from the origin) over what a crawl of a site found.
//! - [`license`]: the one name a published licence is counted and filtered under.
//! - [`normalize`]: index entry + fetched artifact -> [`Skill`] (and an MCP listing entry +
//!   the files read for it).
//! - [`site`]: the pipeline over one site (probes, indexes, artifacts, records) as a sans-IO
//!   state machine, driven over the network by the crawler and over a directory by `validate`.
//! - [`search_text`]: what search reads of a record besides its main fields (declared tools
//!   and inputs, headings).
//! - [`seeds`]: the seed file format.
//! - [`robots`]: robots.txt (RFC 9309) for the `skillscout` product token.
//!
//! # Invariants
//!
//! - Pure: no network, no file system, no database, no async runtime (`cargo tree -e normal -p
//!   formats` shows none of tokio, reqwest, rustls or redb).
//! - Parsing never panics and never fails as a whole because of one bad entry: problems
//!   become diagnostics on the entry or the index.
//! - Content whose digest does not match the published one never becomes a record's content.

pub mod archive;
pub mod audit;
pub mod diagnostic;
pub mod discover;
pub mod fingerprint;
pub mod health;
pub mod index;
pub mod license;
pub mod mcp;
pub mod normalize;
pub mod robots;
pub mod search_text;
pub mod seeds;
pub mod sharing;
pub mod site;
pub mod skill;
pub mod skill_md;
pub mod verdict;

pub use diagnostic::{Code, Diagnostic, Severity, VerdictKind};
pub use skill::{
    Access, Artifact, Digest, DigestStatus, Domain, FileEntry, Format, Skill, SkillId, SkillName,
    Slug, Verdict,
};
