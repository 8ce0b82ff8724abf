//! What the crate's unit tests share: records, and a directory over them in a temporary data
//! directory with an in-memory index.

use std::sync::Arc;

use formats::skill::{Artifact, DigestStatus};
use formats::{Access, Format, Skill, SkillId};
use indexer::{Index, IndexConfig};
use store::blobs::Blobs;
use store::{DomainStatus, Store};
use time::OffsetDateTime;
use url::Url;

use crate::{AppState, ServeConfig, Tokens};

/// The token the test directories accept.
pub(crate) const TOKEN: &str = "policy-test-token";

/// Returns an agent-skills record `{domain}/{name}` with short texts and no files.
pub(crate) fn record(id: &str, access: Access) -> Skill {
    let id: SkillId = id.parse().unwrap();
    let (domain, name) = (id.domain().clone(), id.slug().clone());
    Skill {
        format: Format::AgentSkills,
        title: format!("{name} title"),
        description: format!("The {name} skill does {name} things."),
        capability_type: "skill".to_owned(),
        access,
        version: Some("1.0.0".to_owned()),
        source_url: Url::parse(&format!("http://{domain}/{name}/SKILL.md")).unwrap(),
        index_url: Url::parse(&format!(
            "http://{domain}/.well-known/agent-skills/index.json"
        ))
        .unwrap(),
        artifact: Artifact::SkillMd,
        digest: None,
        digest_status: DigestStatus::Verified,
        frontmatter: serde_json::Map::new(),
        body: format!("Use {name} well."),
        files: Vec::new(),
        tags: Vec::new(),
        license: None,
        diagnostics: Vec::new(),
        risk: formats::audit::Risk::None,
        findings: Vec::new(),
        fingerprint: None,
        first_seen: OffsetDateTime::UNIX_EPOCH,
        last_seen: OffsetDateTime::UNIX_EPOCH,
        last_changed: OffsetDateTime::UNIX_EPOCH,
        id,
        domain,
        name,
    }
}

/// Returns the status of a crawl of the domain of `records` that read their index.
pub(crate) fn status_of(records: &[Skill]) -> DomainStatus {
    let now = OffsetDateTime::now_utc();
    DomainStatus {
        requests: 1,
        ..DomainStatus::read_ok(
            records[0].domain.clone(),
            format!("http://{}", records[0].domain),
            vec![Format::AgentSkills],
            vec![records[0].index_url.clone()],
            records.len(),
            now,
        )
    }
}

/// Returns a directory in `dir` whose store holds one crawl of `status.domain` (`records`),
/// indexed, with `blobs` as its blob store.
pub(crate) fn directory(
    dir: &std::path::Path,
    status: &DomainStatus,
    records: Vec<Skill>,
    blobs: Blobs,
) -> AppState {
    let store = Store::open(dir).unwrap();
    store
        .blocking()
        .apply_domain(status, records, OffsetDateTime::now_utc())
        .unwrap();
    let config = IndexConfig {
        writer_memory_bytes: 20_000_000,
        writer_threads: Some(1),
        ..IndexConfig::default()
    };
    let Index { mut writer, search } = Index::create_in_ram(config).unwrap();
    indexer::sync(&store, &mut writer).unwrap();
    search.reload().unwrap();
    AppState::new(
        search,
        Arc::new(store),
        blobs,
        Tokens::from_list([TOKEN]),
        ServeConfig::default(),
    )
}
