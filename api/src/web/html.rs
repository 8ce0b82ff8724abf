//! HTML building blocks: the page layout and small components.
//!
//! Pages are maud templates: every value interpolated with `(…)` is escaped by the template
//! engine, and markup that is already HTML must be wrapped in [`PreEscaped`] on purpose, which
//! only this module ([`trusted`]) and the markdown writer (`web::markdown`) do. Outside
//! templates, `markup::escape` is the one escaper.

use maud::{DOCTYPE, Markup, PreEscaped, html};

use crate::wire::rfc3339;

pub(crate) use crate::markup::marked;

/// What a page shows around its body.
pub(crate) struct Layout<'a> {
    /// The directory's name.
    pub(crate) site: &'a str,
    /// The page title (text).
    pub(crate) title: &'a str,
    /// Which entry of the navigation is current: `search`, `domains` or none.
    pub(crate) section: &'a str,
    /// The search form: the query and the filters it keeps (hidden fields), for the search
    /// page; other pages show an empty box.
    pub(crate) query: &'a str,
    /// `(name, value)` pairs the search form keeps as hidden fields.
    pub(crate) keep: &'a [(String, String)],
}

/// Returns a whole page.
pub(crate) fn page(layout: &Layout<'_>, body: Markup) -> Markup {
    let current = |section: &str| (layout.section == section).then_some("page");
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width,initial-scale=1";
                title { (layout.title) " · " (layout.site) }
                link rel="stylesheet" href=(super::assets::style_path());
                script src=(super::assets::script_path()) defer {}
            }
            body {
                a.skip href="#content" { "Skip to content" }
                header.top {
                    div.bar {
                        a.brand href="/" { (layout.site) }
                        nav aria-label="Site" {
                            a href="/" aria-current=[current("search")] { "Search" }
                            a href="/domains" aria-current=[current("domains")] { "Publishers" }
                            a href="/v1/search" { "JSON API" }
                        }
                    }
                }
                main id="content" tabindex="-1" {
                    form.search action="/" method="get" role="search" data-live-search {
                        label.visually-hidden for="q" { "Search skills" }
                        input #q type="search" name="q" value=(layout.query)
                            placeholder="Search skills: pdf, translate, csv…"
                            maxlength="1000" autocomplete="off";
                        @for (name, value) in layout.keep {
                            input.keep type="hidden" name=(name) value=(value);
                        }
                        button type="submit" { "Search" }
                    }
                    (body)
                }
                footer {
                    p {
                        "Skills are listed as their publishers describe them; nothing they publish is run here. "
                        "Data: " a href="/v1/changes" { "/v1/changes" } " · "
                        a href="/.well-known/skill-sharing" { "skill-sharing index" } " · "
                        a href="/metrics" { "/metrics" }
                    }
                }
            }
        }
    }
}

/// Returns a badge: `kind` picks its colours (a CSS class), `text` is shown.
pub(crate) fn badge(kind: &str, text: &str) -> Markup {
    html! { span class={ "badge " (kind) } { (text) } }
}

/// Returns a labelled badge, e.g. `access: public`, for screen readers and sighted readers
/// alike.
pub(crate) fn labelled_badge(label: &str, kind: &str, text: &str) -> Markup {
    html! { span class={ "badge " (kind) } title=(label) { span.visually-hidden { (label) ": " } (text) } }
}

/// Returns text in which `backticked` spans are code, as diagnostics and advice write them;
/// every part is escaped.
pub(crate) fn prose(text: &str) -> Markup {
    html! {
        @for (index, part) in text.split('`').enumerate() {
            @if index % 2 == 1 { code { (part) } } @else { (part) }
        }
    }
}

/// Returns a time as a `<time>` element: minutes in UTC for people, RFC 3339 for machines.
pub(crate) fn time(at: time::OffsetDateTime) -> Markup {
    let at = at.to_offset(time::UtcOffset::UTC);
    let shown = format!(
        "{:04}-{:02}-{:02} {:02}:{:02} UTC",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute()
    );
    html! { time datetime=(rfc3339(at)) { (shown) } }
}

/// Returns already-safe HTML (a snippet from [`marked`], rendered markdown) for a template.
pub(crate) fn trusted(html: String) -> Markup {
    PreEscaped(html)
}
