//! HTML building blocks: escaping, the page layout and its style sheet, small components.
//!
//! Every text that comes from a record, a request or a crawl goes through [`escape`], the one
//! HTML escaper of the server; [`marked`] makes a snippet's matches `<mark>` elements around
//! escaped text (for pages and for the JSON `snippet` field alike).

use std::fmt::Write as _;

use indexer::Snippet;

/// Escapes text for HTML element content and quoted attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Returns a snippet as HTML: its text escaped, each match in a `<mark>` element.
pub(crate) fn marked(snippet: &Snippet) -> String {
    let mut out = String::with_capacity(snippet.text.len() + 16 * snippet.marks.len());
    for (text, is_match) in snippet.segments() {
        if is_match {
            let _ = write!(out, "<mark>{}</mark>", escape(text));
        } else {
            out.push_str(&escape(text));
        }
    }
    out
}

/// The style sheet, inlined in every page (one request per page, no build step).
const STYLE: &str = r#"
:root{--fg:#1d2330;--muted:#5d6675;--line:#e3e6ec;--bg:#f6f7f9;--card:#fff;--accent:#2357d9;--mark:#fff1a8}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
header.top{background:#172033;color:#fff}
header.top .bar{max-width:1100px;margin:0 auto;padding:12px 20px;display:flex;gap:24px;align-items:center}
header.top a{color:#fff}header.top .brand{font-weight:700;font-size:18px}
header.top nav{display:flex;gap:16px;font-size:14px;opacity:.9}
main{max-width:1100px;margin:0 auto;padding:20px}
form.search{display:flex;gap:8px;margin:8px 0 18px}
form.search input[type=search]{flex:1;padding:10px 12px;font-size:16px;border:1px solid #c8cdd6;border-radius:8px}
form.search button{padding:10px 18px;font-size:15px;border:0;border-radius:8px;background:var(--accent);color:#fff;cursor:pointer}
.layout{display:grid;grid-template-columns:230px 1fr;gap:24px}
@media(max-width:760px){.layout{grid-template-columns:1fr}}
aside h3{font-size:12px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);margin:16px 0 6px}
aside ul{list-style:none;margin:0;padding:0}aside li{display:flex;justify-content:space-between;font-size:14px;padding:2px 0}
aside li.on a{font-weight:700}aside .count{color:var(--muted)}
.summary{color:var(--muted);margin-bottom:10px}
.chips{margin:0 0 12px}.chip{display:inline-block;background:#e8eefc;border-radius:14px;padding:2px 10px;margin:0 6px 6px 0;font-size:13px}
.hit,.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px;margin-bottom:12px}
.hit h2{font-size:17px;margin:0 0 2px}.id{color:var(--muted);font-size:13px;font-family:ui-monospace,monospace}
.hit p{margin:6px 0 0}mark{background:var(--mark);padding:0 1px}
.badge{display:inline-block;font-size:12px;border-radius:4px;padding:0 6px;margin-right:4px;border:1px solid var(--line);background:#f1f3f6;color:#333}
.badge.public{background:#e6f6ea;border-color:#bfe3c8}.badge.restricted{background:#fff4e0;border-color:#f0d49c}.badge.private{background:#fde8e8;border-color:#f2bcbc}
.badge.ok{background:#e6f6ea}.badge.error,.badge.unreachable{background:#fde8e8}.badge.not_found,.badge.disallowed{background:#fff4e0}
.pages{display:flex;gap:12px;margin:16px 0}
table{border-collapse:collapse;width:100%;background:var(--card);font-size:14px}
th,td{text-align:left;padding:6px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600;white-space:nowrap}
pre{background:#0f1623;color:#e6e9ef;padding:12px;border-radius:8px;overflow:auto;font-size:13px;max-height:520px;white-space:pre-wrap;word-break:break-word}
.diag{font-size:14px;margin:4px 0}.sev-error{color:#b42318;font-weight:600}.sev-warning{color:#a15c00;font-weight:600}.sev-info{color:var(--muted)}
h1{font-size:24px;margin:6px 0}.lead{font-size:16px;color:#333}
.muted{color:var(--muted)}footer{max-width:1100px;margin:0 auto;padding:20px;color:var(--muted);font-size:13px}
"#;

/// Returns a whole page: `title` (text), `body` (HTML), the search box pre-filled with
/// `query`.
pub(crate) fn page(site: &str, title: &str, query: &str, body: &str) -> String {
    let mut out = String::with_capacity(body.len() + STYLE.len() + 1024);
    let _ = write!(
        out,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{title} · {site}</title><style>{STYLE}</style></head><body>\
         <header class=\"top\"><div class=\"bar\"><a class=\"brand\" href=\"/\">{site}</a>\
         <nav><a href=\"/\">Search</a><a href=\"/domains\">Domains</a>\
         <a href=\"/.well-known/skill-sharing\">skill-sharing index</a>\
         <a href=\"/v1/search\">JSON API</a></nav></div></header><main>\
         <form class=\"search\" action=\"/\" method=\"get\" role=\"search\">\
         <input type=\"search\" name=\"q\" value=\"{query}\" placeholder=\"Search skills: pdf, translate, csv…\" aria-label=\"Search skills\" maxlength=\"1000\">\
         <button type=\"submit\">Search</button></form>{body}</main>\
         <footer>Skills are listed as their publishers describe them; nothing is run. \
         Data: <a href=\"/v1/changes\">/v1/changes</a> · <a href=\"/metrics\">/metrics</a></footer>\
         </body></html>",
        site = escape(site),
        title = escape(title),
        query = escape(query),
    );
    out
}

/// Returns a badge.
pub(crate) fn badge(class: &str, text: &str) -> String {
    format!(
        "<span class=\"badge {}\">{}</span>",
        escape(class),
        escape(text)
    )
}
