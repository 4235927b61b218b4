(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("node-data").textContent || "{}");
  var select = document.getElementById("run-select");
  var detail = document.getElementById("node-detail");

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) { e.textContent = text; }
    if (cls) { e.className = cls; }
    return e;
  }

  function diffBlock(text) {
    var pre = el("pre");
    text.split("\n").forEach(function (line) {
      var cls = line.charAt(0) === "+" && line.slice(0, 3) !== "+++" ? "add"
        : line.charAt(0) === "-" && line.slice(0, 3) !== "---" ? "del" : "";
      pre.appendChild(el("span", line + "\n", cls));
    });
    return pre;
  }

  function show(runId, hash) {
    var d = (data[runId] || {})[hash];
    if (!d || !detail) { return; }
    detail.innerHTML = "";
    detail.appendChild(el("h3", hash.slice(0, 12) + " · " + d.level + " · " + d.role));
    var facts = [["verdict", d.verdict + (d.check ? " (" + d.check + ")" : "")],
                 ["speedup", d.speedup === null ? "–" : d.speedup.toPrecision(3) + "x (" + d.reading + ")"],
                 ["proposer", d.proposer], ["parents", d.parents.map(function (p) { return p.slice(0, 12); }).join(", ") || "–"],
                 ["rationale", d.rationale || "–"], ["router reason", d.router_reason || "–"]];
    var table = el("table");
    facts.forEach(function (f) {
      var tr = el("tr"); var th = el("th", f[0]); th.scope = "row";
      tr.appendChild(th); tr.appendChild(el("td", f[1])); table.appendChild(tr);
    });
    detail.appendChild(table);
    Object.keys(d.sources).sort().forEach(function (level) {
      detail.appendChild(el("h4", "source: " + level));
      detail.appendChild(el("pre", d.sources[level], "source"));
    });
    detail.appendChild(el("h4", "diff to parent"));
    detail.appendChild(d.diff ? diffBlock(d.diff) : el("p", "(root: no parent)", "muted"));
    detail.appendChild(el("h4", "feedback"));
    detail.appendChild(el("pre", JSON.stringify(d.feedback, null, 2), "feedback"));
  }

  document.querySelectorAll("svg.tree g.node").forEach(function (g) {
    function pick() {
      document.querySelectorAll("svg.tree g.node.selected").forEach(function (s) { s.classList.remove("selected"); });
      g.classList.add("selected");
      show(g.closest("svg").getAttribute("data-run"), g.getAttribute("data-node"));
    }
    g.addEventListener("click", pick);
    g.addEventListener("keydown", function (ev) { if (ev.key === "Enter") { pick(); } });
  });

  // a tree wider than its box starts scrolled to its root (data-root-x), which sits at the mean x of its
  // children and so may lie past the box's right edge (newcomer nc25); a hidden run's box has no width yet
  function showRoots() {
    document.querySelectorAll("div.run:not([hidden]) div.tree-box").forEach(function (box) {
      var svg = box.querySelector("svg.tree");
      var x = svg ? parseFloat(svg.getAttribute("data-root-x")) : NaN;
      if (isNaN(x) || !box.clientWidth) { return; }
      box.scrollLeft = Math.max(0, x - box.clientWidth / 2);
      var seen = x >= box.scrollLeft && x <= box.scrollLeft + box.clientWidth;
      box.setAttribute("data-root-in-view", seen ? "1" : "0");
    });
  }

  if (select) {
    select.addEventListener("change", function () {
      document.querySelectorAll("div.run").forEach(function (r) { r.hidden = r.id !== select.value; });
      showRoots();
    });
  }
  showRoots();
  var first = document.querySelector("div.run:not([hidden]) svg.tree g.node");
  if (first) { first.dispatchEvent(new Event("click")); }
  document.body.setAttribute("data-ready", "1");
}());
