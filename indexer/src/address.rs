//! Web addresses in a query, read for the words that say what the task is about.
//!
//! A task pasted into the search box often holds an address: `… can't finish checkout at
//! https://www.example.com/checkout`. Read as words, its scheme, `www` and top-level domain
//! match any text about the web, and a placeholder host matches skills named for examples.
//! The query keeps what may say something: the host's own labels (`github`, `shop`, `acme`)
//! and the path (`/acme/widget/actions`). It drops the scheme, `www`, the top-level domain
//! (and a registry's second level, `co` in `co.uk`), user info, the port, the query string
//! and the fragment, and the whole host when it is an IP address or a name reserved for
//! examples, testing or local networks (`example.com`, `*.test`, `localhost`: RFC 2606;
//! `*.local`: RFC 6762; `home.arpa`: RFC 8375; `*.internal`).
//!
//! Only what is plainly an address is read this way: text that starts with a scheme
//! (`https://`, `ftp://`) or with `www.`. A bare host (`nuget.org`) is left as written: it
//! cannot be told from a file name (`main.tf`, `p5.js`). An address ends where its host does
//! unless a path, query or fragment follows, and before a space, a quotation mark, an angle
//! bracket and the punctuation that ends a sentence around it.

use std::borrow::Cow;

/// Top-level domains reserved for examples, testing and local networks (RFC 2606, RFC 6762,
/// ICANN's `internal`).
const RESERVED_TLDS: [&str; 6] = [
    "example",
    "internal",
    "invalid",
    "local",
    "localhost",
    "test",
];
/// Domains reserved for examples (RFC 2606) and home networks (RFC 8375).
const RESERVED_DOMAINS: [&str; 4] = ["example.com", "example.net", "example.org", "home.arpa"];
/// Labels that registries of two-letter country domains put under them (`co.uk`, `com.au`,
/// `ac.jp`): generic, so dropped with the country.
const REGISTRY_LABELS: [&str; 10] = [
    "ac", "co", "com", "edu", "go", "gov", "ne", "net", "or", "org",
];

/// Returns `text` with every web address replaced by the words of it that say something,
/// as the module says. Text without an address is returned as it is; the text returned is
/// never longer, in bytes, than `text`.
pub(crate) fn words_of_addresses(text: &str) -> Cow<'_, str> {
    let mut found = addresses(text).peekable();
    if found.peek().is_none() {
        return Cow::Borrowed(text);
    }
    let mut read = String::with_capacity(text.len());
    let mut copied = 0;
    for address in found {
        read.push_str(&text[copied..address.start]);
        read.push(' ');
        read.push_str(words_of(&text[address.host..address.end]).trim_end());
        copied = address.end;
    }
    if copied < text.len() {
        read.push(' ');
        read.push_str(&text[copied..]);
    }
    Cow::Owned(read)
}

/// One address in a text, by byte offsets: where it starts (its scheme or its `www.`), where
/// its host starts, and where it ends.
struct Address {
    start: usize,
    host: usize,
    end: usize,
}

/// The addresses in `text`, in order and apart.
fn addresses(text: &str) -> impl Iterator<Item = Address> + '_ {
    let mut from = 0;
    std::iter::from_fn(move || {
        while from < text.len() {
            let (start, host) = next_start(text, from)?;
            let end = address_end(text, host);
            if end > host {
                from = end;
                return Some(Address { start, host, end });
            }
            from = host.max(start + 1);
        }
        None
    })
}

/// Where the next address at or after `from` starts (its scheme, or its `www.`), and where
/// its host starts.
fn next_start(text: &str, from: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut at = from;
    while at < bytes.len() {
        if bytes[at..].starts_with(b"://") {
            let scheme_start = text[from..at]
                .char_indices()
                .rev()
                .take_while(|&(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
                .last()
                .map_or(at, |(i, _)| from + i);
            // A scheme starts with a letter (RFC 3986) and is a word of its own.
            let scheme_start = text[scheme_start..at]
                .find(|c: char| c.is_ascii_alphabetic())
                .map(|i| scheme_start + i);
            if let Some(scheme_start) = scheme_start
                && starts_a_word(text, scheme_start)
            {
                return Some((scheme_start, at + 3));
            }
            at += 3;
        } else if bytes.len() - at >= 4
            && bytes[at..at + 4].eq_ignore_ascii_case(b"www.")
            && starts_a_word(text, at)
            && text[at + 4..].starts_with(char::is_alphanumeric)
        {
            return Some((at, at));
        } else {
            at += 1;
        }
    }
    None
}

/// True when `at` starts a word: the text's start, or after a character that is neither a
/// letter nor a digit nor one that joins a word to the next (`.`, `-`, `_`, `/`, `@`).
fn starts_a_word(text: &str, at: usize) -> bool {
    text[..at]
        .chars()
        .next_back()
        .is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | '/' | '@')))
}

/// The length in bytes of the authority at the start of `rest` (user info, host and port):
/// letters (of any script), digits and `.-_~%@:`, or an IPv6 address in brackets.
fn authority_len(rest: &str) -> usize {
    let mut len = 0;
    while let Some(c) = rest[len..].chars().next() {
        if c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | '~' | '%' | '@' | ':') {
            len += c.len_utf8();
        } else if c == '['
            && let Some(close) = rest[len..].find(']')
            && rest[len + 1..len + close]
                .chars()
                .all(|c| c.is_ascii_hexdigit() || matches!(c, ':' | '.'))
        {
            len += close + 1;
        } else {
            break;
        }
    }
    len
}

/// What ends an address's path besides a space: quotation marks (straight and typographic),
/// angle brackets and the other characters a pasted address never holds, and the brackets
/// and stops of CJK text.
const ADDRESS_ENDS: [char; 25] = [
    '"', '<', '>', '`', '|', '{', '}', '^', '\\', '\u{201C}', '\u{201D}', '\u{201E}', '\u{2018}',
    '\u{2019}', '«', '»', '「', '」', '『', '』', '（', '）', '。', '，', '、',
];

/// True for a character that ends an address's path ([`ADDRESS_ENDS`], or a space).
fn ends_an_address(c: char) -> bool {
    c.is_whitespace() || ADDRESS_ENDS.contains(&c)
}

/// Where the address whose host starts at `host` ends: after its authority, and after the
/// path, query and fragment that follow it, less the punctuation that ends a sentence.
fn address_end(text: &str, host: usize) -> usize {
    let rest = &text[host..];
    let mut end = authority_len(rest);
    if end == 0 {
        return host;
    }
    if rest[end..].starts_with(['/', '?', '#']) {
        end += rest[end..]
            .find(ends_an_address)
            .unwrap_or(rest.len() - end);
    }
    let trimmed = rest[..end].trim_end_matches(['.', ',', ';', ':', '!', '?', '\'', ')', ']', '}']);
    host + trimmed.len()
}

/// The words of one address from its host on: the host's labels, then the path,
/// percent-escapes decoded.
fn words_of(address: &str) -> String {
    let (authority, path) = address.split_at(authority_len(address));
    let path = &path[..path.find(['?', '#']).unwrap_or(path.len())];
    let host_and_port = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = if host_and_port.starts_with('[') {
        // An IPv6 address: local, or a number that says nothing.
        ""
    } else {
        host_and_port.split(':').next().unwrap_or_default()
    };
    let mut words = host_words(&host.to_lowercase());
    words.push(' ');
    words.push_str(&percent_decoded(path));
    words
}

/// The labels of a host that may say something, space-separated.
fn host_words(host: &str) -> String {
    let host = host.trim_end_matches('.');
    let mut labels: Vec<&str> = host.split('.').filter(|label| !label.is_empty()).collect();
    let is_ip = !labels.is_empty()
        && labels
            .iter()
            .all(|label| label.bytes().all(|b| b.is_ascii_digit()));
    let tld = labels.last().copied().unwrap_or_default();
    let reserved = RESERVED_TLDS.contains(&tld)
        || RESERVED_DOMAINS.iter().any(|domain| {
            host.strip_suffix(domain)
                .is_some_and(|above| above.is_empty() || above.ends_with('.'))
        });
    if is_ip || reserved {
        return String::new();
    }
    if labels.len() > 1 && labels[0] == "www" {
        labels.remove(0);
    }
    if labels.len() > 1 {
        labels.pop();
        if tld.len() == 2
            && labels.len() > 1
            && labels
                .last()
                .is_some_and(|label| REGISTRY_LABELS.contains(label))
        {
            labels.pop();
        }
    }
    labels.join(" ")
}

/// `text` with its percent-escapes (`%20`, `%C3%A9`) decoded; an escape that is not valid
/// UTF-8 becomes U+FFFD, a stray `%` stays, and a decoded control character or quotation
/// mark becomes a space (it would end the query's text or open a phrase).
fn percent_decoded(text: &str) -> Cow<'_, str> {
    if !text.contains('%') {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let escape = (bytes[at] == b'%')
            .then(|| bytes.get(at + 1..at + 3))
            .flatten()
            .filter(|hex| hex.iter().all(u8::is_ascii_hexdigit))
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escape {
            Some(byte) => {
                decoded.push(byte);
                at += 3;
            }
            None => {
                decoded.push(bytes[at]);
                at += 1;
            }
        }
    }
    Cow::Owned(
        String::from_utf8_lossy(&decoded)
            .chars()
            .map(|c| if c.is_control() || c == '"' { ' ' } else { c })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        words_of_addresses(text)
            .split(|c: char| !c.is_alphanumeric())
            .filter(|word| !word.is_empty())
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn an_address_keeps_its_host_labels_and_path() {
        assert_eq!(
            words("why is https://github.com/acme/widget/actions/runs/42 failing"),
            [
                "why", "is", "github", "acme", "widget", "actions", "runs", "42", "failing"
            ]
        );
        assert_eq!(
            words("checkout at https://shop.acme.co.uk:8443/cart/checkout?utm_source=mail#top."),
            ["checkout", "at", "shop", "acme", "cart", "checkout"]
        );
        assert_eq!(words("www.Nuget.org/packages"), ["nuget", "packages"]);
        assert_eq!(
            words("ftp://reader:secret@files.acme.org/pub/q3%20report.pdf"),
            ["files", "acme", "pub", "q3", "report", "pdf"]
        );
        assert_eq!(
            words("see <https://docs.rs/tantivy>"),
            ["see", "docs", "tantivy"]
        );
        assert_eq!(words("http://intranet/wiki"), ["intranet", "wiki"]);
        // Nothing is added after an address that ends the text: its last word is still the
        // query's last word, matched as a prefix while typing.
        assert!(words_of_addresses("see https://github.com/acme/wid").ends_with("/acme/wid"));
        assert_eq!(
            words("git+ssh://git.sr.ht/~me/repo"),
            ["git", "sr", "me", "repo"]
        );
        assert_eq!(words("HTTPS://WWW.GitHub.COM/Acme"), ["github", "Acme"]);
        assert_eq!(words("www.acme"), ["acme"]);
        // An address in the query string of another is part of it, and dropped with it.
        assert_eq!(
            words("www.acme.com/login?next=https://example.com/x"),
            ["acme", "login"]
        );
    }

    #[test]
    fn an_address_ends_where_the_text_around_it_says() {
        // Typographic quotes, pipes and Markdown links: the host ends at a character no
        // host holds, the path at a quotation mark.
        assert_eq!(
            words("“https://example.com” and “https://acme.io/docs”"),
            ["and", "acme", "docs"]
        );
        assert_eq!(words("|https://example.com|"), Vec::<String>::new());
        assert_eq!(
            words("[https://example.com](https://example.com) and [docs](https://acme.io/x)"),
            ["and", "docs", "acme", "x"]
        );
        // The quotes around an address stay, so a quoted phrase is still one.
        assert_eq!(
            words_of_addresses("\"https://acme.io\" setup")
                .matches('"')
                .count(),
            2
        );
    }

    #[test]
    fn percent_escapes_never_add_control_characters_or_quotes() {
        let read = words_of_addresses("https://acme.io/a%00b%1Bc%0Ad%22e%+7f");
        assert!(
            !read.contains(|c: char| c.is_control() || c == '"'),
            "{read:?}"
        );
        assert_eq!(words("https://acme.io/a%00b%22c"), ["acme", "a", "b", "c"]);
    }

    #[test]
    fn example_and_local_hosts_say_nothing() {
        for address in [
            "https://example.com/checkout",
            "https://www.example.org/checkout",
            "http://shop.example.net/checkout",
            "http://localhost:3000/checkout",
            "http://127.0.0.1/checkout",
            "http://[::1]:8080/checkout",
            "https://acme.test/checkout",
            "https://store.example/checkout",
            "http://printer.local/checkout",
            "http://router.home.arpa/checkout",
            "https://wiki.corp.internal/checkout",
        ] {
            assert_eq!(
                words(&format!("fix ({address})")),
                ["fix", "checkout"],
                "{address}"
            );
        }
    }

    #[test]
    fn only_plain_addresses_are_read() {
        for text in [
            "split main.tf and publish to nuget.org",
            "p5.js sketch, next.js app, ASP.NET",
            "a:// b ://c 3://x",
            "lowww.example and www. alone",
            "mail me at me@www.acme.com",
            "\u{11d3c}://",
            "ąhttps://github.com/acme",
        ] {
            assert!(
                matches!(words_of_addresses(text), Cow::Borrowed(_)),
                "{text}: {}",
                words_of_addresses(text)
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_reads_without_panicking_and_text_without_addresses_is_kept(
            text in "\\PC{0,60}|[a-zé\u{11d3c}:/.@%\\[\\]0-9w\"“” ]{0,40}",
        ) {
            let read = words_of_addresses(&text);
            proptest::prop_assert!(read.len() <= text.len(), "{:?} → {:?}", text, read);
            let added = |c: char| c.is_control() || c == '"';
            proptest::prop_assert!(
                read.chars().filter(|&c| added(c)).count()
                    <= text.chars().filter(|&c| added(c)).count()
            );
            let lower = text.to_lowercase();
            if !lower.contains("://") && !lower.contains("www.") {
                proptest::prop_assert_eq!(read.as_ref(), text.as_str());
            }
        }
    }
}
