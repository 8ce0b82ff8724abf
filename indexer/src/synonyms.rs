//! Abbreviations and close synonyms that skill text spells out differently from the people
//! who search for it: `k8s` and `kubernetes`, `db` and `database`, `PR` and `pull request`.
//!
//! The table is small and written by hand: each group lists words or short phrases that mean
//! the same in skill descriptions, and a query holding any of them also searches for the
//! others ([`SYNONYM_WEIGHT`]); a member of several words is searched for as a phrase, since
//! its words alone (`request` of `pull request`) mean other things. Only unambiguous pairs
//! belong here: `cv` (computer vision or résumé) and `cd` do not. A second, one-way table
//! names what a query implies: a `scanned` or `handwritten` document is read with OCR, while
//! OCR does not mean a scan; `asp net` or `net core`, typed without the dot, mean .NET.

/// How much a synonym counts beside a word the user typed: as much (measured: 0.3, 0.6, 0.8,
/// 1.0 and 1.5 were tried on the tuning sets; 1.0 ranked best).
pub(crate) const SYNONYM_WEIGHT: f32 = 1.0;

/// The groups, lowercase, words separated by single spaces.
const GROUPS: &[&[&str]] = &[
    &["k8s", "kubernetes"],
    &["db", "database"],
    &["dbs", "databases"],
    &["auth", "authentication"],
    &["authn", "authentication"],
    &["authz", "authorization"],
    &["pr", "pull request"],
    &["prs", "pull requests"],
    &["js", "javascript"],
    &["ts", "typescript"],
    &["py", "python"],
    &["ocr", "optical character recognition", "text recognition"],
    &["ci", "continuous integration"],
    &["e2e", "end to end"],
    &["i18n", "internationalization", "localization"],
    &["l10n", "localization"],
    &["a11y", "accessibility"],
    &["llm", "large language model"],
    &["llms", "large language models"],
    &["ml", "machine learning"],
    &["nlp", "natural language processing"],
    &["ui", "user interface"],
    &["ux", "user experience"],
    &["repo", "repository"],
    &["repos", "repositories"],
    &["infra", "infrastructure"],
    &["iac", "infrastructure as code"],
    &["tf", "terraform"],
    &["gh", "github"],
    &["2fa", "two factor authentication", "mfa"],
    &["sso", "single sign on"],
    &["rls", "row level security"],
    &["seo", "search engine optimization"],
    &["crm", "customer relationship management"],
    &["gcp", "google cloud"],
    &["aws", "amazon web services"],
    &["vm", "virtual machine"],
    &["regex", "regular expression"],
    &["cli", "command line"],
    &["xlsx", "excel"],
    &["docx", "word document"],
    &["pptx", "powerpoint"],
    &["md", "markdown"],
    &["perf", "performance"],
    &["deps", "dependencies"],
    &["env", "environment"],
    &["config", "configuration"],
    &["docs", "documentation"],
    &["postgres", "postgresql"],
    &["rn", "react native"],
    &["tts", "text to speech"],
    &["stt", "speech to text", "transcription"],
    &["rag", "retrieval augmented generation"],
    &["mcp", "model context protocol"],
    &["tdd", "test driven development"],
    &["soc2", "soc 2"],
    &["cta", "call to action"],
    &["ctas", "calls to action"],
    &["eda", "exploratory data analysis"],
    &["pii", "personally identifiable information"],
    &["nda", "non disclosure agreement"],
    &["ndas", "non disclosure agreements"],
    &["kpi", "key performance indicator"],
    &["kpis", "key performance indicators"],
    &["roi", "return on investment"],
    &["faq", "frequently asked questions"],
    &["xss", "cross site scripting"],
    &["csrf", "cross site request forgery"],
    &["jwt", "json web token"],
    &["rbac", "role based access control"],
    &["orm", "object relational mapping"],
    &["cdn", "content delivery network"],
    &["iam", "identity and access management"],
    &["wcag", "web content accessibility guidelines"],
];

/// Words (or phrases) that imply others, searched one way only: a kind of input whose
/// handling has its own name in skill text (a scanned document is read with OCR, but OCR
/// does not mean a scan), and .NET typed without its dot. The tokenizer reads `.NET` as
/// `dotnet`; a bare `net` is no product (net income, a safety net) except beside these
/// words, and a query that wrote the dot already finds what these add.
const IMPLIES: &[(&str, &[&str])] = &[
    ("scanned", &["ocr"]),
    ("handwritten", &["ocr"]),
    ("handwriting", &["ocr"]),
    ("asp net", &["asp dotnet"]),
    ("aspnet", &["asp dotnet"]),
    ("ado net", &["ado dotnet"]),
    ("net core", &["dotnet core"]),
    ("net framework", &["dotnet framework"]),
    ("net sdk", &["dotnet sdk"]),
    // Versions since .NET 5 typed without the dot: glued, as in target frameworks
    // (`net8.0`), or with a space, but for `net 7` and `net 10`, which are also payment terms.
    ("net 5", &["dotnet 5"]),
    ("net 6", &["dotnet 6"]),
    ("net 8", &["dotnet 8"]),
    ("net 9", &["dotnet 9"]),
    ("net5", &["dotnet 5"]),
    ("net6", &["dotnet 6"]),
    ("net7", &["dotnet 7"]),
    ("net8", &["dotnet 8"]),
    ("net9", &["dotnet 9"]),
    ("net10", &["dotnet 10"]),
];

/// Returns the synonyms of what `words` (a query's lowercased words, in order) holds: for
/// every group member found (a word, or a phrase as consecutive words), the group's other
/// members, then what the query implies (`IMPLIES`); each once and never one the query
/// already holds.
pub(crate) fn expansions(words: &[String]) -> Vec<&'static str> {
    let text = format!(" {} ", words.join(" "));
    let present = |member: &str| text.contains(&format!(" {member} "));
    let mut out: Vec<&'static str> = Vec::new();
    for group in GROUPS {
        if !group.iter().any(|member| present(member)) {
            continue;
        }
        for member in group.iter().filter(|member| !present(member)) {
            if !out.contains(member) {
                out.push(member);
            }
        }
    }
    for (typed, implied) in IMPLIES {
        if present(typed) {
            for member in *implied {
                if !present(member) && !out.contains(member) {
                    out.push(member);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn abbreviations_and_phrases_expand_both_ways() {
        assert_eq!(expansions(&words("deploy to k8s")), ["kubernetes"]);
        assert_eq!(expansions(&words("kubernetes manifests")), ["k8s"]);
        assert_eq!(expansions(&words("review my pr")), ["pull request"]);
        assert_eq!(
            expansions(&words("review this pull request please")),
            ["pr"]
        );
        assert_eq!(
            expansions(&words("ocr a scan")),
            ["optical character recognition", "text recognition"]
        );
        assert_eq!(
            expansions(&words("db auth")),
            ["database", "authentication"]
        );
        assert_eq!(
            expansions(&words("a rag pipeline")),
            ["retrieval augmented generation"]
        );
        assert_eq!(expansions(&words("get ready for soc 2")), ["soc2"]);
        assert_eq!(
            expansions(&words("a model context protocol server")),
            ["mcp"]
        );
    }

    #[test]
    fn net_typed_without_its_dot_is_dotnet_beside_its_products() {
        assert_eq!(
            expansions(&words("asp net core api")),
            ["asp dotnet", "dotnet core"]
        );
        assert_eq!(expansions(&words("an aspnet app")), ["asp dotnet"]);
        assert_eq!(expansions(&words("install the net sdk")), ["dotnet sdk"]);
        assert_eq!(expansions(&words("upgrade to net 8")), ["dotnet 8"]);
        assert_eq!(expansions(&words("a net8 worker")), ["dotnet 8"]);
        assert_eq!(expansions(&words("net10 0 target")), ["dotnet 10"]);
        // Payment terms are no version.
        assert!(expansions(&words("net 30 payment terms")).is_empty());
        assert!(expansions(&words("invoices due net 10")).is_empty());
        // One way: `ASP.NET Core` and `.NET Framework` as the tokenizer reads them.
        assert!(expansions(&words("asp dotnet core")).is_empty());
        assert!(expansions(&words("dotnet framework")).is_empty());
        // Alone, `net` is no product.
        assert!(expansions(&words("net income and net promoter score")).is_empty());
    }

    #[test]
    fn implied_words_expand_one_way() {
        assert_eq!(expansions(&words("a scanned contract")), ["ocr"]);
        assert_eq!(expansions(&words("scanned handwritten notes")), ["ocr"]);
        // Nothing the query holds, and nothing back: OCR is not a scan.
        assert_eq!(
            expansions(&words("ocr the scanned page")),
            ["optical character recognition", "text recognition"]
        );
        assert_eq!(
            expansions(&words("ocr a page")),
            ["optical character recognition", "text recognition"]
        );
        // Only the word itself: `scanning` a repository for secrets is no OCR.
        assert!(expansions(&words("scanning for secrets")).is_empty());
    }

    #[test]
    fn only_whole_words_match() {
        // `js` inside `json`, `pr` inside `print`, `ml` inside `html`: no expansion.
        assert!(expansions(&words("parse json and print html")).is_empty());
        assert!(expansions(&words("")).is_empty());
    }

    #[test]
    fn nothing_the_query_holds_is_added_again() {
        assert_eq!(expansions(&words("k8s kubernetes")), Vec::<&str>::new());
    }

    #[test]
    fn the_table_is_well_formed() {
        let well_written = |member: &str| {
            assert_eq!(member, member.to_lowercase(), "{member}");
            assert_eq!(
                member.split_whitespace().collect::<Vec<_>>().join(" "),
                member
            );
        };
        for (typed, implied) in IMPLIES {
            well_written(typed);
            assert!(!implied.is_empty() && !implied.contains(typed), "{typed}");
            implied.iter().for_each(|member| well_written(member));
        }
        for group in GROUPS {
            assert!(group.len() >= 2, "{group:?}");
            group.iter().for_each(|member| well_written(member));
        }
    }
}
