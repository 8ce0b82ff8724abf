//! Turning a [`Skill`] into an index document and back.
//!
//! The document holds the analysed text fields, the exact filter fields, and the whole record
//! as JSON, so that what comes out of the index is exactly what went in.

use std::collections::BTreeSet;

use formats::Skill;
use tantivy::TantivyDocument;
use tantivy::schema::Value;
use tantivy::tokenizer::{TextAnalyzer, TokenStream};

use crate::error::{Error, Result};
use crate::query::{MAX_INDEXED_PREFIX_CHARS, MIN_PREFIX_CHARS};
use crate::results::Listed;
use crate::schema::Fields;
use crate::tokenizer::key;

/// Returns the index document of `skill`; `words` is the unstemmed words analyzer, used to
/// list the word prefixes.
pub(crate) fn to_document(
    skill: &Skill,
    fields: &Fields,
    words: &mut TextAnalyzer,
) -> Result<TantivyDocument> {
    let record = serde_json::to_string(skill).map_err(|error| Error::CorruptRecord {
        id: skill.id.to_string(),
        message: error.to_string(),
    })?;
    let mut doc = TantivyDocument::new();
    doc.add_text(fields.id, skill.id.to_string());
    doc.add_text(fields.name_key, key(skill.name.as_str()));
    doc.add_text(fields.title_key, key(&skill.title));
    // `pdf-merge` is indexed as the words `pdf merge`.
    doc.add_text(fields.name, skill.name.as_str());
    doc.add_text(fields.title, &skill.title);
    doc.add_text(fields.description, &skill.description);
    // The body field holds the body and every other field's text: one field whose word
    // statistics are the collection's, so that a word common in names but rare overall (or
    // the reverse) weighs what it says about the whole record. See `query::FIELD_WEIGHTS`.
    doc.add_text(fields.body, &skill.body);
    for tag in &skill.tags {
        doc.add_text(fields.tags, tag);
        doc.add_text(fields.tag, tag.trim().to_lowercase());
    }
    if let Some(license) = &skill.license {
        doc.add_text(fields.tags, license);
    }
    let extra = skill.search_text();
    for text in &extra.tools {
        doc.add_text(fields.tools, text);
    }
    for text in &extra.headings {
        doc.add_text(fields.headings, text);
    }
    doc.add_text(fields.body, skill.name.as_str());
    for text in [&skill.title, &skill.description]
        .into_iter()
        .chain(&skill.tags)
        .chain(&extra.tools)
    {
        doc.add_text(fields.body, text);
    }
    for text in [skill.name.as_str(), &skill.title, &skill.description] {
        doc.add_text(fields.words, text);
    }
    for tag in &skill.tags {
        doc.add_text(fields.words, tag);
    }
    let mut prefixes = BTreeSet::new();
    let texts = [skill.name.as_str(), &skill.title, &skill.description];
    for text in texts
        .into_iter()
        .chain(skill.tags.iter().map(String::as_str))
    {
        let mut stream = words.token_stream(text);
        while let Some(token) = stream.next() {
            let mut prefix = String::new();
            for (count, c) in token
                .text
                .chars()
                .take(MAX_INDEXED_PREFIX_CHARS)
                .enumerate()
            {
                prefix.push(c);
                if count + 1 >= MIN_PREFIX_CHARS {
                    prefixes.insert(prefix.clone());
                }
            }
        }
    }
    for prefix in prefixes {
        doc.add_text(fields.prefixes, prefix);
    }
    doc.add_text(fields.capability_type, &skill.capability_type);
    doc.add_text(fields.access, skill.access.as_str());
    doc.add_text(fields.domain, skill.domain.as_str());
    doc.add_text(fields.format, skill.format.as_str());
    doc.add_text(fields.verdict, skill.verdict().as_str());
    doc.add_text(fields.risk, skill.risk.as_str());
    if let Some(fingerprint) = &skill.fingerprint {
        doc.add_text(fields.fingerprint, fingerprint.hex());
        doc.add_u64(
            fields.cluster_key,
            crate::clusters::cluster_key(fingerprint),
        );
    }
    doc.add_u64(fields.canonical, crate::clusters::canonical_rank(skill));
    if let Some(license) = &skill.license {
        // Counted and filtered under one name (`MIT` and `MIT License` are one licence).
        doc.add_text(fields.license, formats::license::key(license));
    }
    doc.add_text(fields.record, record);
    let listed = serde_json::to_vec(&Listed::of(skill)).map_err(|error| Error::CorruptRecord {
        id: skill.id.to_string(),
        message: error.to_string(),
    })?;
    doc.add_bytes(fields.listed, &listed);
    Ok(doc)
}

/// Returns the record stored in `doc`.
pub(crate) fn from_document(doc: &TantivyDocument, fields: &Fields) -> Result<Skill> {
    let Some(json) = doc
        .get_first(fields.record)
        .and_then(|value| value.as_str())
    else {
        return Err(Error::CorruptRecord {
            id: "(unknown)".to_owned(),
            message: "the document has no stored record".to_owned(),
        });
    };
    serde_json::from_str(json).map_err(|error| Error::CorruptRecord {
        id: serde_json::from_str::<serde_json::Value>(json)
            .ok()
            .and_then(|value| value.get("id")?.as_str().map(str::to_owned))
            .unwrap_or_else(|| "(unknown)".to_owned()),
        message: error.to_string(),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use formats::{Access, Artifact, DigestStatus, FileEntry, Format};
    use proptest::prelude::*;
    use time::OffsetDateTime;
    use url::Url;

    use super::*;
    use crate::schema;

    /// Builds a record for tests. The crawler's normaliser is the only producer of records in
    /// the product; tests build them directly to control every field.
    pub(crate) fn skill(domain: &str, name: &str, title: &str, description: &str) -> Skill {
        let id: formats::SkillId = format!("{domain}/{name}").parse().unwrap();
        let url = Url::parse(&format!(
            "https://{domain}/.well-known/skills/{name}/SKILL.md"
        ))
        .unwrap();
        Skill {
            domain: id.domain().clone(),
            name: id.slug().clone(),
            id,
            format: Format::AgentSkills,
            title: title.to_owned(),
            description: description.to_owned(),
            capability_type: "skill".to_owned(),
            access: Access::Public,
            version: None,
            source_url: url,
            index_url: Url::parse(&format!("https://{domain}/.well-known/skills/index.json"))
                .unwrap(),
            artifact: Artifact::SkillMd,
            digest: None,
            digest_status: DigestStatus::Absent,
            frontmatter: serde_json::Map::new(),
            body: String::new(),
            files: vec![FileEntry {
                path: "SKILL.md".to_owned(),
                size: Some(10),
                sha256: None,
            }],
            tags: Vec::new(),
            license: None,
            diagnostics: Vec::new(),
            risk: formats::audit::Risk::None,
            findings: Vec::new(),
            fingerprint: None,
            first_seen: OffsetDateTime::UNIX_EPOCH,
            last_seen: OffsetDateTime::UNIX_EPOCH,
            last_changed: OffsetDateTime::UNIX_EPOCH,
        }
    }

    fn round_trip(skill: &Skill) -> Skill {
        let (_, fields) = schema::build();
        let doc = to_document(skill, &fields, &mut crate::tokenizer::words_analyzer()).unwrap();
        from_document(&doc, &fields).unwrap()
    }

    #[test]
    fn a_record_comes_back_unchanged() {
        let mut record = skill("example.test", "pdf-merge", "PDF Merge", "Merges PDFs.");
        record.tags = vec!["PDF".to_owned(), "documents".to_owned()];
        record.license = Some("MIT".to_owned());
        record.body = "# Merge\n\nUse `qpdf`.\n".to_owned();
        record
            .frontmatter
            .insert("name".to_owned(), "pdf-merge".into());
        assert_eq!(round_trip(&record), record);
    }

    #[test]
    fn a_document_without_a_record_is_an_error() {
        let (_, fields) = schema::build();
        let error = from_document(&TantivyDocument::new(), &fields).unwrap_err();
        assert!(matches!(error, Error::CorruptRecord { .. }), "{error}");
    }

    fn arb_skill() -> impl Strategy<Value = Skill> {
        (
            "[a-z][a-z0-9]{0,8}",
            "\\PC{0,20}",
            "\\PC{0,60}",
            "\\PC{0,80}",
            proptest::collection::vec("\\PC{1,10}", 0..3),
            proptest::option::of("[A-Za-z0-9.-]{1,12}"),
            prop_oneof![
                Just(Access::Public),
                Just(Access::Restricted),
                Just(Access::Private)
            ],
            proptest::option::of("[0-9]\\.[0-9]\\.[0-9]"),
            0i64..4_000_000_000,
        )
            .prop_map(
                |(name, title, description, body, tags, license, access, version, secs)| {
                    let mut record = skill("example.test", &name, &title, &description);
                    record.body = body;
                    record.tags = tags;
                    record.license = license;
                    record.access = access;
                    record.version = version;
                    let at = OffsetDateTime::from_unix_timestamp(secs).unwrap();
                    record.first_seen = at;
                    record.last_seen = at;
                    record.last_changed = at;
                    record
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn records_round_trip(record in arb_skill()) {
            prop_assert_eq!(round_trip(&record), record);
        }
    }
}
