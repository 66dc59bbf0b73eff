/* drive.js - one headless Chromium (Debian's /usr/bin/chromium, driven by
 * playwright-core: never a browser of playwright's own) on one page, steered
 * by JSON lines on stdin, one answer line on stdout each:
 *   {"op":"goto","url":...}                       -> {"ok":true}
 *   {"op":"eval","expr":"js expression"}          -> {"ok":true,"value":...}
 *   {"op":"wait","expr":...,"timeout_ms":N}       -> {"ok":true,"ms":elapsed}
 *   {"op":"fill","selector":...,"value":...}  {"op":"click","selector":...}
 *   {"op":"mouse","x":N,"y":N,"click":bool}      -> pointer moved there (and clicked)
 *   {"op":"screenshot","path":...}  {"op":"reload"}  {"op":"close"}
 *   {"op":"log"}  -> {"ok":true,"errors":[console errors and page errors],
 *                     "websockets":[URLs the page opened]}
 *   {"op":"metrics"} -> {"ok":true,"value":{CDP Performance.getMetrics}}
 *   {"op":"tabs","url":...,"n":N} -> N more pages on url (benchmark load);
 *   {"op":"close_tabs"}
 * Used by tests/integration/test_browser.py and tests/bench/bench_page.sh.
 * Run with NODE_PATH unset: playwright-core comes from tests/browser/node_modules
 * (deploy/install-deps.sh runs npm ci there). */
"use strict";
const fs = require("fs");
const path = require("path");
const readline = require("readline");

const CHROMIUM = process.env.FB_CHROMIUM || "/usr/bin/chromium";

function fail(msg) {
  process.stdout.write(JSON.stringify({ ok: false, fatal: true, error: msg }) + "\n");
  process.exit(2);
}

let pw;
try {
  pw = require(path.join(__dirname, "node_modules", "playwright-core"));
} catch (e) {
  fail("playwright-core is not installed in " + __dirname +
       "/node_modules: run deploy/install-deps.sh (npm ci in tests/browser)");
}
if (!fs.existsSync(CHROMIUM)) fail(CHROMIUM + " is missing: run deploy/install-deps.sh (Debian package chromium)");

(async () => {
  const browser = await pw.chromium.launch({
    executablePath: CHROMIUM, headless: true,
    /* root in a container: no sandbox; no GPU here. */
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [], websockets = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push("console: " + m.text()); });
  page.on("pageerror", (e) => errors.push("pageerror: " + e.message));
  page.on("websocket", (ws) => websockets.push(ws.url()));
  let cdp = null;
  const tabs = [];
  const rl = readline.createInterface({ input: process.stdin });
  const reply = (o) => process.stdout.write(JSON.stringify(o) + "\n");
  for await (const line of rl) {
    if (!line.trim()) continue;
    const c = JSON.parse(line);
    try {
      switch (c.op) {
        case "goto": await page.goto(c.url, { waitUntil: "load" }); reply({ ok: true }); break;
        case "reload": await page.reload({ waitUntil: "load" }); reply({ ok: true }); break;
        case "eval": reply({ ok: true, value: await page.evaluate(c.expr) }); break;
        case "wait": {
          const t0 = Date.now();
          await page.waitForFunction(c.expr, null, { timeout: c.timeout_ms || 30000, polling: "raf" });
          reply({ ok: true, ms: Date.now() - t0 });
          break;
        }
        case "fill": await page.fill(c.selector, c.value); reply({ ok: true }); break;
        case "click": await page.click(c.selector); reply({ ok: true }); break;
        case "mouse":  /* real pointer input at page coordinates (the canvas view's hit-testing) */
          await page.mouse.move(c.x, c.y);
          if (c.click) await page.mouse.click(c.x, c.y);
          reply({ ok: true });
          break;
        case "screenshot": await page.screenshot({ path: c.path, fullPage: !!c.full }); reply({ ok: true }); break;
        case "metrics": {
          if (!cdp) { cdp = await page.context().newCDPSession(page); await cdp.send("Performance.enable"); }
          const m = await cdp.send("Performance.getMetrics");
          reply({ ok: true, value: Object.fromEntries(m.metrics.map((x) => [x.name, x.value])) });
          break;
        }
        case "tabs":
          for (let i = 0; i < c.n; i++) {
            const t = await browser.newPage();
            t.on("pageerror", (e) => errors.push("tab pageerror: " + e.message));
            await t.goto(c.url, { waitUntil: "load" });
            tabs.push(t);
          }
          reply({ ok: true, value: tabs.length });
          break;
        case "close_tabs":
          while (tabs.length) await tabs.pop().close();
          reply({ ok: true });
          break;
        case "log": reply({ ok: true, errors, websockets }); break;
        case "close": await browser.close(); reply({ ok: true }); process.exit(0);
        default: reply({ ok: false, error: "unknown op " + c.op });
      }
    } catch (e) {
      reply({ ok: false, error: String(e && e.message || e) });
    }
  }
  await browser.close();
})().catch((e) => fail("chromium: " + (e && e.stack || e)));
