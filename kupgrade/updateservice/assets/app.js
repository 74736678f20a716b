// The kupgrade console: the update graph of a channel, the path between two versions
// and the risks on each hop. Plain JavaScript and SVG, no dependencies: the page works
// offline and nothing third-party is shipped. Its state lives in the query string, so
// every view can be bookmarked and the back button restores the previous one.

const prefix = document.querySelector('meta[name="kupgrade-prefix"]').content;
const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const COL = 190, ROW = 22, TOP = 40, LEFT = 60;

function semver(v) {
  const m = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?/.exec(v) || [];
  return [Number(m[1] || 0), Number(m[2] || 0), Number(m[3] || 0), m[4] || null];
}
function compare(a, b) {
  const x = semver(a), y = semver(b);
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i];
  if (x[3] === y[3]) return 0;
  if (x[3] === null) return 1;
  if (y[3] === null) return -1;
  return x[3] < y[3] ? -1 : 1;
}

function query() {
  const q = new URLSearchParams(location.search);
  return { channel: q.get("channel") || "", arch: q.get("arch") || "amd64",
           from: q.get("from") || "", to: q.get("to") || "", nr: q.get("nr") === "1",
           blocked: q.get("blocked") === "1",
           cluster: q.get("cluster") || "", prometheus: q.get("prometheus") || "" };
}
function writeQuery(s, push) {
  const q = new URLSearchParams();
  for (const k of ["channel", "arch", "from", "to", "cluster", "prometheus"]) if (s[k]) q.set(k, s[k]);
  if (s.nr) q.set("nr", "1");
  if (s.blocked) q.set("blocked", "1");
  const url = `${location.pathname}?${q}`;
  if (url !== location.pathname + location.search) (push ? history.pushState : history.replaceState).call(history, s, "", url);
}

async function json(url, accept) {
  const r = await fetch(url, { headers: { Accept: accept || "application/json" } });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.error || body.value || `${r.status} ${r.statusText}`);
  return body;
}

function el(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function fill(select, values, chosen, blank) {
  select.replaceChildren();
  if (blank) select.appendChild(new Option("—", ""));
  for (const v of values) select.appendChild(new Option(v, v));
  select.value = values.includes(chosen) ? chosen : (blank ? "" : values[0] || "");
}

let graph = null;  // {nodes, positions, edges}

// A Cincinnati graph document as versions, edges by version and risks by edge.
function normal(doc, removed) {
  const versions = doc.nodes.map((n) => n.version);
  const edges = doc.edges.map(([i, j]) => [versions[i], versions[j]]);
  const risky = new Map();
  for (const block of doc.conditionalEdges || []) {
    for (const e of block.edges) risky.set(`${e.from}>${e.to}`, block.risks || []);
  }
  const blocked = new Map((removed || []).map((b) => [`${b.from}>${b.to}`, b]));
  return { versions, edges, risky, blocked };
}

// Several channels' graphs as one (a path crosses channels minor by minor).
function merge(graphs) {
  const versions = new Set(), edges = new Map(), risky = new Map(), blocked = new Map();
  for (const g of graphs) {
    g.versions.forEach((v) => versions.add(v));
    g.edges.forEach(([a, b]) => edges.set(`${a}>${b}`, [a, b]));
    g.risky.forEach((r, k) => risky.set(k, r));
    g.blocked.forEach((b, k) => blocked.set(k, b));
  }
  return { versions: [...versions], edges: [...edges.values()], risky, blocked };
}

function layout(doc) {
  const versions = doc.versions;
  const order = [...versions].sort(compare);
  const minors = [...new Set(order.map((v) => semver(v).slice(0, 2).join(".")))];
  const rows = {}, pos = {};
  for (const v of order) {
    const minor = semver(v).slice(0, 2).join(".");
    const col = minors.indexOf(minor);
    rows[minor] = (rows[minor] || 0) + 1;
    pos[v] = [LEFT + col * COL, TOP + rows[minor] * ROW];
  }
  return { minors, pos, height: TOP + (Math.max(0, ...Object.values(rows)) + 2) * ROW };
}

function draw(doc, where) {
  const svg = $("graph");
  svg.querySelectorAll("g, text.minor-label").forEach((n) => n.remove());
  const { minors, pos, height } = layout(doc);
  svg.setAttribute("width", LEFT * 2 + minors.length * COL);
  svg.setAttribute("height", height);
  minors.forEach((m, i) => { const t = el("text", { x: LEFT + i * COL, y: 20, class: "minor-label" }, svg); t.textContent = m; });
  const edges = el("g", { class: "edges" }, svg);
  const { versions, risky } = doc;
  const line = (a, b, cls, risks, why) => {
    const [x1, y1] = pos[a], [x2, y2] = pos[b];
    // Across minors: a curve to the next column; within one: an arc left of the column,
    // wider the further it jumps, so that it never runs over the version labels.
    const d = x1 === x2
      ? `M${x1 - 6},${y1} C${x1 - 12 - Math.abs(y2 - y1) / 6},${y1} ${x1 - 12 - Math.abs(y2 - y1) / 6},${y2} ${x2 - 6},${y2}`
      : `M${x1 + 6},${y1} C${(x1 + x2) / 2},${y1} ${(x1 + x2) / 2},${y2} ${x2 - 6},${y2}`;
    const p = el("path", { d, class: cls, "data-from": a, "data-to": b }, edges);
    const t = el("title", {}, p);
    t.textContent = `${a} → ${b}` + (risks ? `: ${risks.map((r) => r.name).join(", ")}` : "") +
      (why ? `: blocked (${why})` : "");
  };
  for (const [a, b] of doc.edges) line(a, b, "edge");
  for (const [key, risks] of risky) {
    const [a, b] = key.split(">");
    if (pos[a] && pos[b]) line(a, b, "edge conditional", risks);
  }
  for (const b of doc.blocked.values()) {
    if (pos[b.from] && pos[b.to]) line(b.from, b.to, "edge blocked", null, blockedWhy(b));
  }
  showBlocked(doc.blocked);
  const nodes = el("g", { class: "nodes" }, svg);
  for (const v of versions) {
    const [x, y] = pos[v];
    const g = el("g", { class: "node", "data-version": v, tabindex: "0", role: "button",
                        "aria-label": `version ${v}` }, nodes);
    el("circle", { cx: x, cy: y, r: 5 }, g);
    const t = el("text", { x: x + 9, y: y + 3 }, g);
    t.textContent = v;
    g.addEventListener("click", () => pick(v));
    g.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); pick(v); return; }
      const to = step(v, ev.key);
      if (to) { ev.preventDefault(); nodes.querySelector(`.node[data-version="${CSS.escape(to)}"]`).focus(); }
    });
  }
  graph = { versions, pos, risky };
  $("summary").textContent = `${versions.length} versions, ${doc.edges.length} recommended updates, ` +
    `${risky.size} conditional updates` + ($("blocked").checked ? `, ${doc.blocked.size} blocked edges` : "") +
    ` in ${where} (${$("arch").value})`;
}

function blockedWhy(b) {
  const key = b.removedBy.replace(/^io\.openshift\.upgrades\.graph\./, "");
  return b.rule ? `${key}: ${b.rule}` : key;
}

// Blocked edges in words as well as dotted lines: colour is not the only carrier.
function showBlocked(blocked) {
  const box = $("blocked-list");
  box.replaceChildren();
  if (!$("blocked").checked) return;
  const head = document.createElement("h2");
  head.textContent = `Blocked edges (${blocked.size})`;
  box.appendChild(head);
  const list = document.createElement("ul");
  for (const b of blocked.values()) {
    const li = document.createElement("li");
    li.className = "blocked-item";
    li.dataset.from = b.from; li.dataset.to = b.to;
    li.textContent = `${b.from} → ${b.to}: removed by ${blockedWhy(b)}`;
    list.appendChild(li);
  }
  box.appendChild(list);
}

// Arrow keys move between versions: up and down within a minor, left and right to the
// neighbouring minor's version nearest in height.
function step(version, key) {
  const [x, y] = graph.pos[version];
  const same = (a) => graph.pos[a][0] === x;
  let best = null, score = Infinity;
  for (const other of graph.versions) {
    if (other === version) continue;
    const [ox, oy] = graph.pos[other];
    const fits = { ArrowUp: same(other) && oy < y, ArrowDown: same(other) && oy > y,
                   ArrowLeft: ox < x, ArrowRight: ox > x }[key];
    if (!fits) continue;
    const d = Math.abs(ox - x) * 4 + Math.abs(oy - y);
    if (d < score) { score = d; best = other; }
  }
  return best;
}

function pick(version) {
  const s = query();
  if (!s.from || (s.from && s.to)) { s.from = version; s.to = ""; } else { s.to = version; }
  writeQuery(s, true);
  render(s);
}

function showPath(result) {
  const box = $("path");
  box.replaceChildren();
  document.querySelectorAll(".on-path, .hop").forEach((n) => n.classList.remove("on-path", "hop"));
  if (!result) return;
  const head = document.createElement("h2");
  const n = (result.hops || []).length;
  head.textContent = result.found ? `Path: ${n} hop${n === 1 ? "" : "s"}` : "No path";
  box.appendChild(head);
  const list = document.createElement("ol");
  for (const hop of result.hops || []) {
    const li = document.createElement("li");
    li.className = "hop-item";
    li.dataset.from = hop.from; li.dataset.to = hop.to;
    li.textContent = `${hop.from} → ${hop.to} (${hop.channels.join(", ")})` + (hop.recommended ? "" : " — not recommended");
    for (const r of (graph && graph.risky.get(`${hop.from}>${hop.to}`)) || []) {
      const p = document.createElement("div");
      p.className = "risk";
      p.append(`Risk ${r.name}: ${r.message} `);
      if (r.url) { const a = document.createElement("a"); a.href = r.url; a.textContent = "details"; p.appendChild(a); }
      li.appendChild(p);
    }
    list.appendChild(li);
    document.querySelectorAll(`.node[data-version="${CSS.escape(hop.from)}"], .node[data-version="${CSS.escape(hop.to)}"]`)
      .forEach((n) => n.classList.add("on-path"));
    document.querySelectorAll(`.edge[data-from="${CSS.escape(hop.from)}"][data-to="${CSS.escape(hop.to)}"]`)
      .forEach((n) => n.classList.add("hop"));
  }
  box.appendChild(list);
  for (const line of result.explanation || []) {
    const p = document.createElement("p");
    p.textContent = line;
    box.appendChild(p);
  }
}

let drawn = "";
const cache = new Map();

async function channelGraph(channel, arch, withBlocked) {
  const key = `${channel}/${arch}/${withBlocked}`;
  if (!cache.has(key)) {
    const q = new URLSearchParams({ channel, arch });
    const [doc, removed] = await Promise.all([
      json(`${prefix}/graph?${q}`),
      withBlocked ? json(`console/api/blocked?${q}`).then((b) => b.blocked) : [],
    ]);
    cache.set(key, normal(doc, removed));
  }
  return cache.get(key);
}

async function show(channels, arch, withBlocked) {
  const key = `${channels.join(",")}/${arch}/${withBlocked}`;
  if (key === drawn) return;
  const graphs = await Promise.all(channels.map((c) => channelGraph(c, arch, withBlocked)));
  draw(graphs.length === 1 ? graphs[0] : merge(graphs), channels.join(", "));
  drawn = key;
}

async function render(s) {
  $("channel").value = s.channel; $("arch").value = s.arch; $("nr").checked = s.nr;
  $("blocked").checked = s.blocked;
  if (!s.channel) return;
  let result = null;
  if (s.from && s.to) {
    try {
      const q = new URLSearchParams({ channel: s.channel, arch: s.arch, from: s.from, to: s.to, nr: s.nr ? "1" : "0" });
      result = await json(`console/api/path?${q}`);
    } catch (err) {
      result = { found: false, hops: [], channels: [], explanation: [String(err.message || err)] };
    }
  }
  // The path is drawn on the graph of every channel it walks through.
  const channels = result && result.channels && result.channels.length ? result.channels : [s.channel];
  await show(channels.includes(s.channel) ? channels : [s.channel, ...channels], s.arch, s.blocked);
  const versions = [...graph.versions].sort(compare);
  fill($("from"), versions, s.from, true);
  fill($("to"), versions, s.to, true);
  fill($("cluster-version"), versions, s.cluster, true);
  $("prometheus").value = s.prometheus || "";
  showPath(result);
}

// --- your cluster: what `kupgrade updates` says for it ---------------------------------

function showCluster(answer) {
  const box = $("cluster-result");
  box.replaceChildren();
  if (!answer) return;
  if (answer.error) { const p = document.createElement("p"); p.textContent = answer.error; box.appendChild(p); return; }
  const pre = document.createElement("pre");
  pre.textContent = [...answer.text, ...answer.warnings].join("\n");
  box.appendChild(pre);
  for (const update of answer.status.conditionalUpdates || []) {
    const recommended = (update.conditions || []).find((c) => c.type === "Recommended") || {};
    for (const risk of update.risks || []) {
      const div = document.createElement("div");
      div.className = "issue";
      div.dataset.version = update.release.version;
      div.dataset.risk = risk.name;
      const state = document.createElement("span");
      state.className = "state";
      state.textContent = `${update.release.version}: ${risk.name} (Recommended=${recommended.status || "?"}) `;
      const message = document.createElement("span");
      message.className = "message";
      message.textContent = risk.message;
      div.append(state, message, " ");
      if (risk.url) { const a = document.createElement("a"); a.href = risk.url; a.textContent = "details"; div.appendChild(a); }
      box.appendChild(div);
    }
  }
}

async function checkCluster(ev) {
  if (ev) ev.preventDefault();
  const s = { ...query(), cluster: $("cluster-version").value, prometheus: $("prometheus").value };
  if (!s.cluster) return;
  writeQuery(s, true);
  const file = $("snapshot").files[0];
  const q = new URLSearchParams({ channel: s.channel, arch: s.arch, version: s.cluster });
  if (s.prometheus && !file) q.set("prometheus", s.prometheus);
  const r = await fetch(`console/api/updates?${q}`, { method: "POST", body: file ? await file.text() : "",
                                                      headers: { "Content-Type": "application/openmetrics-text" } });
  const body = await r.json().catch(() => ({ error: `${r.status} ${r.statusText}` }));
  $("cluster-box").open = true;
  showCluster(r.ok ? body : { error: body.error || `${r.status} ${r.statusText}` });
}

async function start() {
  const known = await json("console/api/channels");
  const s = query();
  fill($("channel"), known.channels, s.channel, false);
  fill($("arch"), known.arches, s.arch, false);
  s.channel = $("channel").value; s.arch = $("arch").value;
  writeQuery(s, false);
  for (const id of ["channel", "arch", "from", "to", "nr", "blocked"]) {
    $(id).addEventListener("change", () => {
      const next = { channel: $("channel").value, arch: $("arch").value, from: $("from").value,
                     to: $("to").value, nr: $("nr").checked, blocked: $("blocked").checked };
      if (id === "channel" || id === "arch") { next.from = ""; next.to = ""; }
      writeQuery(next, true);
      render(next);
    });
  }
  $("cluster-form").addEventListener("submit", checkCluster);
  window.addEventListener("popstate", () => render(query()));
  await render(s);
  if (s.cluster && s.prometheus) await checkCluster();
}

start().catch((err) => { $("summary").textContent = `The console could not load: ${err.message || err}`; });
