// The live cluster view, in the browser: keeps the rows the server pushes on /stream
// (Server-Sent Events: a "snapshot" on every connection, then "change" and "traffic") and
// draws them. Plain JavaScript, no framework, no build step.
//
// Robust to the server going away: EventSource reconnects by itself after a network error
// (the server asks for 1 s); if the browser gives up (the stream answered with an error), we open
// a new one. While disconnected the page says so and greys what it shows: it is no longer live.
// Every connection starts with a full snapshot, which replaces what the page had.

/** Rows by key, per resource, as the server sent them. */
const state = {
  nodes: new Map(),
  pods: new Map(),
  leases: new Map(),
  events: new Map(),
  synced: {},
  traffic: {},
};
const recentEventsLimit = 50;

// #region connection
let source;
let retryTimer;

function setConnection(kind, text) {
  const el = document.getElementById("connection");
  el.className = `connection ${kind}`;
  el.textContent = text;
  document.getElementById("view").classList.toggle("stale", kind !== "live");
}

function connect() {
  clearTimeout(retryTimer);
  setConnection("connecting", "connecting…");
  source = new EventSource("stream");
  source.addEventListener("snapshot", (e) => {
    const snap = JSON.parse(e.data);
    for (const r of ["nodes", "pods", "leases", "events"]) {
      state[r] = new Map(snap[r].map((row) => [row.key, row]));
    }
    state.synced = snap.synced;
    setConnection("live", "live");
    scheduleRender();
  });
  source.addEventListener("change", (e) => {
    const msg = JSON.parse(e.data);
    const rows = state[msg.resource];
    if (!rows) return;
    if (msg.op === "upsert") rows.set(msg.row.key, msg.row);
    else rows.delete(msg.key);
    if (msg.resource === "events") trimEvents();
    scheduleRender();
  });
  source.addEventListener("traffic", (e) => {
    state.traffic = JSON.parse(e.data);
    scheduleRender();
  });
  source.addEventListener("error", () => {
    setConnection("disconnected", "disconnected, retrying…");
    if (source.readyState === EventSource.CLOSED) {
      // The browser gave up on this stream: open a new one ourselves.
      source.close();
      retryTimer = setTimeout(connect, 2000);
    }
  });
}
// #endregion connection

function eventTime(row) {
  return Date.parse(row.lastSeen) || 0;
}

function trimEvents() {
  if (state.events.size <= recentEventsLimit) return;
  const newest = [...state.events.values()]
    .sort((a, b) => eventTime(b) - eventTime(a))
    .slice(0, recentEventsLimit);
  state.events = new Map(newest.map((r) => [r.key, r]));
}

// ---- drawing ---------------------------------------------------------------------------------

/** An element with attributes (`data-*`, `class`, …) and children (text or elements). */
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v !== undefined && v !== null && v !== false) e.setAttribute(k, String(v));
  }
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    e.append(typeof c === "string" || typeof c === "number" ? String(c) : c);
  }
  return e;
}

/** kubectl's short ages: 45s, 3m20s, 12m, 5h10m, 3d. */
function age(timestamp) {
  const t = Date.parse(timestamp);
  if (!t) return "<unknown>";
  const s = Math.max(0, Math.floor((Date.now() - t) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60 ? `${s % 60}s` : ""}`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return `${h}h${m % 60 ? `${m % 60}m` : ""}`;
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

/** A cell whose text is the age of `timestamp`, refreshed every second. */
function ageCell(tag, timestamp, suffix = "") {
  return el(
    tag,
    { "data-since": timestamp, "data-suffix": suffix },
    timestamp ? age(timestamp) + suffix : "—",
  );
}

function leaseState(row) {
  const renewed = Date.parse(row.renewTime);
  if (!row.holder) return "released";
  if (!renewed || !row.leaseDurationSeconds) return "held";
  return Date.now() < renewed + row.leaseDurationSeconds * 1000 ? "held" : "expired";
}

const byKey = (a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

function podItem(p) {
  const cls = p.terminating
    ? "terminating"
    : p.ready
      ? "ready"
      : p.phase === "Failed"
        ? "failed"
        : "notready";
  return el(
    "li",
    {
      class: `pod ${cls}`,
      "data-pod": p.key,
      "data-phase": p.phase,
      "data-ready": p.ready,
      "data-status": p.status,
    },
    el("span", { class: "pod-name" }, p.namespace === "default" ? p.name : p.key),
    el("span", { class: "pod-status" }, p.status),
    el("span", { class: "pod-ready", title: "ready containers / containers" }, p.readyCount),
    p.restarts !== "0" ? el("span", { class: "pod-restarts", title: "restarts" }, `↻ ${p.restarts}`) : null,
  );
}

function podList(pods) {
  if (pods.length === 0) return el("p", { class: "empty" }, "no pods");
  return el("ul", { class: "pods" }, ...pods.map(podItem));
}

function renderNodes() {
  const podsByNode = new Map();
  for (const p of [...state.pods.values()].sort(byKey)) {
    if (!podsByNode.has(p.node)) podsByNode.set(p.node, []);
    podsByNode.get(p.node).push(p);
  }
  const columns = [];
  const pending = podsByNode.get("") ?? [];
  columns.push(
    el(
      "article",
      { class: "column pending", id: "pending", "data-column": "" },
      el("header", {}, el("h3", {}, "Pending"), el("span", { class: "badge muted" }, "not scheduled")),
      podList(pending),
    ),
  );
  for (const n of [...state.nodes.values()].sort(byKey)) {
    columns.push(
      el(
        "article",
        { class: "column node", "data-node": n.name, "data-ready": n.ready, "data-cordoned": n.cordoned },
        el(
          "header",
          {},
          el("h3", {}, n.name),
          el(
            "span",
            { class: `badge ${n.ready ? "ok" : "bad"}`, "data-node-status": n.status },
            n.ready ? "Ready" : n.status.split(",")[0],
          ),
          n.cordoned ? el("span", { class: "badge warn" }, "cordoned") : null,
        ),
        n.taints.length
          ? el("ul", { class: "taints", title: "taints" }, ...n.taints.map((t) => el("li", {}, t)))
          : null,
        n.kubeletVersion ? el("p", { class: "meta" }, `kubelet ${n.kubeletVersion}`) : null,
        podList(podsByNode.get(n.name) ?? []),
      ),
    );
  }
  // Pods bound to a node that is not (or no longer) registered.
  for (const [node, pods] of podsByNode) {
    if (node === "" || state.nodes.has(node)) continue;
    columns.push(
      el(
        "article",
        { class: "column node missing", "data-node": node, "data-registered": "false" },
        el("header", {}, el("h3", {}, node), el("span", { class: "badge bad" }, "no Node object")),
        podList(pods),
      ),
    );
  }
  if (!state.synced.nodes && state.nodes.size === 0)
    columns.push(el("p", { class: "empty" }, "listing nodes…"));
  document.getElementById("nodes").replaceChildren(...columns);
}

function leaseCells(l, leader) {
  const st = leaseState(l);
  return el(
    "tr",
    { "data-lease": l.key, "data-role": l.role, "data-holder": l.holder, "data-state": st },
    el("td", {}, el("code", {}, l.key)),
    el("td", {}, l.holder || "—"),
    ageCell("td", l.renewTime, " ago"),
    el("td", {}, l.leaseDurationSeconds ? `${l.leaseDurationSeconds}s` : "—"),
    leader ? ageCell("td", l.acquireTime, " ago") : null,
    leader ? el("td", {}, l.leaseTransitions) : null,
    el(
      "td",
      {},
      el("span", { class: `badge ${st === "held" ? "ok" : "bad"}` }, st === "held" && leader ? "leader" : st),
    ),
  );
}

function renderLeases() {
  const leases = [...state.leases.values()].sort(byKey);
  const fill = (id, rows, leader, empty) => {
    const body = document.querySelector(`#${id} tbody`);
    const span = leader ? 7 : 5;
    body.replaceChildren(
      ...(rows.length
        ? rows.map((l) => leaseCells(l, leader))
        : [el("tr", {}, el("td", { colspan: span, class: "empty" }, empty))]),
    );
  };
  fill(
    "leaders",
    leases.filter((l) => l.role === "leader"),
    true,
    "no leader election (components run with --leader-elect=false)",
  );
  fill(
    "heartbeats",
    leases.filter((l) => l.role === "heartbeat"),
    false,
    "no node Lease yet",
  );
  const others = leases.filter((l) => l.role === "other");
  fill("other-leases", others, false, "none");
  // Most clusters of the course have none: the table shows only when there is one.
  for (const id of ["other-leases-title", "other-leases"]) {
    document.getElementById(id).hidden = others.length === 0;
  }
}

function renderEvents() {
  const rows = [...state.events.values()].sort(
    (a, b) => eventTime(b) - eventTime(a) || (a.key < b.key ? -1 : 1),
  );
  const body = document.querySelector("#events tbody");
  body.replaceChildren(
    ...(rows.length
      ? rows.map((e) =>
          el(
            "tr",
            { class: e.type === "Warning" ? "warning" : "", "data-event": e.key, "data-reason": e.reason },
            ageCell("td", e.lastSeen),
            el("td", {}, e.type),
            el("td", {}, e.reason),
            el("td", {}, el("code", {}, e.object)),
            el("td", {}, e.source),
            el("td", { class: "message" }, e.count > 1 ? `${e.message} (×${e.count})` : e.message),
          ),
        )
      : [el("tr", {}, el("td", { colspan: 6, class: "empty" }, "no events"))]),
  );
}

function renderTraffic() {
  const body = document.querySelector("#traffic tbody");
  const rows = Object.entries(state.traffic).sort(([a], [b]) => (a < b ? -1 : 1));
  body.replaceChildren(
    ...rows.map(([resource, t]) =>
      el(
        "tr",
        { "data-traffic": resource, "data-total": t.total },
        el("td", {}, resource),
        el("td", { class: "num" }, t.perSecond.toFixed(1)),
        el("td", { class: "num" }, t.total),
        el(
          "td",
          {},
          Object.entries(t.byType)
            .map(([type, n]) => `${type} ${n}`)
            .join(", ") || "—",
        ),
        el("td", { class: "num" }, t.lists),
        el("td", { class: "num" }, t.watches),
      ),
    ),
  );
}

let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  // Many changes arrive together (a relist, a burst of pods): draw once for all of them.
  setTimeout(() => {
    renderQueued = false;
    renderNodes();
    renderLeases();
    renderEvents();
    renderTraffic();
  }, 50);
}

/** Ages move with the clock, not with the pushes; Lease states too (a Lease expires by itself). */
function tick() {
  for (const cell of document.querySelectorAll("[data-since]")) {
    const since = cell.getAttribute("data-since");
    if (since) cell.textContent = age(since) + (cell.getAttribute("data-suffix") ?? "");
  }
  if (state.leases.size) renderLeases();
}

connect();
setInterval(tick, 1000);
