/* fabric.js - the live page's fabric view: switches with their ports
 * coloured by link state, from GET /fabric/map, then kept current by the
 * link and switch events of the stream. model() and apply() are pure (node
 * runs them in tests/integration/test_page.py); render() draws with the DOM. */
"use strict";

const FabricView = (() => {
  const KIND_STATE = { link_down: "down", link_up: "up", link_degraded: "degraded" };

  /* {switches: Map guid -> {guid, name, reachable, ports: Map port -> {state, host}}} */
  function model(map) {
    const switches = new Map();
    for (const [guid, sw] of Object.entries(map.Switches || {})) {
      const ports = new Map();
      for (const p of sw.Ports || []) ports.set(p.Port, { state: p.LinkState || "unknown", host: "" });
      switches.set(guid, { guid, name: sw.Name || guid, reachable: sw.Reachable !== false, ports });
    }
    for (const [node, n] of Object.entries(map.Nodes || {})) {
      for (const p of n.Ports || []) {
        const sw = switches.get(p.SwitchGUID);
        if (!sw || p.SwitchPort === undefined) continue;
        const port = sw.ports.get(p.SwitchPort) || { state: p.LinkState || "unknown", host: "" };
        port.host = node;
        sw.ports.set(p.SwitchPort, port);
      }
    }
    return { switches, lastEventId: map.LastEventId || 0 };
  }

  /* One event's Oem.Fabricbus (and its EventId): true when the view changed. */
  function apply(m, oem, eventId) {
    if (eventId && eventId <= m.lastEventId) return false; /* already in the map */
    const guid = oem.SwitchGUID;
    if (!guid) return false;
    let sw = m.switches.get(guid);
    const state = KIND_STATE[oem.Kind];
    if (!sw) {
      if (!state && oem.Kind !== "switch_unreachable" && oem.Kind !== "switch_reachable") return false;
      sw = { guid, name: oem.SwitchName || guid, reachable: true, ports: new Map() };
      m.switches.set(guid, sw);
    }
    if (oem.Kind === "switch_unreachable" || oem.Kind === "switch_reachable") {
      sw.reachable = oem.Kind === "switch_reachable";
      return true;
    }
    if (!state || !oem.Port) return false;
    const port = sw.ports.get(oem.Port) || { state: "unknown", host: oem.Node || "" };
    port.state = state;
    if (oem.Node) port.host = oem.Node;
    sw.ports.set(oem.Port, port);
    return true;
  }

  function sortedSwitches(m) {
    return [...m.switches.values()].sort((a, b) => a.name.localeCompare(b.name, "en", { numeric: true }));
  }

  function render(container, m) {
    const frag = document.createDocumentFragment();
    for (const sw of sortedSwitches(m)) {
      const row = document.createElement("div");
      row.className = "sw" + (sw.reachable ? "" : " unreachable");
      const name = document.createElement("span");
      name.className = "swname";
      name.textContent = sw.name + (sw.reachable ? "" : " (unreachable)");
      row.appendChild(name);
      for (const [n, p] of [...sw.ports].sort((a, b) => a[0] - b[0])) {
        const cell = document.createElement("span");
        cell.className = "port " + (sw.reachable ? p.state : "unknown");
        cell.title = sw.name + " port " + n + ": " + p.state + (p.host ? " -> " + p.host : "");
        row.appendChild(cell);
      }
      frag.appendChild(row);
    }
    container.textContent = "";
    container.appendChild(frag);
  }

  return { model, apply, render, sortedSwitches };
})();

if (typeof module !== "undefined") module.exports = FabricView;
