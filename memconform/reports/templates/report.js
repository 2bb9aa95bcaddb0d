(function () {
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll("#rule-table tbody tr"));
  var haystack = rows.map(function (row) {
    var summary = row.querySelector("summary .text");
    return (row.id.slice(5) + " " + (summary ? summary.textContent : "")).toLowerCase();
  });
  var levels = rows.map(function (row) { return row.cells[1].textContent; });
  var profiles = rows.map(function (row) { return row.cells[2].textContent; });
  var verdict = document.getElementById("f-verdict");
  var profile = document.getElementById("f-profile");
  var level = document.getElementById("f-level");
  var search = document.getElementById("f-search");
  var unscored = document.getElementById("f-unscored");
  var shown = document.getElementById("shown");

  function apply() {
    var v = verdict.value, p = profile.value, l = level.value;
    var q = search.value.trim().toLowerCase();
    var all = !unscored || unscored.checked || v === "not-scored";
    var n = 0;
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i];
      var ok = (all || row.getAttribute("data-verdict") !== "not-scored") &&
        (!v || row.getAttribute("data-verdict") === v) &&
        (!p || profiles[i] === p) &&
        (!l || levels[i] === l) &&
        (!q || haystack[i].indexOf(q) !== -1);
      row.hidden = !ok;
      if (ok) { n++; }
    }
    shown.textContent = n + " of " + rows.length + " rules shown";
  }

  [verdict, profile, level, unscored].forEach(function (el) {
    if (el) { el.addEventListener("change", apply); }
  });
  search.addEventListener("input", apply);

  var links = document.querySelectorAll("[data-filter-verdict]");
  Array.prototype.forEach.call(links, function (link) {
    link.addEventListener("click", function (event) {
      event.preventDefault();
      verdict.value = link.getAttribute("data-filter-verdict");
      profile.value = link.getAttribute("data-filter-profile") || "";
      level.value = link.getAttribute("data-filter-level") || "";
      apply();
      document.getElementById("rules").scrollIntoView();
    });
  });

  function openTarget() {
    var id = "";
    try {
      id = decodeURIComponent(window.location.hash.slice(1));
    } catch (ignored) {
      return;
    }
    var target = id ? document.getElementById(id) : null;
    if (target && target.parentNode && target.parentNode.parentNode &&
        target.parentNode.parentNode.id === "rule-table") {
      if (unscored && target.getAttribute("data-verdict") === "not-scored") {
        unscored.checked = true;
        apply();
      }
      target.hidden = false;
      var details = target.querySelector("details");
      if (details) { details.open = true; }
    }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
  apply();
}());
