/* fabric.js - the live page's fabric view: switches with their ports
 * coloured by link state, the host behind each port and its jobs, from
 * GET /fabric/map, then kept current by the stream's link, switch and job
 * stamps. model() and apply() are pure (node runs them in
 * tests/integration/test_page.py). Two views of the model:
 * - canvas(container) (the default): one <canvas> that draws only the rows
 *   in sight, once a frame at most, with hit-testing for a tooltip and a
 *   details line, and a text alternative (a collapsed list of the ports
 *   that are not up or have a host) kept in step port by port;
 * - render(container, m) (?view=dom): an element per port, touching only
 *   the ports that changed after the first draw. 500 switches are 18000
 *   elements whose style and layout cost the page most of its frame
 *   budget under a stream (bench_page.sh compares both). */
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
    if (!old || !old.drawn || old.switches.size !== fresh.switches.size) return fresh;
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

  /* "leaf1 port 3: down -> node003 (jobs 4242)": a port in words. */
  function describe(m, sw, n, p) {
    const jobs = p.host ? m.jobs.get(p.host) || [] : [];
    return sw.name + " port " + n + ": " + p.state + (p.host ? " -> " + p.host : "") +
      (jobs.length ? " (jobs " + jobs.join(", ") + ")" : "");
  }

  function portLook(m, sw, n, p, el) {
    const jobs = p.host ? m.jobs.get(p.host) || [] : [];
    el.className = "port " + (sw.reachable ? p.state : "unknown") + (jobs.length ? " job" : "");
    el.title = describe(m, sw, n, p);
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
    m.drawn = true;
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

  /* ---- The canvas view ---- */
  const COLOUR = { up: "#2e7d32", down: "#c62828", degraded: "#f9a825", unknown: "#bbbbbb" };
  const JOB = "#1565c0";
  const PITCH = 12, CELL = 10;     /* a port: 10 px square, 2 px apart, as the DOM view */
  const LABEL = 130;               /* the switch's name */
  const HOSTS_MIN = 240;           /* room kept right of the ports for the hosts' names */
  const FONT = "12px monospace", HOST_FONT = "11px monospace";

  function canvas(container) {
    container.textContent = "";
    container.classList.add("canvas");
    const cv = document.createElement("canvas");
    cv.setAttribute("aria-hidden", "true"); /* the list below says the same in words */
    const sizer = document.createElement("div");
    container.append(cv, sizer);
    const ctx = cv.getContext("2d");
    const tip = document.getElementById("fabric-tip");
    const detail = document.getElementById("fabric-detail");
    const alt = document.getElementById("fabric-alt");
    const v = { m: null, rows: [], index: new Map(), perLine: 36, height: 0, width: 0,
                view: 0, scheduled: false, altEls: new Map(), picked: null, kept: null };

    /* One row per switch, sorted by name: its ports in lines of perLine,
     * then the hosts behind them ("node003 [4242]") measured for hit-testing. */
    function layout(m) {
      v.width = container.clientWidth;
      let most = 1;
      for (const sw of m.switches.values()) most = Math.max(most, sw.ports.size);
      v.perLine = Math.max(8, Math.min(most, Math.floor((v.width - LABEL - HOSTS_MIN) / PITCH)));
      v.rows = [];
      v.index = new Map();
      ctx.font = HOST_FONT;
      let y = 0;
      for (const sw of sortedSwitches(m)) {
        const ports = [...sw.ports].sort((a, b) => a[0] - b[0]);
        const lines = Math.max(1, Math.ceil(ports.length / v.perLine));
        const h = lines * PITCH + 4;
        const hosts = [];
        let x = LABEL + v.perLine * PITCH + 10;
        for (const [n, p] of ports) {
          if (!p.host) continue;
          const jobs = m.jobs.get(p.host);
          const text = p.host + (jobs && jobs.length ? " [" + jobs.join(",") + "]" : "");
          const w = ctx.measureText(text).width;
          hosts.push({ n, text, x, w });
          x += w + 10;
        }
        v.index.set(sw.guid, v.rows.length);
        v.rows.push({ sw, ports, y, h, hosts, slot: new Map(ports.map(([n], i) => [n, i])) });
        y += h;
      }
      v.height = y;
      const max = Math.round(window.innerHeight * 0.4);
      container.style.height = Math.max(PITCH + 4, Math.min(y, max)) + "px";
      v.view = container.clientHeight;
      sizer.style.height = Math.max(0, y - v.view) + "px";
      const dpr = window.devicePixelRatio || 1;
      cv.style.width = v.width + "px";
      cv.style.height = v.view + "px";
      cv.width = Math.round(v.width * dpr);
      cv.height = Math.round(v.view * dpr);
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    }

    function firstVisible(top) {
      let lo = 0, hi = v.rows.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (v.rows[mid].y + v.rows[mid].h <= top) lo = mid + 1; else hi = mid;
      }
      return lo;
    }

    function portBox(row, i) {
      return { x: LABEL + (i % v.perLine) * PITCH, y: row.y + 2 + Math.floor(i / v.perLine) * PITCH };
    }

    /* The rows in sight only: a few dozen, whatever the fabric's size. */
    function paint() {
      const m = v.m, top = container.scrollTop;
      ctx.clearRect(0, 0, v.width, v.view);
      ctx.textBaseline = "middle";
      for (let r = firstVisible(top); r < v.rows.length && v.rows[r].y < top + v.view; r++) {
        const row = v.rows[r], sw = row.sw, y0 = row.y - top;
        ctx.font = FONT;
        ctx.fillStyle = sw.reachable ? "#1b1f24" : COLOUR.down;
        ctx.fillText(sw.name + (sw.reachable ? "" : " (unreachable)"), 0, y0 + 2 + PITCH / 2, LABEL - 6);
        row.ports.forEach(([, p], i) => {
          const b = portBox(row, i);
          ctx.fillStyle = COLOUR[sw.reachable ? p.state : "unknown"] || COLOUR.unknown;
          ctx.fillRect(b.x, b.y - top, CELL, CELL);
          if (p.host && (m.jobs.get(p.host) || []).length) {
            ctx.strokeStyle = JOB;
            ctx.lineWidth = 2;
            ctx.strokeRect(b.x + 1, b.y - top + 1, CELL - 2, CELL - 2);
          }
        });
        ctx.font = HOST_FONT;
        for (const h of row.hosts) {
          ctx.fillStyle = (m.jobs.get(row.sw.ports.get(h.n).host) || []).length ? JOB : "#555";
          ctx.fillText(h.text, h.x, y0 + 2 + PITCH / 2);
        }
      }
    }

    function schedule() {
      if (v.scheduled) return;
      v.scheduled = true;
      requestAnimationFrame(() => { v.scheduled = false; if (v.m) paint(); });
    }

    /* ---- the text alternative: unreachable switches, and ports not up or with a host ---- */
    function altItem(key, want, fill) {
      let li = v.altEls.get(key);
      if (!want) { if (li) { li.remove(); v.altEls.delete(key); } return; }
      if (!li) { li = document.createElement("li"); v.altEls.set(key, li); alt.appendChild(li); }
      fill(li);
    }
    function altPort(m, sw, n) {
      const p = sw.ports.get(n), shown = sw.reachable ? p.state : "unknown";
      altItem(sw.guid + " " + n, shown !== "up" || !!p.host, (li) => {
        li.dataset.sw = sw.name;
        li.dataset.port = n;
        li.dataset.state = shown;
        if (p.host) li.dataset.node = p.host; else delete li.dataset.node;
        li.textContent = describe(m, sw, n, p);
      });
    }
    function altSwitch(m, sw) {
      altItem(sw.guid, !sw.reachable, (li) => {
        li.dataset.sw = sw.name;
        li.dataset.state = "unreachable";
        li.textContent = sw.name + ": unreachable";
      });
      for (const n of sw.ports.keys()) altPort(m, sw, n);
    }
    function altAll(m) {
      alt.textContent = "";
      v.altEls = new Map();
      for (const sw of sortedSwitches(m)) altSwitch(m, sw);
    }

    /* ---- hit-testing ---- */
    function hit(ev) {
      if (!v.m) return null;
      const rect = cv.getBoundingClientRect();
      const x = ev.clientX - rect.left, y = ev.clientY - rect.top + container.scrollTop;
      const r = firstVisible(y);
      const row = v.rows[r];
      if (!row || y < row.y) return null;
      const sw = row.sw;
      if (x < LABEL) {
        v.picked = [sw.guid];
        let down = 0;
        for (const p of sw.ports.values()) down += p.state !== "up";
        return sw.name + ": " + (sw.reachable ? "reachable" : "unreachable") + ", " +
          sw.ports.size + " ports, " + down + " not up";
      }
      const col = Math.floor((x - LABEL) / PITCH), line = Math.floor((y - row.y - 2) / PITCH);
      if (col < v.perLine && line >= 0) {
        const i = line * v.perLine + col;
        if (i >= row.ports.length) return null;
        v.picked = [sw.guid, row.ports[i][0]];
        return describe(v.m, sw, row.ports[i][0], row.ports[i][1]);
      }
      for (const h of row.hosts)
        if (x >= h.x && x <= h.x + h.w) {
          v.picked = [sw.guid, h.n];
          return describe(v.m, sw, h.n, sw.ports.get(h.n));
        }
      return null;
    }
    cv.addEventListener("mousemove", (ev) => {
      const text = hit(ev);
      tip.hidden = !text;
      if (!text) return;
      tip.textContent = text;
      tip.style.left = ev.clientX + 12 + "px";
      tip.style.top = ev.clientY + 12 + "px";
    });
    cv.addEventListener("mouseleave", () => { tip.hidden = true; });
    /* A click keeps the details of what it hit, kept current by render(). */
    cv.addEventListener("click", (ev) => {
      const text = hit(ev);
      if (text) { detail.textContent = text; v.kept = v.picked; }
    });
    function keptNow(m) {
      const sw = v.kept && m.switches.get(v.kept[0]);
      if (sw && v.kept.length === 2 && sw.ports.has(v.kept[1]))
        detail.textContent = describe(m, sw, v.kept[1], sw.ports.get(v.kept[1]));
    }
    container.addEventListener("scroll", () => { tip.hidden = true; schedule(); }, { passive: true });
    new ResizeObserver(() => {
      if (v.m && container.clientWidth !== v.width) { layout(v.m); paint(); }
    }).observe(container);

    return {
      /* Called at most once a frame (app.js): a new switch, port or job
       * lays out again; else only the changed ports' words are redone and
       * the rows in sight repainted, if one of them is in sight. */
      render(m) {
        const full = m.full || v.m !== m || !m.drawn;
        v.m = m;
        if (full) {
          layout(m);
          altAll(m);
          paint();
        } else {
          let seen = false;
          const top = container.scrollTop;
          for (const key of m.dirty) {
            const [guid, n] = key.split(" ");
            const sw = m.switches.get(guid);
            if (n === undefined) altSwitch(m, sw); else altPort(m, sw, Number(n));
            const row = v.rows[v.index.get(guid)];
            if (row && row.y < top + v.view && row.y + row.h > top) seen = true;
          }
          if (seen) paint();
        }
        if (v.kept) keptNow(m);
        m.full = false;
        m.drawn = true;
        m.dirty.clear();
      },
      /* Where port n of the switch named swName is drawn, in the canvas's
       * CSS pixels, after scrolling it into sight; null if there is none. */
      locate(swName, n) {
        const row = v.rows.find((r) => r.sw.name === swName);
        if (!row || !row.slot.has(n)) return null;
        const b = portBox(row, row.slot.get(n));
        if (b.y < container.scrollTop || b.y + CELL > container.scrollTop + v.view) {
          container.scrollTop = Math.max(0, b.y - 4);
          paint();
        }
        return { x: b.x, y: b.y - container.scrollTop, w: CELL, h: CELL };
      },
      rows: () => v.rows.length,
    };
  }

  return { model, apply, update, render, sortedSwitches, describe, canvas, COLOUR, JOB };
})();

if (typeof module !== "undefined") module.exports = FabricView;
