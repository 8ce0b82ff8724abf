//! The search index (tantivy) over canonical skill records. Arrives with the search issue.
