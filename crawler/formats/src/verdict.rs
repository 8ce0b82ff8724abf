//! Is this skill usable? The one answer, asked by the directory (every page, endpoint and
//! filter that shows a verdict), by `skillscout validate` (which prints it and exits by it) and
//! by the crawl report (which lists the diagnostics it rests on).
//!
//! A skill is judged by its content: a digest that does not match, or an artifact never
//! fetched, makes it `invalid`, and so does any diagnostic about the skill that agent clients
//! refuse (an error under the lenient view, a name that breaks the naming rule among them).
//! Strict errors that clients ignore make it `lenient`. Problems of its index entry (a field
//! `skills[…]`: a `sha256` field, a missing `capability_type`) are the index's and judge the
//! publisher's index, not the skill, except those that decide what the skill is: its name,
//! its digest and the paths its content comes from.

use crate::diagnostic::{Code, Diagnostic, Severity, VerdictKind};
use crate::skill::{DigestStatus, Verdict};

/// A skill's verdict and the diagnostics it rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement<'a> {
    /// What the directory shows and `validate` exits by.
    pub verdict: Verdict,
    /// Why the skill is not `valid`: for an `invalid` one, the diagnostics agent clients refuse
    /// it for (none when its artifact was never fetched or did not match its digest and no
    /// diagnostic says more); for a `lenient` one, its strict errors.
    pub reasons: Vec<&'a Diagnostic>,
}

impl Judgement<'_> {
    /// Returns true when the skill passes the check `kind`: the strict check only when it is
    /// `valid`, the lenient one unless it is `invalid`.
    pub fn passes(&self, kind: VerdictKind) -> bool {
        match kind {
            VerdictKind::Strict => self.verdict == Verdict::Valid,
            VerdictKind::Lenient => self.verdict != Verdict::Invalid,
        }
    }
}

/// Judges a skill from how far its artifact's digest could be checked (`None` for content
/// read from disk, which has no published digest to check) and its diagnostics.
pub fn judge(digest_status: Option<DigestStatus>, diagnostics: &[Diagnostic]) -> Judgement<'_> {
    let refused: Vec<&Diagnostic> = diagnostics.iter().filter(|d| refuses(d)).collect();
    let unusable = matches!(
        digest_status,
        Some(DigestStatus::Mismatch | DigestStatus::Unfetched)
    );
    if unusable || !refused.is_empty() {
        return Judgement {
            verdict: Verdict::Invalid,
            reasons: refused,
        };
    }
    let strict: Vec<&Diagnostic> = diagnostics
        .iter()
        .filter(|d| judges_the_skill(d) && d.severity_for(VerdictKind::Strict) == Severity::Error)
        .collect();
    let verdict = if strict.is_empty() {
        Verdict::Valid
    } else {
        Verdict::Lenient
    };
    Judgement {
        verdict,
        reasons: strict,
    }
}

/// Returns true when `diagnostic` judges the skill, not only its index entry: one found in the
/// skill's content, or on the entry's name, digest or paths.
pub fn judges_the_skill(diagnostic: &Diagnostic) -> bool {
    !is_entry_field(diagnostic.field.as_deref()) || decides_the_skill(diagnostic.code)
}

/// Returns true when `diagnostic` makes a skill `invalid`: it judges the skill and agent
/// clients refuse what it describes.
pub fn refuses(diagnostic: &Diagnostic) -> bool {
    judges_the_skill(diagnostic) && diagnostic.severity_for(VerdictKind::Lenient) == Severity::Error
}

/// Returns true when a crawl report lists `diagnostic` of a record among the domain's errors:
/// every error agent clients reject, whether it judges the skill ([`refuses`]) or its index
/// entry. Strict-only findings stay on the record.
pub fn reported(diagnostic: &Diagnostic) -> bool {
    diagnostic.severity_for(VerdictKind::Lenient) == Severity::Error
}

/// Returns true for the field path of an index entry (`skills[2].digest`).
pub fn is_entry_field(field: Option<&str>) -> bool {
    field.is_some_and(|field| field.starts_with("skills["))
}

/// Codes that judge the skill even when found on its index entry: its name, its digest and
/// the paths its content comes from.
fn decides_the_skill(code: Code) -> bool {
    matches!(
        code,
        Code::InvalidName | Code::DigestMismatch | Code::PathTraversal | Code::InvalidPath
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnostic(code: Code, field: &str) -> Diagnostic {
        Diagnostic::new(code, code.as_str()).at(field)
    }

    #[test]
    fn a_name_clients_refuse_makes_the_skill_invalid_wherever_it_was_found() {
        for field in ["skills[0].name", "frontmatter.name"] {
            let found = [diagnostic(Code::InvalidName, field)];
            let judged = judge(Some(DigestStatus::Verified), &found);
            assert_eq!(judged.verdict, Verdict::Invalid, "{field}");
            assert_eq!(judged.reasons, [&found[0]]);
            assert!(!judged.passes(VerdictKind::Lenient));
            assert!(reported(&found[0]));
        }
    }

    #[test]
    fn strict_errors_clients_ignore_make_it_lenient() {
        let found = [
            diagnostic(Code::UnknownField, "frontmatter.author"),
            diagnostic(Code::NameMismatch, "frontmatter.name"),
        ];
        let judged = judge(None, &found);
        assert_eq!(judged.verdict, Verdict::Lenient);
        assert_eq!(judged.reasons.len(), 2);
        assert!(judged.passes(VerdictKind::Lenient));
        assert!(!judged.passes(VerdictKind::Strict));
        assert!(!found.iter().any(reported));
    }

    #[test]
    fn the_index_entrys_problems_judge_the_index() {
        let found = [
            diagnostic(Code::MissingField, "skills[0].capability_type"),
            diagnostic(Code::Sha256Field, "skills[0].sha256"),
        ];
        let judged = judge(Some(DigestStatus::Absent), &found);
        assert_eq!(judged.verdict, Verdict::Valid);
        assert!(judged.reasons.is_empty());
        // The report still lists the entry's error: clients reject the entry.
        assert!(reported(&found[0]));
    }

    #[test]
    fn content_never_had_is_invalid() {
        for status in [DigestStatus::Mismatch, DigestStatus::Unfetched] {
            assert_eq!(judge(Some(status), &[]).verdict, Verdict::Invalid);
        }
        assert_eq!(judge(None, &[]).verdict, Verdict::Valid);
    }
}
