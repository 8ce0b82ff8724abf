//! The index schema: which fields exist, how each is analysed, and the version that says when
//! an index must be rebuilt.

use tantivy::schema::{
    FAST, Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};

use crate::tokenizer::{TEXT_ANALYZER, WORDS_ANALYZER};

/// The schema's version. Bump it whenever the fields, their analysis or the stored record
/// change: an index written with another version is rebuilt from the crawl store.
pub const SCHEMA_VERSION: u32 = 8;

/// Field names, shared by the schema, documents and the collectors that read fast fields.
pub(crate) mod names {
    pub(crate) const ID: &str = "id";
    pub(crate) const NAME_KEY: &str = "name_key";
    pub(crate) const TITLE_KEY: &str = "title_key";
    pub(crate) const NAME: &str = "name";
    pub(crate) const TITLE: &str = "title";
    pub(crate) const DESCRIPTION: &str = "description";
    pub(crate) const BODY: &str = "body";
    pub(crate) const TAGS: &str = "tags";
    pub(crate) const TOOLS: &str = "tools";
    pub(crate) const HEADINGS: &str = "headings";
    pub(crate) const WORDS: &str = "words";
    pub(crate) const PREFIXES: &str = "prefixes";
    pub(crate) const CAPABILITY_TYPE: &str = "capability_type";
    pub(crate) const ACCESS: &str = "access";
    pub(crate) const DOMAIN: &str = "domain";
    pub(crate) const FORMAT: &str = "format";
    pub(crate) const TAG: &str = "tag";
    pub(crate) const LICENSE: &str = "license";
    pub(crate) const VERDICT: &str = "verdict";
    pub(crate) const RISK: &str = "risk";
    pub(crate) const FINGERPRINT: &str = "fingerprint";
    pub(crate) const CLUSTER_KEY: &str = "cluster_key";
    pub(crate) const CANONICAL: &str = "canonical";
    pub(crate) const RECORD: &str = "record";
    pub(crate) const LISTED: &str = "listed";
    pub(crate) const VECTOR: &str = "vector";
}

/// The field handles of the schema, resolved once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields {
    /// `{domain}/{slug}`, raw: the key for upserts and deletes, and the listing order.
    pub(crate) id: Field,
    /// [`key`](crate::tokenizer::key) of the name, for the exact and prefix tiers.
    pub(crate) name_key: Field,
    /// [`key`](crate::tokenizer::key) of the title, for the exact and prefix tiers.
    pub(crate) title_key: Field,
    /// The name's words, analysed.
    pub(crate) name: Field,
    /// The title, analysed.
    pub(crate) title: Field,
    /// The description, analysed.
    pub(crate) description: Field,
    /// The SKILL.md body and the text of every other field, analysed (without positions:
    /// phrases are matched in the short fields only, which keeps the index small).
    pub(crate) body: Field,
    /// The tags and the licence, analysed.
    pub(crate) tags: Field,
    /// Declared tools and inputs ([`formats::search_text::SearchText::tools`]), analysed.
    pub(crate) tools: Field,
    /// The SKILL.md headings, analysed.
    pub(crate) headings: Field,
    /// Name, title, description and tags, unstemmed: for typos and long prefixes.
    pub(crate) words: Field,
    /// The prefixes (2 to 10 characters) of the words in `words`, for search as you type.
    pub(crate) prefixes: Field,
    /// Exact, lowercased filter and facet values.
    pub(crate) capability_type: Field,
    /// `public`, `restricted` or `private`.
    pub(crate) access: Field,
    /// The record's domain.
    pub(crate) domain: Field,
    /// `agent-skills` or `skill-sharing`.
    pub(crate) format: Field,
    /// Each tag, lowercased (multi-valued).
    pub(crate) tag: Field,
    /// The licence, lowercased.
    pub(crate) license: Field,
    /// The record's verdict: `valid`, `lenient` or `invalid`.
    pub(crate) verdict: Field,
    /// The record's risk: `none`, `low`, `medium`, `high` or `critical`.
    pub(crate) risk: Field,
    /// The content fingerprint, 64 hex characters (none when the record has none): what
    /// copies of one skill share ([`crate::clusters`]).
    pub(crate) fingerprint: Field,
    /// The fingerprint's first 8 bytes as a number, a fast field: copies are found by it, and
    /// told apart by the whole fingerprint when two fingerprints share it.
    pub(crate) cluster_key: Field,
    /// Which copy of a skill is shown for its cluster, a fast field, lowest first
    /// ([`crate::clusters::canonical_rank`]).
    pub(crate) canonical: Field,
    /// The whole record as JSON, for lossless read-back.
    pub(crate) record: Field,
    /// The record's listing view ([`crate::Listed`]) as JSON, a fast (column) field: a
    /// listing reads it without loading the stored record, body and all.
    pub(crate) listed: Field,
    /// The record's sentence vector ([`crate::semantic`]), when the index is written with a
    /// model: a fast (column) field, read into memory per segment.
    pub(crate) vector: Field,
}

/// Returns the schema and its field handles.
pub(crate) fn build() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let exact = STRING | FAST;
    let analysed = |positions: bool| {
        let record = if positions {
            IndexRecordOption::WithFreqsAndPositions
        } else {
            IndexRecordOption::WithFreqs
        };
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TEXT_ANALYZER)
                .set_index_option(record),
        )
    };
    let words = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(WORDS_ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let prefixes = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer("raw")
            .set_fieldnorms(false)
            .set_index_option(IndexRecordOption::Basic),
    );
    let fields = Fields {
        id: builder.add_text_field(names::ID, exact.clone()),
        name_key: builder.add_text_field(names::NAME_KEY, exact.clone()),
        title_key: builder.add_text_field(names::TITLE_KEY, exact.clone()),
        name: builder.add_text_field(names::NAME, analysed(true)),
        title: builder.add_text_field(names::TITLE, analysed(true)),
        description: builder.add_text_field(names::DESCRIPTION, analysed(true)),
        body: builder.add_text_field(names::BODY, analysed(false)),
        tags: builder.add_text_field(names::TAGS, analysed(true)),
        tools: builder.add_text_field(names::TOOLS, analysed(true)),
        headings: builder.add_text_field(names::HEADINGS, analysed(true)),
        words: builder.add_text_field(names::WORDS, words),
        prefixes: builder.add_text_field(names::PREFIXES, prefixes),
        capability_type: builder.add_text_field(names::CAPABILITY_TYPE, exact.clone()),
        access: builder.add_text_field(names::ACCESS, exact.clone()),
        domain: builder.add_text_field(names::DOMAIN, exact.clone()),
        format: builder.add_text_field(names::FORMAT, exact.clone()),
        tag: builder.add_text_field(names::TAG, exact.clone()),
        license: builder.add_text_field(names::LICENSE, exact.clone()),
        verdict: builder.add_text_field(names::VERDICT, exact.clone()),
        risk: builder.add_text_field(names::RISK, exact.clone()),
        fingerprint: builder.add_text_field(names::FINGERPRINT, exact),
        cluster_key: builder.add_u64_field(names::CLUSTER_KEY, FAST),
        canonical: builder.add_u64_field(names::CANONICAL, FAST),
        record: builder.add_text_field(names::RECORD, STORED),
        listed: builder.add_bytes_field(names::LISTED, FAST),
        vector: builder.add_bytes_field(names::VECTOR, FAST),
    };
    (builder.build(), fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_name_is_in_the_schema() {
        let (schema, fields) = build();
        for (name, field) in [
            (names::ID, fields.id),
            (names::NAME_KEY, fields.name_key),
            (names::TITLE_KEY, fields.title_key),
            (names::NAME, fields.name),
            (names::TITLE, fields.title),
            (names::DESCRIPTION, fields.description),
            (names::BODY, fields.body),
            (names::TAGS, fields.tags),
            (names::TOOLS, fields.tools),
            (names::HEADINGS, fields.headings),
            (names::WORDS, fields.words),
            (names::PREFIXES, fields.prefixes),
            (names::CAPABILITY_TYPE, fields.capability_type),
            (names::ACCESS, fields.access),
            (names::DOMAIN, fields.domain),
            (names::FORMAT, fields.format),
            (names::TAG, fields.tag),
            (names::LICENSE, fields.license),
            (names::VERDICT, fields.verdict),
            (names::RISK, fields.risk),
            (names::FINGERPRINT, fields.fingerprint),
            (names::CLUSTER_KEY, fields.cluster_key),
            (names::CANONICAL, fields.canonical),
            (names::RECORD, fields.record),
            (names::LISTED, fields.listed),
            (names::VECTOR, fields.vector),
        ] {
            assert_eq!(schema.get_field(name).unwrap(), field, "{name}");
        }
        // The facet fields are fast, so the collector can count them.
        for name in [
            names::ACCESS,
            names::TAG,
            names::ID,
            names::NAME_KEY,
            names::LISTED,
            names::VECTOR,
            names::RISK,
            names::FINGERPRINT,
            names::CLUSTER_KEY,
            names::CANONICAL,
        ] {
            let entry = schema.get_field_entry(schema.get_field(name).unwrap());
            assert!(entry.is_fast(), "{name}");
        }
    }
}
