//! One answer to "is this skill usable?": for every skill of the shared corpus, the verdict
//! the directory shows (the record a crawl makes), the one `skillscout validate` prints and
//! exits by (its check of the tree on disk) and the errors the crawl report and the domain's
//! status list for it come from one judgement ([`formats::verdict`]) and agree.

use std::collections::BTreeMap;

use crawler::crawl::{Reading, crawl_domain};
use crawler::fetch::Fetcher;
use crawler::local;
use formats::seeds::SeedTarget;
use formats::verdict::reported;
use formats::{Code, DigestStatus, Verdict};
use time::OffsetDateTime;

use crate::server::TestServer;
use crate::{corpus_dir, test_config};

#[tokio::test]
async fn the_directory_validate_and_the_report_agree_on_every_corpus_skill() {
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let server = TestServer::static_tree(corpus.clone()).await;
    let fetcher = Fetcher::new(test_config(&server).fetch, None).unwrap();
    let mut domains: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join(".well-known").is_dir())
        .collect();
    domains.sort();
    let (mut judged, mut invalid) = (0, 0);
    let mut disagreements = Vec::new();
    for dir in domains {
        let host = dir.file_name().unwrap().to_string_lossy().into_owned();
        let target: SeedTarget = format!("http://{host}").parse().unwrap();
        let crawled = crawl_domain(&fetcher, &target, Reading::EVERY_FILE, None, None).await;
        assert_eq!(crawled.status.errors_omitted, 0, "{host}: errors left out");
        // What `validate PATH` reads and judges.
        let checked = local::check_tree(&dir, OffsetDateTime::UNIX_EPOCH).unwrap();
        let validated: BTreeMap<&str, Verdict> = checked
            .skills
            .iter()
            .map(|skill| (skill.label.as_str(), skill.judgement().verdict))
            .collect();
        for record in &crawled.found.records {
            judged += 1;
            let id = record.id.to_string();
            let shown = record.verdict();
            if validated.get(id.as_str()) != Some(&shown) {
                disagreements.push(format!(
                    "{id}: the directory shows {shown}, validate says {:?}",
                    validated.get(id.as_str())
                ));
            }
            let mut listed: Vec<&str> = crawled
                .status
                .errors
                .iter()
                .filter(|error| error.record.as_ref() == Some(&record.id))
                .map(|error| error.code.as_str())
                .collect();
            let mut expected: Vec<&str> = record
                .diagnostics
                .iter()
                .filter(|diagnostic| reported(diagnostic))
                .map(|diagnostic| diagnostic.code.as_str())
                .collect();
            listed.sort_unstable();
            expected.sort_unstable();
            if listed != expected {
                disagreements.push(format!(
                    "{id}: the report lists {listed:?}, the judgement {expected:?}"
                ));
            }
            // Agent clients refuse a name that breaks the naming rule: such a skill is
            // invalid everywhere, and the report says why (`-21risk-automation`,
            // `Apollo Automation`).
            let bad_name = record
                .diagnostics
                .iter()
                .any(|diagnostic| diagnostic.code == Code::InvalidName);
            if bad_name && (shown != Verdict::Invalid || !listed.contains(&"invalid_name")) {
                disagreements.push(format!("{id}: a name clients refuse, shown as {shown}"));
            }
            if shown == Verdict::Invalid {
                invalid += 1;
                let content_never_had = matches!(
                    record.digest_status,
                    DigestStatus::Mismatch | DigestStatus::Unfetched
                );
                if listed.is_empty() && !content_never_had {
                    disagreements.push(format!("{id}: invalid, and the report says nothing"));
                }
            }
        }
    }
    assert!(judged > 100, "only {judged} skills judged");
    assert!(
        invalid >= 17,
        "{invalid} invalid skills: the test proves little"
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}
