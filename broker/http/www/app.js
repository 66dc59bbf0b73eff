/* fabricbus live page: the broker's /status summary every 2 s and its
 * Redfish event stream over /ws/events, with severity and text filters,
 * pause, and resume from the last EventId after a reconnect or a reload
 * (sessionStorage). No framework, no build step: served as is by fabricbusd. */
"use strict";

const MAX_ROWS = 1000;      /* rows kept in the table */
const BACKLOG = 200;        /* events replayed on a first visit */
const KEY = "fabricbus.lastEventId";

const $ = (id) => document.getElementById(id);
const tbody = document.querySelector("#events tbody");
let paused = false;
let held = [];              /* events received while paused */
let lastId = Number(sessionStorage.getItem(KEY) || 0);

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

/* Agents from /status: connected or not, events, gaps, last seen. */
function renderAgents(agents) {
  const tb = document.querySelector("#agents tbody");
  tb.textContent = "";
  for (const a of agents) {
    const tr = tb.insertRow();
    cell(tr, a.id);
    const st = cell(tr, "", "sev");
    const s = document.createElement("span");
    s.className = a.connected ? "OK" : "Warning";
    s.textContent = a.connected ? "connected" : "disconnected";
    st.appendChild(s);
    cell(tr, a.events);
    const g = cell(tr, a.gaps);
    if (a.gaps) g.className = "Warning";
    cell(tr, a.last_seen_s === null || a.last_seen_s === undefined ? "-"
      : a.last_seen_s.toFixed(1) + " s ago");
  }
}

/* Nodes fabricbus-slurm drained, from its action events in the stream
 * ("drain: <reason>", "undrain: ..."; "dry-run " first in a dry run). */
const drained = new Map();

/* The fabric view: /fabric/map at start and every 30 s, the stream's link
 * and switch events in between; drawn at most once a frame. */
let fabric = null, fabricDirty = false;
async function refreshFabric() {
  try {
    const r = await fetch("/fabric/map", { cache: "no-store" });
    if (!r.ok) return;
    fabric = FabricView.model(await r.json());
    drawFabric();
  } catch (e) { /* the next refresh tries again */ }
}
function drawFabric() {
  if (fabricDirty || !fabric) return;
  fabricDirty = true;
  requestAnimationFrame(() => {
    fabricDirty = false;
    FabricView.render($("fabric"), fabric);
    let ports = 0, down = 0;
    for (const sw of fabric.switches.values())
      for (const p of sw.ports.values()) { ports++; down += p.state === "down"; }
    $("fabric-count").textContent = "(" + fabric.switches.size + " switches, " + ports +
      " ports, " + down + " down)";
  });
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
    li.textContent = node + ": " + why;
    ul.appendChild(li);
  }
}

async function refreshStatus() {
  try {
    const r = await fetch("/status", { cache: "no-store" });
    const st = await r.json();
    const b = st.broker || {}, ev = b.events || {}, j = b.journal || {}, k = b.kafka || {};
    const agents = b.agents || [];
    $("s-events").textContent = ev.total ?? "-";
    $("s-rate").textContent = ev.rate_10s !== undefined ? ev.rate_10s.toFixed(1) : "-";
    $("s-agents").textContent = agents.filter((a) => a.connected).length + " / " + agents.length;
    $("s-subs").textContent = ((st.websocket || {}).subscribers || []).length;
    $("s-journal").textContent = j.bytes !== undefined ? fmtBytes(j.bytes) : "-";
    $("s-kafka").textContent = k.enabled ? k.backlog : "off";
    renderAgents(agents);
    const h = health(st);
    $("health").textContent = h.level + (h.why ? ": " + h.why : "");
    $("health").className = "badge " + h.level;
    return b.events ? b.events.committed_id : undefined;
  } catch (e) {
    $("health").textContent = "status unavailable";
    $("health").className = "badge CRIT";
    return undefined;
  }
}

function visible(tr) {
  const sev = new Set([...document.querySelectorAll(".sev:checked")].map((c) => c.value));
  const text = $("text").value.trim().toLowerCase();
  return sev.has(tr.dataset.sev) && (!text || tr.dataset.text.includes(text));
}

function applyFilters() {
  let shown = 0;
  for (const tr of tbody.rows) {
    const v = visible(tr);
    tr.classList.toggle("hidden", !v);
    shown += v;
  }
  $("count").textContent = shown + " of " + tbody.rows.length + " shown" +
    (held.length ? ", " + held.length + " held" : "");
}

function cell(tr, text, cls) {
  const td = tr.insertCell();
  td.textContent = text === undefined || text === null ? "" : String(text);
  if (cls) td.className = cls;
  return td;
}

function addRow(doc) {
  const rec = (doc.Events || [])[0] || {};
  const oem = (rec.Oem || {}).Fabricbus || {};
  const origin = (rec.OriginOfCondition || {})["@odata.id"] || "";
  const tr = document.createElement("tr");
  tr.dataset.sev = rec.MessageSeverity || "OK";
  tr.dataset.text = [rec.MessageId, origin, oem.Node, oem.SwitchName, oem.Device]
    .filter(Boolean).join(" ").toLowerCase();
  cell(tr, rec.EventId);
  cell(tr, (rec.EventTimestamp || "").replace("T", " ").replace("Z", ""));
  const sev = cell(tr, "", "sev");
  const s = document.createElement("span");
  s.className = tr.dataset.sev;
  s.textContent = tr.dataset.sev;
  sev.appendChild(s);
  cell(tr, rec.MessageId);
  cell(tr, origin);
  cell(tr, oem.Node);
  cell(tr, rec.Message);
  tr.classList.toggle("hidden", !visible(tr));
  tbody.insertBefore(tr, tbody.firstChild);
  while (tbody.rows.length > MAX_ROWS) tbody.deleteRow(-1);
}

function onEvent(doc) {
  const rec = (doc.Events || [])[0] || {};
  const id = Number(rec.EventId || 0);
  const resume = ((rec.Oem || {}).Fabricbus || {}).ResumeSince;
  if (resume !== undefined) lastId = Number(resume); /* the missed notice */
  else if (id > lastId) lastId = id;
  sessionStorage.setItem(KEY, String(lastId));
  trackDrains(rec, (rec.Oem || {}).Fabricbus || {});
  if (fabric && FabricView.apply(fabric, (rec.Oem || {}).Fabricbus || {}, id)) drawFabric();
  if (paused) held.push(doc); else addRow(doc);
}

function connect(since) {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(proto + "//" + location.host + "/ws/events?since=" + since);
  ws.onopen = () => { $("conn").textContent = "live"; $("conn").className = "badge OK"; };
  ws.onmessage = (m) => { try { onEvent(JSON.parse(m.data)); applyFilters(); } catch (e) { /* not an event */ } };
  ws.onclose = () => {
    $("conn").textContent = "reconnecting";
    $("conn").className = "badge WARN";
    setTimeout(() => connect(lastId), 1000);
  };
}

$("pause").onclick = () => {
  paused = !paused;
  $("pause").textContent = paused ? "Resume" : "Pause";
  if (!paused) { held.forEach(addRow); held = []; }
  applyFilters();
};
document.querySelectorAll(".sev").forEach((c) => (c.onchange = applyFilters));
$("text").oninput = applyFilters;

(async () => {
  const committed = await refreshStatus();
  setInterval(refreshStatus, 2000);
  await refreshFabric();
  setInterval(refreshFabric, 30000);
  const since = lastId || Math.max(0, (committed || 0) - BACKLOG);
  connect(since);
})();
