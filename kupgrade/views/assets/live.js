// The live view of a simulated cluster or fleet: every look the server publishes arrives
// as a server-sent event and the page is drawn again from it. Plain JavaScript, nothing
// fetched from elsewhere. Every state is said in words (phase, state, condition status);
// colour only repeats it.

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";

function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k.startsWith("data-")) e.setAttribute(k, v); else e[k] = v;
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c);
  return e;
}
function s(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}
const stamp = (t) => (t ? new Date(t * 1000).toISOString().replace(".000Z", "Z") : "");
const rel = (t, since) => (t === null || t === undefined ? "" : `+${((t - since) / 60).toFixed(1)} min`);
const mins = (x) => (x === null || x === undefined ? "" : `${(x / 60).toFixed(1)} min`);

function table(caption, head, rows, rowAttrs) {
  return h("table", {},
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, head.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, rows.map((r, i) => h("tr", rowAttrs ? rowAttrs(i) : {}, r.map((c) => h("td", {}, c))))));
}

// --- a cluster ----------------------------------------------------------------------------

function progressRow(row) {
  const state = row.state || (row.done >= row.total ? "done" : row.done > 0 ? "under way" : "pending");
  const li = h("li", { class: `progress-row state-${state.replace(/\W+/g, "-")}`, "data-label": row.label },
    h("span", { class: "label" }, row.label), " ",
    h("progress", { value: row.done, max: row.total, "aria-label": row.label }), " ",
    h("span", { class: "count" }, `${row.done}/${row.total} — ${state}`));
  if (row.items && row.items.length) {
    li.append(h("ul", { class: "operators" }, row.items.map((o) =>
      h("li", { "data-operator": o.name },
        `${o.name} ${o.version}: Available=${o.Available} Progressing=${o.Progressing} Degraded=${o.Degraded}`))));
  }
  return li;
}

function nodeTable(pool, since) {
  const counts = Object.entries(pool.counts).filter(([, n]) => n).map(([p, n]) => `${n} ${p}`).join(", ");
  const rows = pool.nodes.map((n) => [
    n.name,
    h("span", { class: `phase phase-${n.phase}` }, n.phase),
    rel(n.since, since),
    n.kubelet,
    n.ready === "True" ? "Ready" : `Ready=${n.ready}`,
    n.schedulable ? "schedulable" : "cordoned",
    n.blockedBy ? blocked(n.blockedBy) : n.phase === "done" || n.phase === "pending" ? "" : n.message,
  ]);
  return h("section", { class: "pool", "data-pool": pool.name },
    h("h3", {}, `Pool ${pool.name}: ${counts}`),
    table(`Nodes of pool ${pool.name}`, ["Node", "Phase", "Since", "Kubelet", "Ready", "Scheduling", "Held by / doing"], rows,
      (i) => ({ class: "node-row", "data-node": pool.nodes[i].name, "data-phase": pool.nodes[i].phase })));
}

function blocked(b) {
  if (b.budget && b.holding) return h("span", { class: "held" }, `blocked by PodDisruptionBudget ${b.budget}` + (b.pod ? ` (evicting ${b.pod})` : ""));
  return h("span", {}, b.budget ? `was held by ${b.budget}; evicting again` : b.message);
}

function gantt(rows, since, now, label) {
  const wrap = h("section", { class: "gantt" }, h("h2", {}, label));
  if (!rows.length) { wrap.append(h("p", {}, "Nothing yet.")); return wrap; }
  const end = Math.max(now, ...rows.map((r) => r.to || r.from));
  const span = Math.max(end - since, 60), W = 900, LEFT = 320, ROW = 16;
  const svg = s("svg", { width: LEFT + W + 20, height: rows.length * ROW + 30, role: "img", "aria-label": label });
  s("title", {}, svg).textContent = label;
  const x = (t) => LEFT + ((t - since) / span) * W;
  for (let m = 0; m <= span / 60; m += Math.max(1, Math.ceil(span / 60 / 10))) {
    s("line", { x1: x(since + m * 60), x2: x(since + m * 60), y1: 0, y2: rows.length * ROW + 6, class: "tick" }, svg);
    s("text", { x: x(since + m * 60), y: rows.length * ROW + 20, class: "tick-label" }, svg).textContent = `${m}m`;
  }
  rows.forEach((r, i) => {
    const y = i * ROW + 4;
    s("text", { x: 4, y: y + 10, class: "gantt-label" }, svg).textContent = r.object;
    const to = r.to === null || r.to === undefined ? now : r.to;
    const open = r.to === null || r.to === undefined;
    const bar = s("rect", { x: x(r.from), y, width: Math.max(x(to) - x(r.from), 2), height: ROW - 4,
                            class: `bar${open ? " open" : ""}${r.to === r.from ? " mark" : ""}` }, svg);
    s("title", {}, bar).textContent = `${r.object}: ${rel(r.from, since)} to ${open ? "now (not finished)" : rel(to, since)}` + (r.note ? ` — ${r.note}` : "");
  });
  wrap.append(h("div", { class: "gantt-wrap" }, svg));
  return wrap;
}

function drawCluster(d) {
  $("what").textContent = `${d.platform} cluster ${d.name}` + (d.target ? ` → ${d.target}` : "");
  $("clock").textContent = `${stamp(d.now)} (${rel(d.now, d.since) || "+0.0 min"})`;
  const head = Object.entries(d.headline || {}).map(([k, v]) => [k, String(v)]);
  const parts = [
    table("Status", ["Field", "Value"], head),
  ];
  if (d.failed) parts.push(h("p", { class: "failed" }, `Stopped: ${d.failed}`));
  if (d.conditions.length) parts.push(table("Conditions", ["Type", "Status", "Reason", "Message", "Since"],
    d.conditions.map((c) => [c.type, c.status, c.reason, c.message, c.lastTransitionTime])));
  parts.push(h("section", { id: "progress" }, h("h2", {}, { openshift: "Runlevels and their operators", gdc: "Stages", kubernetes: "Plan steps" }[d.platform] || "Progress"),
    h("ul", { class: "progress" }, d.progress.map(progressRow))));
  parts.push(h("section", { id: "pools" }, h("h2", {}, "Pools and nodes"), d.pools.map((p) => nodeTable(p, d.since))));
  if (d.budgets.length) parts.push(table("PodDisruptionBudgets", ["Budget", "Rule", "Healthy", "Needs", "Disruptions allowed"],
    d.budgets.map((b) => [b.name, b.rule, String(b.currentHealthy), String(b.desiredHealthy), String(b.disruptionsAllowed)])));
  if (d.history.length) parts.push(table("History", ["State", "Version", "Started", "Completed"],
    d.history.map((r) => [r.state, r.version, r.startedTime || "", r.completionTime || ""])));
  parts.push(gantt(d.timeline, d.since, d.now, "Timeline"));
  $("live").replaceChildren(...parts);
}

// --- a fleet ------------------------------------------------------------------------------

function drawFleet(d) {
  $("what").textContent = `fleet ${d.fleet} (${d.platform}) → ${d.target || "?"}: ${d.outcome}`;
  $("clock").textContent = `+${((d.simulatedSeconds || 0) / 60).toFixed(1)} simulated min`;
  const byRole = new Map();
  for (const c of d.clusters) { if (!byRole.has(c.role)) byRole.set(c.role, []); byRole.get(c.role).push(c); }
  const parts = [h("section", { id: "clusters" }, h("h2", {}, "Clusters by role"),
    [...byRole].map(([role, list]) => table(`${role} clusters`, ["Cluster", "Managed by", "Versions", "Now", "Start", "Finish"],
      list.map((c) => [c.name, c.managedBy || "", c.versions, c.running.length ? `running ${c.running.join(", ")}` : c.finish !== null ? "done" : "waiting", mins(c.start), mins(c.finish)]),
      (i) => ({ class: "cluster-row", "data-cluster": list[i].name }))))];
  if (d.stages) parts.unshift(stagesSection(d));
  const running = d.steps.filter((x) => x.state === "running" || x.state === "blocked").map((x) => x.id);
  parts.push(h("section", { id: "steps" }, h("h2", {}, `Plan steps (${running.length ? `running: ${running.join(", ")}` : "none running"})`),
    table("Steps", ["Step", "Object", "From", "To", "State", "Ready", "Start", "End", "Waited for"],
      d.steps.map((x) => [x.id, x.object, x.from, x.to, h("span", { class: `phase step-${x.state}` }, x.state), mins(x.readyAt), mins(x.startedAt), mins(x.finishedAt),
        x.state === "waiting" && x.heldBy ? x.heldBy : x.freedBy || x.waitedFor || ""]),
      (i) => ({ class: "step-row", "data-step": d.steps[i].id, "data-state": d.steps[i].state }))));
  if (d.stop) parts.push(h("p", { class: "failed" }, `Stopped (${d.stop.kind}) at ${mins(d.stop.at)}: ${d.stop.why || ""}`));
  const rows = d.steps.filter((x) => x.startedAt !== null).map((x) => ({ object: `${x.id} ${x.object}${x.stage ? ` (${x.stage})` : ""}`, from: x.startedAt, to: x.finishedAt }));
  parts.push(gantt(rows, 0, d.simulatedSeconds || 0, "Steps over time"));
  $("live").replaceChildren(...parts);
}

// A rollout's stages (SPEC X9): each with its clusters, status, times, approval and gates.
function stagesSection(d) {
  const approval = (a) => !a ? "" : a.approvedBy ? `approved by ${a.approvedBy}` : a.askedAt !== null ? "waiting for approval" : "needed";
  const gates = (list) => list.map((g) => `${g.gate} on ${g.cluster}: ${g.value === null ? "no data" : g.value}`).join("; ");
  return h("section", { id: "stages" }, h("h2", {}, `Rollout ${d.rollout}: stages`),
    table("Stages", ["Stage", "Clusters", "Status", "Opened", "Done", "Soak until", "Approval", "Gates"],
      d.stages.map((x) => [x.name, x.clusters.join(", "), h("span", { class: `phase stage-${x.status}` }, x.status),
        mins(x.openedAt), mins(x.doneAt), mins(x.soakUntil), approval(x.approval), x.waitingFor || gates(x.gates)]),
      (i) => ({ class: "stage-row", "data-stage": d.stages[i].name, "data-status": d.stages[i].status })));
}

function draw(d) {
  if (d.kind === "error") { $("connection").textContent = `cannot read the cluster: ${d.error}`; return; }
  if (d.kind === "fleet") drawFleet(d); else if (d.kind === "cluster") drawCluster(d);
}

function connect() {
  const source = new EventSource("console/api/live/events");
  source.onopen = () => { $("connection").textContent = "live"; };
  source.onmessage = (ev) => {
    $("connection").textContent = "live";
    document.body.dataset.seq = ev.lastEventId;
    draw(JSON.parse(ev.data));
  };
  source.addEventListener("end", (ev) => {
    source.close();
    $("connection").textContent = JSON.parse(ev.data).message;
  });
  source.onerror = () => { $("connection").textContent = "reconnecting… (the run may have ended or handed over)"; };
}

connect();
