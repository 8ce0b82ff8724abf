// skillscout: progressive enhancement of the server-rendered pages. Everything works
// without this file; with it, the search updates as you type (the URL follows, so a search
// can be shared and the back button works), and install snippets get copy buttons.
"use strict";
(function () {
  var form = document.querySelector("form[data-live-search]");
  var results = document.getElementById("results");
  var controller = null;
  var timer = null;

  function status(text) {
    var region = document.getElementById("live-status");
    if (region) region.textContent = text;
  }

  // Loads `url` (a search page) and swaps in its results, facets and hidden filters.
  function load(url, push) {
    if (controller) controller.abort();
    controller = new AbortController();
    status("Searching…");
    fetch(url, { signal: controller.signal, headers: { Accept: "text/html" } })
      .then(function (response) {
        if (response.status === 503) {
          status("The directory is busy right now; try again in a moment.");
          return null;
        }
        return response.text().then(function (text) {
          return { ok: response.ok, text: text };
        });
      })
      .then(function (reply) {
        if (!reply) return;
        var doc = new DOMParser().parseFromString(reply.text, "text/html");
        var fresh = doc.getElementById("results");
        if (!fresh) {
          status("This search could not be shown; press Enter to see why.");
          return;
        }
        results = document.getElementById("results");
        results.replaceWith(document.adoptNode(fresh));
        results = fresh;
        form.querySelectorAll("input.keep").forEach(function (input) { input.remove(); });
        doc.querySelectorAll("form[data-live-search] input.keep").forEach(function (input) {
          form.insertBefore(document.adoptNode(input), form.querySelector("button"));
        });
        document.title = doc.title;
        if (push) history.pushState({ live: true }, "", url);
        else history.replaceState({ live: true }, "", url);
        var summary = fresh.querySelector(".summary");
        status(summary ? summary.textContent : "");
      })
      .catch(function (error) {
        if (error.name !== "AbortError") status("The search failed; check your connection.");
      });
  }

  function formUrl() {
    var params = new URLSearchParams(new FormData(form));
    if (!params.get("q")) params.delete("q");
    var query = params.toString();
    return "/" + (query ? "?" + query : "");
  }

  if (form && results) {
    var box = form.querySelector("input[name=q]");
    var typed = false;
    box.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        // The first keystroke of a search adds a history entry; the next ones replace it.
        load(formUrl(), !typed);
        typed = true;
      }, 250);
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      clearTimeout(timer);
      load(formUrl(), true);
      typed = false;
    });
    document.addEventListener("click", function (event) {
      var link = event.target.closest && event.target.closest("#results a[data-live]");
      if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
      event.preventDefault();
      typed = false;
      load(link.getAttribute("href"), true);
    });
    window.addEventListener("popstate", function () {
      var params = new URLSearchParams(location.search);
      box.value = params.get("q") || "";
      typed = false;
      load(location.pathname + location.search, false);
    });
  }

  // Copy buttons: their place is kept while hidden (no layout shift); shown only where the
  // clipboard can be used.
  document.querySelectorAll("button.copy[data-copy]").forEach(function (button) {
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source || !navigator.clipboard) return;
    button.removeAttribute("data-pending");
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(source.textContent).then(function () {
        button.textContent = "Copied";
        setTimeout(function () { button.textContent = "Copy"; }, 1500);
      });
    });
  });

  // "Recrawl now": asks the JSON API instead of posting the form, says what it answered, then
  // watches the publisher's status until the crawl lands and says what it found, without a
  // reload. Without script the form posts and the page comes back with a notice.
  var recrawl = document.querySelector("form[data-recrawl]");
  if (recrawl && window.fetch) {
    var said = document.getElementById("recrawl-status");
    var before = recrawl.getAttribute("data-crawled-at");
    var say = function (text) { if (said) said.textContent = text; };
    var watch = function (tries) {
      if (tries <= 0) {
        say("The crawl has not landed yet; reload this page later to see it.");
        return;
      }
      fetch(recrawl.getAttribute("data-status"), { headers: { Accept: "application/json" }, cache: "no-store" })
        .then(function (response) { return response.ok ? response.json() : null; })
        .then(function (status) {
          if (status && status.crawled_at && status.crawled_at !== before) {
            say("Crawled just now: " + status.skills + " skills, outcome " + status.outcome +
              ". Reload the page to see the full report.");
            recrawl.setAttribute("data-crawled-at", status.crawled_at);
            before = status.crawled_at;
            return;
          }
          setTimeout(function () { watch(tries - 1); }, 1000);
        })
        .catch(function () { setTimeout(function () { watch(tries - 1); }, 1000); });
    };
    recrawl.addEventListener("submit", function (event) {
      event.preventDefault();
      say("Asking for a recrawl…");
      fetch(recrawl.getAttribute("data-recrawl"), { method: "POST" })
        .then(function (response) {
          return response.json().then(function (body) { return { status: response.status, body: body }; });
        })
        .then(function (reply) {
          if (reply.status === 202 && reply.body.state === "due") {
            say("Recrawl requested; waiting for the crawl…");
            watch(120);
          } else if (reply.body && reply.body.error) {
            say(reply.body.error.message);
          } else if (reply.body && reply.body.state === "delisted") {
            say("This site is delisted: it is not crawled.");
          } else {
            say("The directory answered " + reply.status + ".");
          }
        })
        .catch(function () { say("The directory could not be reached; try again."); });
    });
  }
})();
