//! What `skillscout validate` reports: the indexes read and the skills checked, whether they
//! came from a site on the network, a well-known tree on disk, or a lone skill folder.

use std::path::PathBuf;

use url::Url;

use formats::audit::{Finding, Risk};
use formats::diagnostic::Diagnostic;
use formats::health::Health;
use formats::index::IndexVersion;
use formats::site::SiteFindings;
use formats::skill::{Format, Skill};
use formats::verdict::{Judgement, judge};

/// One index that was read.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedIndex {
    /// The file it was read from (or its URL, for a site on the network).
    pub path: PathBuf,
    /// The URL it stands for.
    pub url: Url,
    /// Its protocol.
    pub format: Format,
    /// For agent-skills indexes, the version it was read as.
    pub version: Option<IndexVersion>,
    /// Problems with the index as a whole and with entries that were skipped.
    pub diagnostics: Vec<Diagnostic>,
}

/// One skill that was checked.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedSkill {
    /// The file its content came from (SKILL.md, archive or descriptor), or its index when
    /// the content could not be read; URLs for a site on the network.
    pub path: PathBuf,
    /// What to call it in messages: the record id, or the folder name.
    pub label: String,
    /// The normalised record; `None` when a lone SKILL.md or skill folder was checked.
    pub record: Option<Skill>,
    /// Everything found wrong with it.
    pub diagnostics: Vec<Diagnostic>,
    /// What the static safety audit makes of its files (the record's, or a lone folder's).
    pub risk: Risk,
    /// What the audit found, most severe first.
    pub findings: Vec<Finding>,
}

impl CheckedSkill {
    /// Returns the skill's verdict and what it rests on: the directory's judgement
    /// ([`formats::verdict::judge`]), from the record's digest status and the diagnostics.
    pub fn judgement(&self) -> Judgement<'_> {
        judge(
            self.record.as_ref().map(|record| record.digest_status),
            &self.diagnostics,
        )
    }
}

/// One site that was read (an origin, or a well-known tree on disk), with its publisher
/// health report: what the directory's publisher page will show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedSite {
    /// The URL that stands for the site.
    pub url: Url,
    /// The health report ([`formats::health`]).
    pub health: Health,
}

/// What was found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Checked {
    /// The indexes read.
    pub indexes: Vec<CheckedIndex>,
    /// The skills checked.
    pub skills: Vec<CheckedSkill>,
    /// The sites read, with their health reports.
    pub sites: Vec<CheckedSite>,
}

/// Where a site's findings are shown.
#[derive(Debug, Clone)]
pub struct SiteLabel {
    /// What to show for the site itself: its folder, index file, or origin.
    pub path: PathBuf,
    /// The URL that stands for the site.
    pub url: Url,
}

impl Checked {
    /// Returns the normalised records found.
    pub fn records(&self) -> impl Iterator<Item = &Skill> {
        self.skills.iter().filter_map(|skill| skill.record.as_ref())
    }

    /// Adds what one crawl of a site found, and its health report. Failures that belong to
    /// no index (robots.txt, a probe that failed) and the site's notes, then `more` (e.g. "no
    /// index here"), go on an entry for the site itself, shown only when there is something to
    /// say. `path_of` names the file (or URL) a URL of the site was read from, when there is
    /// one.
    pub fn add_site(
        &mut self,
        site: SiteLabel,
        found: SiteFindings,
        more: Vec<Diagnostic>,
        health: Health,
        path_of: impl Fn(&Url) -> Option<PathBuf>,
    ) {
        self.sites.push(CheckedSite {
            url: site.url.clone(),
            health,
        });
        let mut site_diagnostics: Vec<Diagnostic> = found
            .failures
            .iter()
            .map(|failure| failure.to_diagnostic())
            .collect();
        site_diagnostics.extend(found.notes);
        site_diagnostics.extend(more);
        if !site_diagnostics.is_empty() {
            self.indexes.push(CheckedIndex {
                path: site.path.clone(),
                url: site.url,
                format: Format::AgentSkills,
                version: None,
                diagnostics: site_diagnostics,
            });
        }
        for index in found.indexes {
            self.indexes.push(CheckedIndex {
                path: path_of(&index.url).unwrap_or_else(|| site.path.clone()),
                url: index.url,
                format: index.format,
                version: index.version,
                diagnostics: index.diagnostics,
            });
        }
        for record in found.records {
            let path = path_of(&record.source_url)
                .or_else(|| path_of(&record.index_url))
                .unwrap_or_else(|| site.path.clone());
            self.skills.push(CheckedSkill {
                path,
                label: record.id.to_string(),
                diagnostics: record.diagnostics.clone(),
                risk: record.risk,
                findings: record.findings.clone(),
                record: Some(record),
            });
        }
    }
}
