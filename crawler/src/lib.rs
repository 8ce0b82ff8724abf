//! Fetching, politeness and the crawl loop over agent-skill publishers.
//!
//! Parsing and normalising live in the pure `formats` crate and the crawl state in `store`;
//! this crate is the part that talks to the outside world: it fetches (only [`fetch`] touches
//! the network), it reads trees on disk ([`local`]), and it runs many domains at once
//! ([`crawl`]). A site is crawled by one pipeline whatever it is: [`formats::site`] says
//! which URLs it wants, and [`crawl::domain`] answers over HTTP while [`local`] answers
//! from a directory, so `crawl`, `validate URL` and `validate PATH` run the same code.
//!
//! # Layout
//!
//! - [`local`]: reads a skill folder, a file, or a well-known tree from disk.
//! - [`check`]: what `validate` reports, from a site on the network or on disk.
//! - [`politeness`]: per-host turns and pauses, `Retry-After`, backoff.
//! - [`credentials`]: per-origin headers for a publisher's private skills.
//! - [`fetch`]: the only network code: SSRF guard, TLS, HTTP cache, capped bodies, redirects.
//! - [`crawl`]: many domains at once, each to the end, stored in batches; the crawl report.
//!
//! # Invariants
//!
//! - One bad site is data, not a crash: its failures become its report line and diagnostics.
//! - Nothing fetched is ever executed.

pub mod check;
pub mod crawl;
pub mod credentials;
pub mod error;
pub mod fetch;
pub mod local;
pub mod politeness;
pub mod publish;

pub use error::{Error, Result};
