(function () {
  "use strict";
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr.rule"));
  var haystack = rows.map(function (row) { return row.textContent.toLowerCase(); });
  var search = document.getElementById("f-search");
  var differs = document.getElementById("f-differs");
  var verdict = document.getElementById("f-verdict");
  var shown = document.getElementById("shown");

  function apply() {
    var q = search.value.trim().toLowerCase();
    var v = verdict.value;
    var n = 0;
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i];
      var ok = (!q || haystack[i].indexOf(q) !== -1) &&
        (!differs.checked || row.getAttribute("data-differs") === "true") &&
        (!v || (" " + row.getAttribute("data-verdicts") + " ").indexOf(" " + v + " ") !== -1);
      row.hidden = !ok;
      if (ok) { n++; }
    }
    shown.textContent = n + " of " + rows.length + " rules shown";
  }
  search.addEventListener("input", apply);
  differs.addEventListener("change", apply);
  verdict.addEventListener("change", apply);
  apply();
}());
