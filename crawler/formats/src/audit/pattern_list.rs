//! A list of patterns tried in order, as the rules keep them: which one matches first decides
//! what is reported. One pass of a `RegexSet` says which patterns can match at all, so a piece
//! of text that none of them fits costs one scan instead of one per pattern.

use regex::{Match, Regex, RegexSet};

/// Patterns tried in order.
pub(crate) struct PatternList {
    set: RegexSet,
    each: Vec<Regex>,
}

impl PatternList {
    /// Returns the list of `each`, which are the rules' own patterns and valid together.
    pub(crate) fn new(each: Vec<Regex>) -> PatternList {
        PatternList {
            set: RegexSet::new(each.iter().map(Regex::as_str)).expect("the patterns are valid"),
            each,
        }
    }

    /// Returns the patterns that match somewhere in `text`, in order.
    pub(crate) fn matching<'a>(&'a self, text: &str) -> impl Iterator<Item = &'a Regex> + 'a {
        let matches = self.set.matches(text);
        self.each
            .iter()
            .enumerate()
            .filter(move |(index, _)| matches.matched(*index))
            .map(|(_, pattern)| pattern)
    }

    /// Returns the first match of the first pattern that matches.
    pub(crate) fn first<'t>(&self, text: &'t str) -> Option<Match<'t>> {
        self.matching(text).find_map(|pattern| pattern.find(text))
    }

    /// Returns the match that starts earliest, of any pattern.
    pub(crate) fn earliest<'t>(&self, text: &'t str) -> Option<Match<'t>> {
        self.matching(text)
            .filter_map(|pattern| pattern.find(text))
            .min_by_key(|found| found.start())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_tried_in_order() {
        let patterns = PatternList::new(
            ["b+", "a", "c"]
                .iter()
                .map(|pattern| Regex::new(pattern).unwrap())
                .collect(),
        );
        assert_eq!(patterns.first("xabbc").map(|m| m.as_str()), Some("bb"));
        assert_eq!(patterns.earliest("xabbc").map(|m| m.as_str()), Some("a"));
        assert_eq!(patterns.first("xyz"), None);
    }
}
