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
})();
