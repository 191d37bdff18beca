(function () {
  "use strict";
  var table = document.getElementById("url-table");
  var form = document.getElementById("filters");
  if (!table || !form) {
    return;
  }
  var text = document.getElementById("filter-text");
  var code = document.getElementById("filter-code");
  var status = document.getElementById("filter-status");
  var empty = document.getElementById("filter-empty");
  var rows = Array.prototype.slice.call(table.querySelectorAll(".body > .row"));
  var haystacks = rows.map(function (row) {
    return row.textContent.toLowerCase();
  });
  var issues = rows.map(function (row) {
    var value = row.getAttribute("data-issues") || "";
    return value ? " " + value + " " : "";
  });
  var format = function (n) {
    return n.toLocaleString("en-US");
  };

  function matchesCode(index, wanted) {
    if (wanted === "") {
      return true;
    }
    if (wanted === "*any") {
      return issues[index] !== "";
    }
    if (wanted === "*none") {
      return issues[index] === "";
    }
    return issues[index].indexOf(" " + wanted + " ") !== -1;
  }

  function apply() {
    var terms = text.value.toLowerCase().split(/\s+/).filter(Boolean);
    var wanted = code.value;
    var shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var ok = matchesCode(i, wanted);
      for (var t = 0; ok && t < terms.length; t++) {
        ok = haystacks[i].indexOf(terms[t]) !== -1;
      }
      if (rows[i].hidden === ok) {
        rows[i].hidden = !ok;
      }
      if (ok) {
        shown++;
      }
    }
    var noun = rows.length === 1 ? " row" : " rows";
    status.textContent = "Showing " + format(shown) + " of " + format(rows.length) + noun;
    table.setAttribute("data-shown", String(shown));
    empty.hidden = shown !== 0 || rows.length === 0;
  }

  var timer = null;
  text.addEventListener("input", function () {
    if (timer !== null) {
      clearTimeout(timer);
    }
    timer = setTimeout(function () {
      timer = null;
      apply();
    }, 80);
  });
  code.addEventListener("change", apply);
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    apply();
  });

  Array.prototype.forEach.call(document.querySelectorAll("[data-filter-code]"), function (link) {
    link.addEventListener("click", function () {
      var wanted = link.getAttribute("data-filter-code");
      var known = Array.prototype.some.call(code.options, function (option) {
        return option.value === wanted;
      });
      if (known) {
        code.value = wanted;
        text.value = "";
        apply();
      }
    });
  });

  form.hidden = false;
  apply();
})();
