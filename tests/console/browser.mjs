// The console in Debian's headless Chromium (puppeteer-core), run by tests/it/console.rs:
// opens the session list and one session, reads the window bar, opens an evicted
// message's original, waits for an append made from outside, runs axe-core, and prints
// what it saw as one JSON line. Console errors, failed requests and any dialog (a
// script from a session running) are collected and printed too; the Rust test judges.
//
// Also: searches the list by id and by metadata, reads the tree's depths, opens a
// summary's sources, times a 2 000-message session's page, and runs the actions (Compact,
// a revert, a fork) through their confirmations.
//
// Environment: CONSOLE_URL, SESSION, EVICTED_SEQ (a message the session evicted),
// SUMMARIZED (a session with summaries, metadata team=blue), LONG (2 000 messages),
// CHROMIUM (default /usr/bin/chromium), SCREENSHOTS (a directory, optional).
// Protocol on stdin/stdout: prints "ready <seq>" when it waits on the page showing
// message <seq - 1> last; the test appends and writes a line; then the final JSON.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { createRequire } from "node:module";
import puppeteer from "puppeteer-core";

const require = createRequire(import.meta.url);
const url = process.env.CONSOLE_URL;
const session = process.env.SESSION;
const evictedSeq = Number(process.env.EVICTED_SEQ);
const summarized = process.env.SUMMARIZED;
const long = process.env.LONG;
const shots = process.env.SCREENSHOTS;
const seen = { errors: [], dialogs: 0 };
const input = createInterface({ input: process.stdin });
const lines = input[Symbol.asyncIterator]();

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  page.on("console", (message) => {
    if (message.type() === "error") seen.errors.push("console: " + message.text());
  });
  page.on("pageerror", (error) => seen.errors.push("page: " + error.message));
  page.on("requestfailed", (request) => {
    // A live stream the page itself closed when it moved on is not a failure.
    const closed = request.failure()?.errorText === "net::ERR_ABORTED" && /\/live\?after=/.test(request.url());
    if (!closed) seen.errors.push("request: " + request.url() + " " + request.failure()?.errorText);
  });
  page.on("dialog", async (dialog) => {
    seen.dialogs += 1;
    await dialog.dismiss();
  });

  // The session list.
  await page.goto(url + "/#/", { waitUntil: "networkidle0" });
  await page.waitForSelector("#sessions");
  const listed = await page.$$eval("#sessions tbody a", (links) => links.map((a) => a.textContent));
  const depths = await page.$$eval("#sessions tbody tr", (rows) =>
    Object.fromEntries(rows.map((r) => [r.dataset.session, Number(r.dataset.depth)])));
  if (shots) await page.screenshot({ path: shots + "/console-sessions.png" });

  // Searched by id, then by metadata (the form's own hash).
  const searched = async (query) => {
    const hash = "#/?" + query;
    await page.goto(url + "/" + hash, { waitUntil: "domcontentloaded" });
    await page.waitForSelector(`#main[data-route="${hash}"] #sessions`);
    return page.$$eval("#sessions tbody a", (links) => links.map((a) => a.textContent));
  };
  const byId = await searched("id=" + encodeURIComponent(summarized.slice(0, 10)));
  const byMeta = await searched(new URLSearchParams({ meta: "team=blue" }).toString());

  // A summary, and the messages it covers.
  const summarizedHash = "#/s/" + encodeURIComponent(summarized);
  await page.goto(url + "/" + summarizedHash, { waitUntil: "domcontentloaded" });
  const firstSummary = `#main[data-route="${summarizedHash}"] #summaries > li`;
  await page.waitForSelector(firstSummary);
  const summary = await page.$eval(firstSummary, (li) =>
    ({ id: Number(li.dataset.summary), first: Number(li.dataset.first), last: Number(li.dataset.last) }));
  await page.$eval(firstSummary + " button", (button) => button.click());
  await page.waitForSelector(`[data-sources="${summary.id}"] li`);
  summary.sources = await page.$$eval(`[data-sources="${summary.id}"] li`, (items) =>
    items.map((li) => Number(li.dataset.seq)));
  // A condensed summary, opened to the summaries it was made of.
  const condensedItem = `#main[data-route="${summarizedHash}"] #summaries > li[data-kind="condensed"]`;
  let condensed = null;
  if (await page.$(condensedItem)) {
    condensed = await page.$eval(condensedItem, (li) =>
      ({ id: Number(li.dataset.summary), first: Number(li.dataset.first), last: Number(li.dataset.last) }));
    await page.click(`${condensedItem} button[data-below="${condensed.id}"]`);
    const children = `${condensedItem} .below > ol > li`;
    await page.waitForSelector(children);
    condensed.children = await page.$$eval(children, (items) =>
      items.map((li) => [Number(li.dataset.first), Number(li.dataset.last)]));
  }
  if (shots) {
    const first = await page.$(firstSummary);
    await first.screenshot({ path: shots + "/console-summaries.png" });
  }

  // 2 000 messages: the page's first hundred, timed.
  const longHash = "#/s/" + encodeURIComponent(long);
  const longStarted = Date.now();
  await page.goto(url + "/" + longHash, { waitUntil: "domcontentloaded" });
  await page.waitForSelector(`#main[data-route="${longHash}"] #messages tbody tr`);
  const longRenderMs = Date.now() - longStarted;
  const longRows = await page.$$eval("#messages tbody tr", (rows) => rows.length);

  // One session: its window bar and its messages, timed.
  const started = Date.now();
  const sessionHash = "#/s/" + encodeURIComponent(session);
  await page.goto(url + "/" + sessionHash, { waitUntil: "domcontentloaded" });
  await page.waitForSelector(`#main[data-route="${sessionHash}"] #messages tbody tr`);
  const renderMs = Date.now() - started;
  const segments = await page.$$eval("#window-bar .seg", (segs) =>
    Object.fromEntries(segs.map((s) => [s.dataset.region, Number(s.dataset.tokens)])));
  const thresholds = await page.$$eval("#window-bar .mark", (marks) => marks.map((m) => m.dataset.threshold));
  const chart = await page.$eval("#budget-chart", (c) => ({
    points: Number(c.dataset.points), lastEstimate: Number(c.dataset.lastEstimate),
    circles: c.querySelectorAll("circle[data-build]").length,
    marks: c.querySelectorAll("[data-compaction]").length,
    windowLines: c.querySelectorAll('[data-line="window"]').length,
  }));
  if (shots) {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: shots + "/console-session.png", fullPage: false });
  }

  // The evicted message: what the model sees, then its original.
  const from = Math.floor((evictedSeq - 1) / 100) * 100 + 1;
  const hash = "#/s/" + encodeURIComponent(session) + "/" + from;
  await page.goto(url + "/" + hash, { waitUntil: "domcontentloaded" });
  const row = `#main[data-route="${hash}"] #messages tr[data-seq="${evictedSeq}"]`;
  await page.waitForSelector(row);
  const evictedState = await page.$eval(row + " .state", (s) => s.textContent);
  const modelSees = await page.$eval(row + " td.text", (td) => td.textContent);
  await page.$eval(row + " button", (button) => button.click());
  await page.waitForSelector(`[data-original="${evictedSeq}"]`);
  const original = await page.$eval(`[data-original="${evictedSeq}"]`, (d) => d.textContent);

  // Actions, each after its confirmation: Compact (its dry run said first), revert the
  // newest compaction on the session's history, fork after message 5.
  const demoHash = "#/s/" + encodeURIComponent(session);
  // Drawn again after the action finished (not by an earlier redraw the live stream made).
  const redrawn = async (before) => page.waitForFunction((d) => {
    const main = document.getElementById("main");
    return main.dataset.acted && main.dataset.acted !== d.acted && Number(main.dataset.drawn) >= Number(main.dataset.acted)
      && document.querySelector("#events");
  }, {}, before);
  // Found and clicked in one step inside the page: the live stream may redraw the page
  // between a lookup and a click from outside, leaving puppeteer a detached node.
  const press = (selector) => page.$eval(selector, (element) => element.click());
  const confirmed = async (button) => {
    await page.goto(url + "/" + demoHash, { waitUntil: "domcontentloaded" });
    await page.waitForSelector(`#main[data-route="${demoHash}"] #compact`);
    const before = await page.$eval("#main", (m) => ({ acted: m.dataset.acted || "" }));
    const target = typeof button === "string" ? button : await button();
    await press(target);
    await page.waitForSelector("#action-confirm");
    const said = await page.$eval("#action-said", (p) => p.textContent);
    await press("#action-confirm");
    await redrawn(before);
    return said;
  };
  const compactSaid = await confirmed("#compact");
  let revertedEvent = null;
  const revertSaid = await confirmed(async () => {
    revertedEvent = await page.$$eval("#events button[data-revert]", (b) => b.length ? b[b.length - 1].dataset.revert : null);
    return `#events button[data-revert="${revertedEvent}"]`;
  });
  await page.goto(url + "/" + demoHash, { waitUntil: "domcontentloaded" });
  await page.waitForSelector(`#main[data-route="${demoHash}"] button[data-fork="5"]`);
  await press(`button[data-fork="5"]`);
  await page.waitForSelector("#fork-id");
  await page.$eval("#fork-id", (input) => { input.value = "console-forked"; });
  await press("#action-confirm");
  await page.waitForSelector(`#main[data-route="#/s/console-forked"] #messages tbody tr`);
  const forkedRows = await page.$$eval("#messages tbody tr", (rows) => rows.length);

  // An append from outside shows without a reload.
  const total = await page.evaluate(async (session) => {
    const r = await fetch("/api/sessions/" + encodeURIComponent(session));
    return (await r.json()).messages;
  }, session);
  const last = Math.floor((total - 1) / 100) * 100 + 1;
  const lastHash = "#/s/" + encodeURIComponent(session) + "/" + last;
  await page.goto(url + "/" + lastHash, { waitUntil: "domcontentloaded" });
  await page.waitForSelector(`#main[data-route="${lastHash}"] #messages tr[data-seq="${total}"]`);
  console.log("ready " + (total + 1));
  await lines.next();
  const appendedAt = Date.now();
  let appearedMs = null;
  try {
    await page.waitForSelector(`#messages tr[data-seq="${total + 1}"]`, { timeout: 5000 });
    appearedMs = Date.now() - appendedAt;
  } catch {
    appearedMs = null;
  }
  // The live stream the page follows: resumed after a cursor, it starts with the next
  // event (the first line read from each of two streams, the second after the first's).
  const live = await page.evaluate(async (session) => {
    const first = async (after) => {
      const controller = new AbortController();
      const response = await fetch("/api/sessions/" + encodeURIComponent(session) + "/live?after=" + after, { signal: controller.signal });
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffered = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return null;
        buffered += decoder.decode(value, { stream: true });
        const end = buffered.indexOf("\n");
        if (end < 0) continue;
        controller.abort();
        const line = JSON.parse(buffered.slice(0, end));
        return line.event ? line.event.seq : "heartbeat";
      }
    };
    const one = await first("0");
    return [one, await first(String(one))];
  }, session);
  // Whatever a session held was shown as text: nothing it carried ran.
  const ran = await page.evaluate(() => window.__ctxd_xss === true);
  const scripts = await page.$$eval("#main script, #main img, #main iframe", (nodes) => nodes.length);

  // axe-core on each page (its script added with the page's policy bypassed).
  const axePage = await browser.newPage();
  await axePage.setBypassCSP(true);
  const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
  const violations = [];
  for (const hash of ["#/", "#/s/" + encodeURIComponent(session), summarizedHash]) {
    await axePage.goto(url + "/" + hash, { waitUntil: "networkidle0" });
    await axePage.waitForSelector("#main table");
    await axePage.addScriptTag({ content: axeSource });
    const result = await axePage.evaluate(async () => await window.axe.run(document));
    for (const v of result.violations) {
      if (v.impact === "serious" || v.impact === "critical") violations.push(hash + " " + v.id + ": " + v.help);
    }
  }
  console.log(JSON.stringify({
    listed, depths, byId, byMeta, summary, condensed, compactSaid, revertSaid, revertedEvent, forkedRows, longRenderMs, longRows, renderMs, segments, thresholds, evictedState, modelSees, original, appearedMs, live, chart,
    ran, scripts, violations, errors: seen.errors, dialogs: seen.dialogs,
  }));
} finally {
  input.close();
  await browser.close();
}
