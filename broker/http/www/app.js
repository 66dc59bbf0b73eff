/* fabricbus live page: the broker's /status summary every 2 s, /fabric/map
 * every 10 s and its Redfish event stream over /ws/events, with severity and
 * text filters, pause, and resume from the last EventId after a reconnect or
 * a reload (sessionStorage). No framework, no build step: served as is by
 * fabricbusd. Every request goes through api() and wsUrl(), which add the
 * token of a broker with logins. New rows are taken in once a frame, not once an
 * event, and only the event rows in view exist in the DOM (eventTable). */
"use strict";

const MAX_ROWS = 1000;      /* rows kept in the table */
const BACKLOG = 200;        /* events replayed on a first visit */
const KEY = "fabricbus.lastEventId";
const LAG_WARN_S = 5;       /* an agent whose events arrive older than this is late */

const $ = (id) => document.getElementById(id);
let paused = false;
let held = [];              /* events received while paused */
let pending = [];           /* rows waiting for the next frame */
let lastId = Number(sessionStorage.getItem(KEY) || 0);

/* Every HTTP request of the page. A broker with logins (RedfishAccounts,
 * HttpTokens) answers 401: the page then asks once for a token, keeps it in
 * the tab (sessionStorage) and sends it as a Bearer token, and on the
 * WebSocket URL as access_token (a browser cannot set headers there). */
const TOKEN_KEY = "fabricbus.token";
let token = sessionStorage.getItem(TOKEN_KEY) || "";
let tokenDeclined = false;
function askToken(used) {
  if (token !== used) return true;            /* another request asked meanwhile */
  if (tokenDeclined) return false;
  const t = window.prompt("This fabricbus needs a token (its HttpTokens, or a Redfish session's):", "");
  if (!t || !t.trim()) { tokenDeclined = true; return false; }
  token = t.trim();
  sessionStorage.setItem(TOKEN_KEY, token);
  return true;
}
async function api(path) {
  for (let tries = 0; ; tries++) {
    const used = token;
    const headers = { Accept: "application/json" };
    if (used) headers.Authorization = "Bearer " + used;
    const r = await fetch(path, { cache: "no-store", headers });
    if (r.status !== 401 || tries >= 2 || !askToken(used)) return r;
  }
}
function wsUrl(path) {
  const url = (location.protocol === "https:" ? "wss:" : "ws:") + "//" + location.host + path;
  return token ? url + (path.includes("?") ? "&" : "?") + "access_token=" + encodeURIComponent(token) : url;
}

function fmtBytes(n) {
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : String(n)) + " " + u[i];
}

/* The same verdict as `fabricbus status` (broker/cli/cli_status.c). */
function health(st) {
  const b = st.broker || {}, why = [];
  let h = 0;
  const agents = b.agents || [];
  const down = agents.filter((a) => !a.connected).length;
  if (down) { h = Math.max(h, 1); why.push(down + " agent(s) disconnected"); }
  const k = b.kafka || {};
  if (k.enabled && !k.connected) { h = 2; why.push("Kafka unreachable"); }
  const ws = st.websocket || {};
  if (ws.dropped_slow) { h = Math.max(h, 1); why.push(ws.dropped_slow + " slow subscriber(s) dropped"); }
  return { level: ["OK", "WARN", "CRIT"][h], why: why.join(", ") };
}

/* One agent's health: disconnected, skipped sequence numbers, or late events. */
function agentHealth(a) {
  if (!a.connected) return ["Warning", "disconnected"];
  if (a.gaps) return ["Warning", "gaps"];
  if (a.lag_s !== null && a.lag_s !== undefined && a.lag_s > LAG_WARN_S) return ["Warning", "late"];
  return ["OK", "healthy"];
}

function cell(tr, text, cls) {
  const td = tr.insertCell();
  td.textContent = text === undefined || text === null ? "" : String(text);
  if (cls) td.className = cls;
  return td;
}

function badge(td, cls, text) {
  const s = document.createElement("span");
  s.className = cls;
  s.textContent = text;
  td.appendChild(s);
}

/* Agents from /status: health, events, gaps, lag (the age of its newest
 * event when it reached the broker), last seen. */
function renderAgents(agents) {
  const tb = document.querySelector("#agents tbody");
  tb.textContent = "";
  for (const a of [...agents].sort((x, y) => x.id.localeCompare(y.id, "en", { numeric: true }))) {
    const tr = tb.insertRow();
    tr.dataset.agent = a.id;
    cell(tr, a.id);
    const [cls, text] = agentHealth(a);
    badge(cell(tr, "", "sev"), cls, text);
    cell(tr, a.events);
    const g = cell(tr, a.gaps);
    if (a.gaps) g.className = "Warning";
    const lag = a.lag_s === null || a.lag_s === undefined ? "-" : (a.lag_s * 1000).toFixed(0) + " ms";
    cell(tr, lag, "lag");
    cell(tr, a.last_seen_s === null || a.last_seen_s === undefined ? "-"
      : a.last_seen_s.toFixed(1) + " s ago");
  }
}

/* Nodes fabricbus-slurm drained, from its action events in the stream
 * ("drain: <reason>", "undrain: ..."; "dry-run " first in a dry run). */
const drained = new Map();

/* The fabric view: /fabric/map at start and then every 10 s (less often for
 * a big map, below), the stream's link, switch and job stamps in between;
 * the events of a frame are taken into the model as they come and drawn
 * together at the next animation frame. */
let fabric = null, fabricDirty = false;
/* The canvas view, or the element-per-port one with ?view=dom (kept for
 * bench_page.sh's comparison and for browsers without canvas). */
const fabricView = new URLSearchParams(location.search).get("view") === "dom" ? null
  : FabricView.canvas($("fabric"));
/* The stream's fabric events lately seen: a map rendered before them (it
 * lags the stream by up to 100 ms) gets them again. */
const recent = [];
const RECENT = 5000;
/* Every 10 s, or less often for a map that takes long to take in (a
 * refresh costs at most about 1 % of the page's time). */
async function refreshFabric() {
  const t0 = performance.now();
  try {
    const r = await api("/fabric/map");
    if (r.ok) {
      const fresh = FabricView.model(await r.json());
      for (const [oem, id] of recent) FabricView.apply(fresh, oem, id);
      fabric = FabricView.update(fabric, fresh);
      drawFabric();
    }
  } catch (e) { /* the next refresh tries again */ }
  const took = performance.now() - t0;
  setTimeout(refreshFabric, Math.min(60000, Math.max(10000, 100 * took)));
}
function drawFabric() {
  if (fabricDirty || !fabric) return;
  fabricDirty = true;
  requestAnimationFrame(() => {
    fabricDirty = false;
    const full = fabric.full || !fabric.drawn;
    if (fabricView) fabricView.render(fabric); else FabricView.render($("fabric"), fabric);
    let ports = 0, down = 0;
    for (const sw of fabric.switches.values())
      for (const p of sw.ports.values()) { ports++; down += p.state === "down"; }
    $("fabric-count").textContent = "(" + fabric.switches.size + " switches, " + ports +
      " ports, " + down + " down)";
    if (full) renderJobs();
  });
}

/* Hosts running jobs (from the map and the events' Jobs stamps). */
function renderJobs() {
  const ul = $("jobs");
  ul.textContent = "";
  const rows = [...fabric.jobs].sort((a, b) => a[0].localeCompare(b[0], "en", { numeric: true }));
  if (!rows.length) {
    const li = document.createElement("li");
    li.className = "none";
    li.textContent = "no job registered";
    ul.appendChild(li);
  }
  for (const [node, jobs] of rows) {
    const li = document.createElement("li");
    li.dataset.node = node;
    li.textContent = node + ": " + jobs.join(", ");
    ul.appendChild(li);
  }
}

function trackDrains(rec, oem) {
  if (oem.Kind !== "action" || !oem.Node || !oem.Text) return;
  const m = /^(dry-run )?(drain|undrain): (.*)$/.exec(oem.Text);
  if (!m) return;
  if (m[2] === "drain") drained.set(oem.Node, (m[1] || "") + m[3]);
  else drained.delete(oem.Node);
  const ul = $("drained");
  ul.textContent = "";
  if (!drained.size) {
    const li = document.createElement("li");
    li.className = "none";
    li.textContent = "none seen";
    ul.appendChild(li);
  }
  for (const [node, why] of [...drained].sort()) {
    const li = document.createElement("li");
    li.dataset.node = node;
    li.textContent = node + ": " + why;
    ul.appendChild(li);
  }
}

async function refreshStatus() {
  try {
    const r = await api("/status");
    if (!r.ok) throw new Error("/status: HTTP " + r.status);
    const st = await r.json();
    const b = st.broker || {}, ev = b.events || {}, j = b.journal || {}, k = b.kafka || {};
    const agents = b.agents || [];
    $("s-events").textContent = ev.total ?? "-";
    $("s-rate").textContent = ev.rate_10s !== undefined ? ev.rate_10s.toFixed(1) : "-";
    $("s-agents").textContent = agents.filter((a) => a.connected).length + " / " + agents.length;
    $("s-subs").textContent = ((st.websocket || {}).subscribers || []).length;
    $("s-journal").textContent = j.bytes !== undefined ? fmtBytes(j.bytes) : "-";
    $("s-kafka").textContent = !k.enabled ? "off"
      : k.backlog + (k.connected ? "" : " (unreachable)");
    renderAgents(agents);
    const h = health(st);
    $("health").textContent = h.level + (h.why ? ": " + h.why : "");
    $("health").className = "badge " + h.level;
    return b.events ? b.events.committed_id : undefined;
  } catch (e) {
    $("health").textContent = "status unavailable" + (e.message ? " (" + e.message + ")" : "");
    $("health").className = "badge CRIT";
    return undefined;
  }
}

/* The filters, read once per change rather than once per event. */
let filter = null;
function readFilter() {
  filter = {
    sev: new Set([...document.querySelectorAll(".sev:checked")].map((c) => c.value)),
    text: $("text").value.trim().toLowerCase(),
  };
}
function visible(rec) {
  return filter.sev.has(rec.sev) && (!filter.text || rec.text.includes(filter.text));
}

/* The event table, virtualized: the newest MAX_ROWS events are kept in
 * memory (oldest first), those the filters let through in `shown`, and only
 * the rows in view exist in the DOM: a pool of <tr> refilled from the
 * scroll position, in a table that stays put (position: sticky) over a pad
 * as tall as all the shown rows. Rows have one fixed height, so a new event
 * or a scroll costs the few rows in view, never a layout of 1000 rows. New
 * events are taken in once a frame. */
const eventTable = (() => {
  const viewEl = $("events-view"), pad = $("events-pad"), tbody = document.querySelector("#events tbody");
  const all = [], shown = [], pool = [];
  let rowH = 0, headH = 0, queued = false;

  function record(doc) {
    const rec = (doc.Events || [])[0] || {};
    const oem = (rec.Oem || {}).Fabricbus || {};
    const origin = (rec.OriginOfCondition || {})["@odata.id"] || "";
    const r = {
      id: String(rec.EventId || ""), msg: rec.MessageId || "", sev: rec.MessageSeverity || "OK",
      time: (rec.EventTimestamp || "").replace("T", " ").replace("Z", ""), origin,
      node: oem.Node || "", message: rec.Message || "",
      text: [rec.MessageId, origin, oem.Node, oem.SwitchName, oem.Device]
        .filter(Boolean).join(" ").toLowerCase(),
    };
    r.vis = visible(r);
    return r;
  }
  function newRow() {
    const tr = document.createElement("tr");
    for (let i = 0; i < 7; i++) tr.insertCell();
    tr.cells[2].className = "sev";
    tr.cells[2].appendChild(document.createElement("span"));
    tr.rec = null;
    return tr;
  }
  function fill(tr, r) {
    tr.rec = r;
    tr.dataset.id = r.id;
    tr.dataset.msg = r.msg;
    tr.dataset.sev = r.sev;
    tr.dataset.text = r.text;
    const c = tr.cells;
    c[0].textContent = r.id;
    c[1].textContent = r.time;
    c[2].firstChild.className = r.sev;
    c[2].firstChild.textContent = r.sev;
    c[3].textContent = r.msg;
    c[4].textContent = r.origin;
    c[5].textContent = r.node;
    c[6].textContent = r.message;
    c[6].title = r.message;    /* one line a row: the whole message on hover */
  }
  /* The row height and the header's, measured once on a real row. */
  function measure() {
    const tr = newRow();
    fill(tr, { id: "0", msg: "x", sev: "OK", time: "x", origin: "x", node: "x", message: "x", text: "" });
    tbody.appendChild(tr);
    rowH = tr.getBoundingClientRect().height || 24;
    headH = document.querySelector("#events thead").getBoundingClientRect().height;
    tr.remove();
  }
  function render() {
    queued = false;
    if (!rowH) measure();
    const n = shown.length;
    pad.style.height = headH + n * rowH + "px";
    const first = Math.max(0, Math.min(Math.floor(viewEl.scrollTop / rowH), n - 1));
    const fit = Math.ceil(Math.max(0, viewEl.clientHeight - headH) / rowH) + 1;
    const count = Math.max(0, Math.min(n - first, fit));
    while (pool.length < count) pool.push(tbody.appendChild(newRow()));
    for (let i = 0; i < pool.length; i++) {
      const tr = pool[i];
      if (i < count) {
        const r = shown[n - 1 - first - i];
        if (tr.rec !== r) fill(tr, r);
        if (tr.hidden) tr.hidden = false;
      } else if (!tr.hidden) {
        tr.hidden = true;
        tr.rec = null;
      }
    }
    $("count").textContent = n + " of " + all.length + " shown" +
      (held.length ? ", " + held.length + " held" : "");
  }
  function schedule() {
    if (queued) return;
    queued = true;
    requestAnimationFrame(render);
  }
  /* Newest first on screen; a reader scrolled down keeps the rows he reads. */
  function take(docs) {
    let added = 0;
    for (const d of docs.slice(-MAX_ROWS)) {
      const r = record(d);
      all.push(r);
      if (r.vis) { shown.push(r); added++; }
    }
    if (all.length > MAX_ROWS) {
      const gone = all.splice(0, all.length - MAX_ROWS);
      shown.splice(0, gone.filter((r) => r.vis).length);
    }
    if (added && viewEl.scrollTop > 0) {
      if (!rowH) measure();
      pad.style.height = headH + shown.length * rowH + "px";
      viewEl.scrollTop += added * rowH;
    }
    render();
  }
  function refilter() {
    shown.length = 0;
    for (const r of all) if ((r.vis = visible(r))) shown.push(r);
    viewEl.scrollTop = 0;
    render();    /* now: the count and the rows answer the keystroke */
  }
  viewEl.addEventListener("scroll", schedule, { passive: true });
  window.addEventListener("resize", schedule);
  return {
    take, refilter, schedule,
    /* For the tests: every kept event, newest first, hidden = filtered out. */
    rows: () => all.map((r) => ({ id: Number(r.id), msg: r.msg, sev: r.sev, text: r.text, hidden: !r.vis }))
      .reverse(),
    /* The rows in the DOM now, top to bottom. */
    dom: () => pool.filter((tr) => !tr.hidden).map((tr) => ({
      id: Number(tr.dataset.id), msg: tr.dataset.msg, sev: tr.dataset.sev, text: tr.dataset.text })),
  };
})();

function showCount() { eventTable.schedule(); }
function applyFilters() {
  readFilter();
  eventTable.refilter();
}

/* A frame's events go in at once. */
let flushing = false;
function addRows(docs) {
  pending.push(...docs);
  if (flushing) return;
  flushing = true;
  requestAnimationFrame(() => {
    flushing = false;
    const take = pending;
    pending = [];
    eventTable.take(take);
  });
}

function onEvent(doc) {
  const rec = (doc.Events || [])[0] || {};
  const id = Number(rec.EventId || 0);
  const oem = (rec.Oem || {}).Fabricbus || {};
  if (oem.ResumeSince !== undefined) lastId = Number(oem.ResumeSince); /* the missed notice */
  else if (id > lastId) lastId = id;
  sessionStorage.setItem(KEY, String(lastId));
  trackDrains(rec, oem);
  if (oem.SwitchGUID || oem.Jobs) {
    recent.push([oem, id]);
    if (recent.length > RECENT) recent.splice(0, recent.length - RECENT);
  }
  if (fabric && FabricView.apply(fabric, oem, id)) drawFabric();
  if (paused) held.push(doc); else addRows([doc]);
}

function connect(since) {
  const ws = new WebSocket(wsUrl("/ws/events?since=" + since));
  ws.onopen = () => { $("conn").textContent = "live"; $("conn").className = "badge OK"; };
  ws.onmessage = (m) => {
    let doc;
    try { doc = JSON.parse(m.data); } catch (e) { return; /* not an event */ }
    onEvent(doc);
  };
  ws.onclose = () => {
    $("conn").textContent = "reconnecting";
    $("conn").className = "badge WARN";
    setTimeout(() => connect(lastId), 1000);
  };
}

$("pause").onclick = () => {
  paused = !paused;
  $("pause").textContent = paused ? "Resume" : "Pause";
  if (!paused) { addRows(held); held = []; }
  showCount();
};
document.querySelectorAll(".sev").forEach((c) => (c.onchange = applyFilters));
$("text").oninput = applyFilters;
readFilter();

(async () => {
  const committed = await refreshStatus();
  setInterval(refreshStatus, 2000);
  await refreshFabric();
  const since = lastId || Math.max(0, (committed || 0) - BACKLOG);
  connect(since);
})();
