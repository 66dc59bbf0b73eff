/* fabric.js - the live page's fabric view: switches with their ports
 * coloured by link state, the host behind each port and its jobs, from
 * GET /fabric/map, then kept current by the stream's link, switch and job
 * stamps. model() and apply() are pure (node runs them in
 * tests/integration/test_page.py); render() draws with the DOM and, after
 * the first draw, touches only the ports that changed (500 switches are
 * 18000 ports: a full redraw per frame would not keep up with the stream). */
"use strict";

const FabricView = (() => {
  const KIND_STATE = { link_down: "down", link_up: "up", link_degraded: "degraded" };

  /* {switches: Map guid -> {guid, name, reachable, ports: Map port -> {state, host}},
   *  jobs: Map node -> [job id], dirty: Set of "guid" / "guid port", full} */
  function model(map) {
    const switches = new Map(), jobs = new Map();
    for (const [guid, sw] of Object.entries(map.Switches || {})) {
      const ports = new Map();
      for (const p of sw.Ports || []) ports.set(p.Port, { state: p.LinkState || "unknown", host: "" });
      switches.set(guid, { guid, name: sw.Name || guid, reachable: sw.Reachable !== false, ports });
    }
    for (const [node, n] of Object.entries(map.Nodes || {})) {
      if ((n.Jobs || []).length) jobs.set(node, n.Jobs.map(String));
      for (const p of n.Ports || []) {
        const sw = switches.get(p.SwitchGUID);
        if (!sw || p.SwitchPort === undefined) continue;
        const port = sw.ports.get(p.SwitchPort) || { state: p.LinkState || "unknown", host: "" };
        port.host = node;
        sw.ports.set(p.SwitchPort, port);
      }
    }
    return { switches, jobs, lastEventId: map.LastEventId || 0, dirty: new Set(), full: true };
  }

  /* One event's Oem.Fabricbus (and its EventId): true when the view changed. */
  function apply(m, oem, eventId) {
    if (eventId && eventId <= m.lastEventId) return false; /* already in the map */
    let changed = false;
    if (oem.Node && Array.isArray(oem.Jobs)) {  /* the broker stamps a node's jobs */
      const was = (m.jobs.get(oem.Node) || []).join(",");
      if (oem.Jobs.length) m.jobs.set(oem.Node, oem.Jobs.map(String)); else m.jobs.delete(oem.Node);
      changed = was !== oem.Jobs.join(",");
      if (changed) m.full = true; /* the host's ports and the jobs list */
    }
    const guid = oem.SwitchGUID;
    if (!guid) return changed;
    let sw = m.switches.get(guid);
    const state = KIND_STATE[oem.Kind];
    if (!sw) {
      if (!state && oem.Kind !== "switch_unreachable" && oem.Kind !== "switch_reachable") return changed;
      sw = { guid, name: oem.SwitchName || guid, reachable: true, ports: new Map() };
      m.switches.set(guid, sw);
      m.full = true;
    }
    if (oem.Kind === "switch_unreachable" || oem.Kind === "switch_reachable") {
      sw.reachable = oem.Kind === "switch_reachable";
      m.dirty.add(guid);
      return true;
    }
    if (!state || !oem.Port) return changed;
    let port = sw.ports.get(oem.Port);
    if (!port) {
      port = { state: "unknown", host: oem.Node || "" };
      sw.ports.set(oem.Port, port);
      m.full = true;
    }
    port.state = state;
    if (oem.Node) port.host = oem.Node;
    m.dirty.add(guid + " " + oem.Port);
    return true;
  }

  /* A fresh model from a later map into the drawn one: when the switches
   * and ports are the same, only what differs is marked for drawing (a
   * refresh of 18000 ports must not redraw them all); else the fresh one. */
  function update(old, fresh) {
    if (!old || !old.els || old.switches.size !== fresh.switches.size) return fresh;
    for (const [guid, sw] of fresh.switches) {
      const o = old.switches.get(guid);
      if (!o || o.ports.size !== sw.ports.size || o.name !== sw.name) return fresh;
      for (const n of sw.ports.keys()) if (!o.ports.has(n)) return fresh;
    }
    for (const [guid, sw] of fresh.switches) {
      const o = old.switches.get(guid);
      if (o.reachable !== sw.reachable) { o.reachable = sw.reachable; old.dirty.add(guid); }
      for (const [n, p] of sw.ports) {
        const op = o.ports.get(n);
        if (op.state !== p.state || op.host !== p.host) {
          op.state = p.state;
          op.host = p.host;
          old.dirty.add(guid + " " + n);
        }
      }
    }
    const key = (jobs) => JSON.stringify([...jobs].sort());
    if (key(old.jobs) !== key(fresh.jobs)) { old.jobs = fresh.jobs; old.full = true; }
    old.lastEventId = fresh.lastEventId;
    return old;
  }

  function sortedSwitches(m) {
    return [...m.switches.values()].sort((a, b) => a.name.localeCompare(b.name, "en", { numeric: true }));
  }

  function portLook(m, sw, n, p, el) {
    const jobs = p.host ? m.jobs.get(p.host) || [] : [];
    el.className = "port " + (sw.reachable ? p.state : "unknown") + (jobs.length ? " job" : "");
    el.title = sw.name + " port " + n + ": " + p.state + (p.host ? " -> " + p.host : "") +
      (jobs.length ? " (jobs " + jobs.join(", ") + ")" : "");
  }

  function switchLook(sw, row, name) {
    row.className = "sw" + (sw.reachable ? "" : " unreachable");
    name.textContent = sw.name + (sw.reachable ? "" : " (unreachable)");
  }

  /* The whole view; remembers each port's element for later updates. */
  function build(container, m) {
    const frag = document.createDocumentFragment();
    m.els = new Map();
    for (const sw of sortedSwitches(m)) {
      const row = document.createElement("div");
      const name = document.createElement("span");
      name.className = "swname";
      row.appendChild(name);
      switchLook(sw, row, name);
      m.els.set(sw.guid, { row, name });
      for (const [n, p] of [...sw.ports].sort((a, b) => a[0] - b[0])) {
        const cell = document.createElement("span");
        cell.dataset.sw = sw.name;
        cell.dataset.port = n;
        portLook(m, sw, n, p, cell);
        row.appendChild(cell);
        m.els.set(sw.guid + " " + n, cell);
      }
      frag.appendChild(row);
    }
    container.textContent = "";
    container.appendChild(frag);
  }

  /* A new switch or port, or a job change (rare): everything; else only
   * the ports and switches apply() marked. */
  function render(container, m) {
    if (m.full || !m.els) {
      build(container, m);
    } else {
      for (const key of m.dirty) {
        const [guid, n] = key.split(" ");
        const sw = m.switches.get(guid);
        if (n === undefined) {
          const e = m.els.get(guid);
          switchLook(sw, e.row, e.name);
          for (const [pn, p] of sw.ports) portLook(m, sw, pn, p, m.els.get(guid + " " + pn));
        } else {
          portLook(m, sw, Number(n), sw.ports.get(Number(n)), m.els.get(key));
        }
      }
    }
    m.full = false;
    m.dirty.clear();
  }

  return { model, apply, update, render, sortedSwitches };
})();

if (typeof module !== "undefined") module.exports = FabricView;
