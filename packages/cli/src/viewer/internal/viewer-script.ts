/**
 * The viewer's script, inlined into the page. It reads the JSON data block, wires clicks on the
 * server-drawn SVG nodes to the side panel, and runs the search. Every piece of recorded text is
 * put in the page through `textContent`, never as markup.
 */
export const VIEWER_SCRIPT = String.raw`
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("openrath-data").textContent);
  var svg = document.querySelector("#graph svg");
  var panel = document.getElementById("panel");
  var input = document.getElementById("search");
  var status = document.getElementById("search-status");
  var prevButton = document.getElementById("search-prev");
  var nextButton = document.getElementById("search-next");
  var nodes = new Map();
  var children = new Map();
  var ownChunks = new Map();
  var selected = null;
  var matches = [];
  var current = -1;
  var query = "";
  var scale = 1;

  data.nodes.forEach(function (n) { nodes.set(n.id, n); children.set(n.id, []); ownChunks.set(n.id, []); });
  data.nodes.forEach(function (n) {
    n.parents.forEach(function (p) { if (children.has(p)) children.get(p).push(n.id); });
  });
  data.chunks.forEach(function (c) {
    if (!ownChunks.has(c.sessionId)) ownChunks.set(c.sessionId, []);
    ownChunks.get(c.sessionId).push(c);
  });

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function shortId(id) { return id.replace(/-/g, "").slice(-8); }
  function fmt(n) { return typeof n === "number" ? n.toLocaleString("en-US") : String(n); }
  function kindOf(n) { return data.kinds[n.op] || data.kinds["*"]; }
  function nodeEl(id) { return svg.querySelector('g.node[data-id="' + CSS.escape(id) + '"]'); }
  function time(ms) {
    var d = new Date(ms);
    return isNaN(d.getTime()) ? "" : d.toISOString().replace("T", " ").replace("Z", "").slice(0, 23);
  }
  function pretty(text) {
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return String(text); }
  }
  function haystack(c) {
    var parts = [];
    if (typeof c.content === "string") parts.push(c.content);
    (c.toolCalls || []).forEach(function (t) { parts.push(t.name, t.arguments); });
    if (c.name) parts.push(c.name);
    if (c.data !== undefined) parts.push(JSON.stringify(c.data));
    return parts.join("\n");
  }

  // Text with every occurrence of the current query wrapped in <mark>, built from text nodes.
  function marked(tag, cls, text) {
    var e = el(tag, cls);
    text = String(text);
    var q = query.toLowerCase();
    if (!q) { e.textContent = text; return e; }
    var lower = text.toLowerCase();
    var at = 0;
    for (;;) {
      var i = lower.indexOf(q, at);
      if (i < 0) break;
      if (i > at) e.appendChild(document.createTextNode(text.slice(at, i)));
      e.appendChild(el("mark", null, text.slice(i, i + q.length)));
      at = i + q.length;
    }
    if (at < text.length) e.appendChild(document.createTextNode(text.slice(at)));
    return e;
  }

  function linkList(ids, attr) {
    var ul = el("ul", "links");
    ids.forEach(function (id) {
      var n = nodes.get(id);
      var li = el("li");
      var b = el("button");
      b.type = "button";
      b.setAttribute(attr, id);
      if (n) {
        var k = kindOf(n);
        var op = el("span", "op", n.op);
        op.style.color = k.accent;
        b.appendChild(op);
        b.appendChild(el("span", "operator", n.operator));
      } else {
        b.appendChild(el("span", "operator", "(not in this graph)"));
      }
      b.appendChild(el("span", "sid", shortId(id)));
      b.addEventListener("click", function () { select(id, { scroll: true }); });
      li.appendChild(b);
      ul.appendChild(li);
    });
    if (ids.length === 0) return el("p", "none", "none");
    return ul;
  }

  function factsList(pairs) {
    var dl = el("dl", "facts");
    pairs.forEach(function (p) {
      if (p[1] === undefined || p[1] === null || p[1] === "") return;
      dl.appendChild(el("dt", null, p[0]));
      var dd = el("dd");
      if (p[2]) dd.appendChild(el("code", null, p[1])); else dd.textContent = String(p[1]);
      dl.appendChild(dd);
    });
    return dl;
  }

  function usageBlock(u, derived) {
    if (!u) return el("p", "none", "not known: this session was reached only through the lineage of another");
    var box = el("div");
    box.appendChild(factsList([
      ["prompt", fmt(u.promptTokens)],
      ["completion", fmt(u.completionTokens)],
      ["total", fmt(u.totalTokens)],
      ["cached prompt", u.cachedPromptTokens === undefined ? undefined : fmt(u.cachedPromptTokens)],
      ["reasoning", u.reasoningTokens === undefined ? undefined : fmt(u.reasoningTokens)]
    ]));
    if (derived) box.appendChild(el("p", "none", "computed from the transcript rebuilt from its parents"));
    return box;
  }

  function extrasBlock(extras) {
    var keys = Object.keys(extras || {});
    if (keys.length === 0) return el("p", "none", "none");
    var t = el("table", "extras");
    keys.forEach(function (k) {
      var tr = el("tr");
      tr.appendChild(el("td", null, k));
      var td = el("td");
      td.appendChild(el("code", null, JSON.stringify(extras[k])));
      tr.appendChild(td);
      t.appendChild(tr);
    });
    return t;
  }

  function chunkCard(c) {
    var card = el("article", "chunk");
    card.id = "chunk-" + c.id;
    card.setAttribute("data-chunk-id", c.id);
    var head = el("div", "head");
    head.appendChild(el("span", "role role-" + c.role, c.role));
    if (c.author) head.appendChild(el("span", "author", c.author));
    if (c.kind === "tool_result") head.appendChild(el("span", "result-name", c.name));
    if (c.kind === "event") head.appendChild(el("span", "result-name", c.name));
    var when = el("span", "when", time(c.createdAt).slice(11));
    when.title = time(c.createdAt);
    head.appendChild(when);
    card.appendChild(head);
    var body = el("div", "body");
    if (c.kind === "tool_result") {
      if (c.isError) body.appendChild(el("div", "error", "tool error"));
      body.appendChild(marked("pre", null, pretty(c.content)));
    } else if (c.kind === "event") {
      if (c.data !== undefined) body.appendChild(marked("pre", null, JSON.stringify(c.data, null, 2)));
    } else if (typeof c.content === "string" && c.content !== "") {
      body.appendChild(marked("p", "text", c.content));
    }
    (c.toolCalls || []).forEach(function (t) {
      var call = el("div", "call");
      call.appendChild(el("div", "name", "→ " + t.name + "  (" + t.id + ")"));
      call.appendChild(marked("pre", null, pretty(t.arguments)));
      body.appendChild(call);
    });
    var meta = [];
    if (c.model) meta.push("model " + c.model);
    if (c.usage) meta.push(fmt(c.usage.totalTokens) + " tokens (" + fmt(c.usage.promptTokens) + " in, " + fmt(c.usage.completionTokens) + " out)");
    if (c.finishReason) meta.push("finish " + c.finishReason);
    if (c.untrusted) meta.push("untrusted" + (c.source ? " from " + c.source : ""));
    if (meta.length) body.appendChild(el("div", "meta", meta.join(" · ")));
    card.appendChild(body);
    return card;
  }

  function renderPanel(n) {
    panel.textContent = "";
    var k = kindOf(n);
    var pill = el("span", "kind-pill", n.op);
    pill.style.color = k.accent;
    pill.style.borderColor = k.stroke;
    pill.style.background = k.fill;
    var head = el("div", "panel-head");
    head.appendChild(pill);
    head.appendChild(el("h2", null, n.operator));
    head.appendChild(el("div", "ident", n.id));
    panel.appendChild(head);
    panel.appendChild(el("h3", null, "Session"));
    panel.appendChild(factsList([
      ["created", time(n.createdAt)],
      ["chunks", fmt(n.chunkCount) + (n.id === data.finalId ? " (final session)" : "")],
      ["own chunks", fmt((ownChunks.get(n.id) || []).length)]
    ]));
    var parentsHead = el("h3", null, "Parents (" + n.parents.length + ")");
    panel.appendChild(parentsHead);
    var parents = linkList(n.parents, "data-parent-id");
    parents.classList.add("parents");
    panel.appendChild(parents);
    var kids = children.get(n.id) || [];
    panel.appendChild(el("h3", null, "Children (" + kids.length + ")"));
    panel.appendChild(linkList(kids, "data-child-id"));
    panel.appendChild(el("h3", null, "Usage"));
    panel.appendChild(usageBlock(n.usage, n.usageDerived));
    panel.appendChild(el("h3", null, "Extras"));
    panel.appendChild(extrasBlock(n.extras));
    var own = ownChunks.get(n.id) || [];
    panel.appendChild(el("h3", null, "Chunks appended here (" + own.length + ")"));
    if (own.length === 0) {
      panel.appendChild(el("p", "none", n.op === "fork" || n.op === "merge"
        ? "None: a " + n.op + " shares the chunks of its parents."
        : "None."));
    }
    var list = el("div", "chunks");
    own.forEach(function (c) { list.appendChild(chunkCard(c)); });
    panel.appendChild(list);
    panel.scrollTop = 0;
  }

  function select(id, opts) {
    var n = nodes.get(id);
    if (!n) return;
    if (selected) { var old = nodeEl(selected); if (old) old.classList.remove("selected"); }
    selected = id;
    var g = nodeEl(id);
    if (g) {
      g.classList.add("selected");
      if (opts && opts.scroll) g.scrollIntoView({ block: "nearest", inline: "nearest" });
    }
    renderPanel(n);
  }

  // The lineage path from the chunk's branch down to the final session, by breadth-first search.
  function provenancePath(from) {
    var target = data.finalId;
    var via = new Map([[from, null]]);
    var queue = [from];
    for (var i = 0; i < queue.length; i++) {
      var id = queue[i];
      if (id === target) {
        var path = [];
        for (var at = id; at !== null; at = via.get(at)) path.unshift(at);
        return path;
      }
      (children.get(id) || []).forEach(function (c) {
        if (!via.has(c)) { via.set(c, id); queue.push(c); }
      });
    }
    return [from];
  }

  function clearPath() {
    svg.classList.remove("has-path");
    svg.querySelectorAll(".on-path").forEach(function (e) { e.classList.remove("on-path"); });
  }

  function highlightPath(path) {
    clearPath();
    svg.classList.add("has-path");
    path.forEach(function (id, i) {
      var g = nodeEl(id);
      if (g) g.classList.add("on-path");
      if (i > 0) {
        var edge = svg.querySelector('path.edge[data-from="' + CSS.escape(path[i - 1]) + '"][data-to="' + CSS.escape(id) + '"]');
        if (edge) edge.classList.add("on-path");
      }
    });
  }

  function showMatch() {
    var c = matches[current];
    var path = provenancePath(c.sessionId);
    select(c.sessionId, { scroll: true });
    highlightPath(path);
    var card = document.getElementById("chunk-" + c.id);
    if (card) {
      card.classList.add("hit");
      card.scrollIntoView({ block: "center" });
    }
    var n = nodes.get(c.sessionId);
    status.className = "";
    status.textContent = (current + 1) + " of " + matches.length + " · from " + (c.author || (n ? n.operator : "?")) +
      " · path of " + path.length;
    prevButton.disabled = nextButton.disabled = matches.length < 2;
  }

  function search(text) {
    query = text.trim();
    matches = [];
    current = -1;
    if (!query) {
      status.textContent = "";
      prevButton.disabled = nextButton.disabled = true;
      clearPath();
      if (selected) renderPanel(nodes.get(selected));
      return;
    }
    var q = query.toLowerCase();
    matches = data.chunks.filter(function (c) { return haystack(c).toLowerCase().indexOf(q) >= 0; });
    // The earliest chunk holding the text is the one that produced it; later ones copied or quoted it.
    matches.sort(function (a, b) { return a.createdAt - b.createdAt; });
    if (matches.length === 0) {
      status.className = "none";
      status.textContent = "no chunk contains it";
      prevButton.disabled = nextButton.disabled = true;
      clearPath();
      return;
    }
    current = 0;
    showMatch();
  }

  function step(by) {
    if (matches.length === 0) return;
    current = (current + by + matches.length) % matches.length;
    showMatch();
  }

  var timer = null;
  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { search(input.value); }, 180);
  });
  input.addEventListener("keydown", function (e) {
    if (e.key === "Enter") {
      e.preventDefault();
      clearTimeout(timer);
      if (input.value.trim() !== query) search(input.value); else step(e.shiftKey ? -1 : 1);
    } else if (e.key === "Escape") {
      input.value = "";
      search("");
    }
  });
  prevButton.addEventListener("click", function () { step(-1); });
  nextButton.addEventListener("click", function () { step(1); });

  svg.querySelectorAll("g.node").forEach(function (g) {
    var id = g.getAttribute("data-id");
    g.addEventListener("click", function () { select(id); });
    g.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); select(id); }
    });
  });

  var baseWidth = Number(svg.getAttribute("width"));
  var baseHeight = Number(svg.getAttribute("height"));
  function zoom(to) {
    scale = Math.max(0.2, Math.min(2.5, to));
    svg.setAttribute("width", String(Math.round(baseWidth * scale)));
    svg.setAttribute("height", String(Math.round(baseHeight * scale)));
  }
  function fit() {
    var box = document.getElementById("graph");
    zoom(Math.min(1, (box.clientWidth - 24) / baseWidth, (box.clientHeight - 24) / baseHeight));
  }
  document.getElementById("zoom-in").addEventListener("click", function () { zoom(scale * 1.2); });
  document.getElementById("zoom-out").addEventListener("click", function () { zoom(scale / 1.2); });
  document.getElementById("zoom-fit").addEventListener("click", fit);
  document.getElementById("zoom-reset").addEventListener("click", function () { zoom(1); });
  document.addEventListener("keydown", function (e) {
    if (e.target === input) return;
    if (e.key === "/") { e.preventDefault(); input.focus(); }
    else if (e.key === "+" || e.key === "=") zoom(scale * 1.2);
    else if (e.key === "-") zoom(scale / 1.2);
    else if (e.key === "0") fit();
  });
  var box = document.getElementById("graph");
  if (baseWidth > box.clientWidth || baseHeight > box.clientHeight) {
    // Fit when the graph is only a little too big; otherwise keep it readable and let it scroll.
    var s = Math.min((box.clientWidth - 24) / baseWidth, (box.clientHeight - 24) / baseHeight);
    zoom(s >= 0.7 ? s : 0.85);
  }
  prevButton.disabled = nextButton.disabled = true;
})();
`;
