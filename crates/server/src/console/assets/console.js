// The ctxd console: the tenant's sessions (searched, as a tree of forks and subagent
// children), one session's window, messages, summaries, task ledger and history.
// Every value from a session is set as text (textContent), never as markup.
"use strict";

const KEY = "ctxd-console-key";
const PAGE = 100;
// The open live stream of the session shown (aborted when the page changes).
let live = null;
// An action is being confirmed or run: the live stream does not redraw the page under
// it (the action redraws it when done).
let acting = false;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (name === "class") node.className = value;
    // Through the CSSOM: the policy allows no inline style attribute.
    else if (name === "width" || name === "left" || name === "paddingLeft") node.style[name] = value;
    else if (name === "text") node.textContent = String(value);
    else node.setAttribute(name, String(value));
  }
  for (const child of children) {
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function api(path, post) {
  const headers = {};
  const key = sessionStorage.getItem(KEY);
  if (key) headers["x-ctxd-key"] = key;
  // An action: the console's own header (a page elsewhere cannot send it).
  if (post) headers["x-ctxd-console"] = "action";
  const response = await fetch("/api/" + path, { headers, method: post ? "POST" : "GET" });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ? body.error.message : "HTTP " + response.status);
  return body;
}

function show(...nodes) {
  const main = document.getElementById("main");
  main.replaceChildren(...nodes);
  // Which page is shown (and when it was drawn): a new version redraws it.
  main.dataset.route = location.hash || "#/";
  main.dataset.drawn = String(Date.now());
}

function failed(error) {
  show(el("p", { class: "error", role: "alert", text: error.message }));
}

// The page's sessions as a tree: a subagent child under its parent, a fork under its
// source, when that one is on the page too; each with its depth.
function asTree(sessions) {
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const children = new Map();
  const roots = [];
  for (const s of sessions) {
    const above = s.parent || s.forked_from;
    if (above && byId.has(above) && above !== s.id) {
      if (!children.has(above)) children.set(above, []);
      children.get(above).push(s);
    } else {
      roots.push(s);
    }
  }
  const out = [];
  const visit = (s, depth) => {
    out.push([s, depth]);
    for (const child of children.get(s.id) || []) visit(child, depth + 1);
  };
  roots.forEach((s) => visit(s, 0));
  return out;
}

function searchForm(id, meta) {
  const form = el("form", { id: "search", role: "search" },
    el("label", { for: "search-id", text: "id starts with" }),
    el("input", { id: "search-id", name: "id", type: "search", value: id }),
    el("label", { for: "search-meta", text: "metadata key=value" }),
    el("input", { id: "search-meta", name: "meta", type: "search", value: meta }),
    el("button", { type: "submit", text: "Search" }));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    const wantId = document.getElementById("search-id").value.trim();
    const wantMeta = document.getElementById("search-meta").value.trim();
    if (wantId) query.set("id", wantId);
    if (wantMeta) query.set("meta", wantMeta);
    location.hash = "#/" + (query.toString() ? "?" + query : "");
  });
  return form;
}

async function listPage(search) {
  const query = new URLSearchParams(search);
  const found = await api("sessions?" + query);
  const rows = asTree(found.sessions).map(([s, depth]) =>
    el("tr", { "data-session": s.id, "data-depth": depth },
      el("td", { paddingLeft: (8 + 20 * depth) + "px" },
        depth ? (s.parent ? "↳ subagent " : "↳ fork ") : "",
        el("a", { href: "#/s/" + encodeURIComponent(s.id), text: s.id })),
      el("td", {}, el("span", { class: "badge " + s.budget_status, text: s.budget_status })),
      el("td", { text: s.messages }),
      el("td", { text: s.parent || s.forked_from || "" }),
      el("td", { text: Object.entries(s.metadata).map(([k, v]) => k + "=" + v).join(" ") }),
      el("td", { text: s.updated_at }),
    ));
  const table = el("table", { id: "sessions" },
    el("thead", {}, el("tr", {},
      ...["session", "budget", "messages", "parent or source", "metadata", "last activity"]
        .map((t) => el("th", { scope: "col", text: t })))),
    el("tbody", {}, ...rows));
  show(el("h2", { text: "Sessions" }), searchForm(query.get("id") || "", query.get("meta") || ""), table);
}

// The window as the last build counted it: each region a segment, in tokens.
function windowBar(s) {
  const w = s.window;
  const states = s.history_by_state;
  const parts = [
    ["system", s.last_build.system], ["tools", s.last_build.tools], ["summaries", s.summaries],
    ["full", states.full || 0], ["pinned", states.pinned || 0], ["cleared", states.cleared || 0],
    ["evicted", states.evicted || 0], ["reserve", w.output_reserve],
  ];
  const used = parts.reduce((sum, [, n]) => sum + n, 0);
  parts.push(["headroom", Math.max(0, w.context_window - used)]);
  const total = Math.max(w.context_window, used);
  const bar = el("div", { class: "bar", id: "window-bar", role: "img",
    "aria-label": "the window: " + parts.map(([name, n]) => name + " " + n).join(", ") });
  for (const [name, tokens] of parts) {
    bar.append(el("div", { class: "seg " + name, "data-region": name, "data-tokens": tokens,
      title: name + ": " + tokens + " tokens", width: (100 * tokens / total) + "%" }));
  }
  for (const [name, at] of [["clear", w.clear_threshold], ["summarize", w.summarize_threshold], ["limit", w.limit]]) {
    bar.append(el("div", { class: "mark", "data-threshold": name, title: name + " at " + at + " tokens",
      left: (100 * at / total) + "%" }));
  }
  const legend = el("p", { class: "legend" }, ...parts.map(([name, n]) =>
    el("span", {}, el("i", { class: "seg " + name }), name + " " + n)));
  return [bar, legend];
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
  node.append(...children);
  return node;
}

// The budget of each recorded build over time: its estimate against the window (the
// line at the top), a mark where a compaction, clearing, eviction or revert happened
// between two builds.
function budgetChart(builds, events) {
  const points = builds.builds;
  if (!points.length) return el("p", { id: "budget-chart-empty", text: "No build recorded yet." });
  const [width, height, pad] = [640, 160, 4];
  const top = Math.max(...points.map((p) => Math.max(p.window_tokens, p.estimate_tokens)));
  const x = (i) => pad + (points.length === 1 ? 0 : i * (width - 2 * pad) / (points.length - 1));
  const y = (tokens) => height - pad - tokens * (height - 2 * pad) / top;
  const last = points[points.length - 1];
  const chart = svg("svg", { id: "budget-chart", role: "img", viewBox: "0 0 " + width + " " + height,
    width: "100%", height, "data-points": points.length, "data-last-estimate": last.estimate_tokens,
    "aria-label": points.length + " builds; the last estimated " + last.estimate_tokens + " of " + last.window_tokens + " tokens" },
    svg("title", {}, "Each build's estimate against the window"));
  chart.append(svg("line", { x1: 0, x2: width, y1: y(last.window_tokens), y2: y(last.window_tokens),
    stroke: "#b00", "stroke-dasharray": "4 3", "data-line": "window" }));
  const compacting = ["CompactionCompleted", "ToolResultsCleared", "OutputEvicted", "CompactionReverted"];
  const times = points.map((p) => Date.parse(p.at));
  for (const e of events.filter((e) => compacting.includes(e.kind))) {
    const after = times.findIndex((t) => t >= Date.parse(e.at));
    if (after < 0) continue;
    chart.append(svg("line", { x1: x(after), x2: x(after), y1: 0, y2: height, stroke: "#888",
      "data-compaction": e.seq, "data-kind": e.kind }, svg("title", {}, e.kind + " (event " + e.seq + ")")));
  }
  chart.append(svg("polyline", { fill: "none", stroke: "#036", "stroke-width": 2,
    points: points.map((p, i) => x(i) + "," + y(p.estimate_tokens)).join(" ") }));
  for (const [i, p] of points.entries()) {
    chart.append(svg("circle", { cx: x(i), cy: y(p.estimate_tokens), r: 2, fill: "#036", "data-build": p.build,
      "data-estimate": p.estimate_tokens }, svg("title", {}, "build " + p.build + ": " + p.estimate_tokens + " of " + p.window_tokens + " tokens")));
  }
  return chart;
}

function messageRow(s, m, path) {
  const open = el("button", { class: "link", type: "button", text: "original" });
  const cell = el("td", { class: "text" }, m.model_sees === null ? m.text : m.model_sees);
  open.addEventListener("click", async () => {
    try {
      const original = await api("sessions/" + encodeURIComponent(s.id) + "/messages/" + m.seq);
      cell.replaceChildren(el("div", { class: "original", "data-original": m.seq, text: original.content }));
    } catch (error) {
      cell.replaceChildren(el("span", { class: "error", text: error.message }));
    }
  });
  return el("tr", { "data-seq": m.seq },
    el("td", { text: m.seq }), el("td", { text: m.turn }), el("td", { text: m.role }),
    el("td", { text: m.tokens }), el("td", {}, el("span", { class: "state", text: m.state })),
    cell, el("td", {}, open, " ", forkButton(path, s.id, m.seq)));
}

// An action behind a confirmation: `ask` (a dry run, or nothing) says what would
// happen — text, or text and the inputs the action takes — in the page's action area;
// "Confirm" runs `apply`, "Cancel" clears it.
async function confirmAction(what, ask, apply) {
  const area = document.getElementById("action");
  acting = true;
  try {
    const said = await ask();
    const confirm = el("button", { type: "button", id: "action-confirm", text: "Confirm " + what });
    const cancel = el("button", { type: "button", text: "Cancel" });
    cancel.addEventListener("click", () => {
      area.replaceChildren();
      acting = false;
    });
    confirm.addEventListener("click", async () => {
      confirm.disabled = true;
      try {
        await apply();
        // Done (the page is being redrawn): when, for whoever waits on it.
        document.getElementById("main").dataset.acted = String(Date.now());
      } catch (error) {
        area.replaceChildren(el("p", { class: "error", role: "alert", text: error.message }));
        acting = false;
      }
    });
    const [text, ...inputs] = Array.isArray(said) ? said : [said];
    area.replaceChildren(el("p", { id: "action-said", text }), ...inputs, confirm, " ", cancel);
    confirm.focus();
  } catch (error) {
    area.replaceChildren(el("p", { class: "error", role: "alert", text: error.message }));
    acting = false;
  }
}

function compactButton(path) {
  const button = el("button", { type: "button", id: "compact", text: "Compact…" });
  button.addEventListener("click", () => confirmAction("compact", async () => {
    const dry = await api(path + "/actions/compact?dry_run=true", true);
    const summarized = dry.summarized ? ", seqs " + dry.summarized[0] + "–" + dry.summarized[1] + " summarized" : "";
    return "Compact would take the request from " + dry.tokens_before + " to " + dry.tokens_after +
      " tokens (" + dry.cleared + " tool results cleared" + summarized + ").";
  }, async () => {
    await api(path + "/actions/compact?dry_run=false", true);
    route();
  }));
  return button;
}

function revertButton(path, event) {
  const button = el("button", { class: "link", type: "button", "data-revert": event.seq, text: "revert…" });
  button.addEventListener("click", () => confirmAction("revert", async () => {
    const dry = await api(path + "/actions/revert?dry_run=true&event=" + event.seq, true);
    return "Reverting would undo " + dry.compactions + " compaction(s) and restore " + dry.restored +
      " message(s): " + dry.tokens_before + " → " + dry.tokens_after + " tokens.";
  }, async () => {
    await api(path + "/actions/revert?dry_run=false&event=" + event.seq, true);
    route();
  }));
  return button;
}

function forkButton(path, id, seq) {
  const button = el("button", { class: "link", type: "button", "data-fork": seq, text: "fork here" });
  button.addEventListener("click", () => {
    const name = el("input", { id: "fork-id", type: "text", value: id + "-at-" + seq });
    const label = el("label", { for: "fork-id", text: "new session id " });
    confirmAction("fork", async () => ["Fork the session after message " + seq + " as:", label, name, " "], async () => {
      const query = new URLSearchParams({ at: String(seq), id: name.value.trim() });
      const forked = await api(path + "/actions/fork?" + query, true);
      location.hash = "#/s/" + encodeURIComponent(forked.id);
    });
  });
  return button;
}

// The active summaries, each with its span and text; "sources" lists the messages it
// covers, and "summaries below" (a condensed one) the summaries it was made of, in turn
// opened the same way.
function summaryList(path, summaries, id) {
  if (!summaries.length) return el("p", { text: "No summaries." });
  return el("ol", { class: "summaries", ...(id ? { id } : {}) }, ...summaries.map((m) => {
    const sources = el("div", { class: "sources" });
    const open = el("button", { class: "link", type: "button", text: "sources" });
    open.addEventListener("click", async () => {
      try {
        const found = await api(path + "/summaries/" + m.id + "/sources");
        sources.replaceChildren(el("ol", { "data-sources": m.id }, ...found.sources.map((src) =>
          el("li", { "data-seq": src.seq }, src.seq + " " + src.role + " (" + src.tokens + " tokens): " + src.text))));
      } catch (error) {
        sources.replaceChildren(el("span", { class: "error", text: error.message }));
      }
    });
    const below = el("div", { class: "below" });
    const buttons = [open];
    if (m.kind === "condensed") {
      const openBelow = el("button", { class: "link", type: "button", "data-below": m.id, text: "summaries below" });
      openBelow.addEventListener("click", async () => {
        try {
          const found = await api(path + "/summaries/" + m.id + "/children");
          below.replaceChildren(summaryList(path, found.summaries));
        } catch (error) {
          below.replaceChildren(el("span", { class: "error", text: error.message }));
        }
      });
      buttons.push(" ", openBelow);
    }
    return el("li", { "data-summary": m.id, "data-kind": m.kind, "data-first": m.first_seq, "data-last": m.last_seq },
      el("p", {}, m.kind + " summary of seqs " + m.first_seq + "–" + m.last_seq + ": " +
        m.source_tokens + " → " + m.tokens + " tokens, " + m.facts + " facts kept, " + m.facts_lost + " lost ", ...buttons),
      el("div", { class: "original", text: m.content }), sources, below);
  }));
}

function ledgerTable(entries) {
  if (!entries.length) return el("p", { text: "The ledger is empty." });
  return el("table", { id: "ledger" },
    el("thead", {}, el("tr", {}, ...["kind", "entry", "status", "seqs", "exit codes"]
      .map((t) => el("th", { scope: "col", text: t })))),
    el("tbody", {}, ...entries.map((e) => el("tr", {},
      el("td", { text: e.kind }), el("td", { class: "text", text: e.text }), el("td", { text: e.status || "" }),
      el("td", { text: e.seqs.join(", ") }), el("td", { text: e.exit_codes.join(", ") })))));
}

async function sessionPage(id, from) {
  const path = "sessions/" + encodeURIComponent(id);
  const [s, page, history, summaries, ledger, builds] = await Promise.all([
    api(path), api(path + "/messages?from=" + from + "&limit=" + PAGE), api(path + "/events"),
    api(path + "/summaries"), api(path + "/ledger"), api(path + "/builds"),
  ]);
  const rows = page.messages.map((m) => messageRow(s, m, path));
  const nav = el("p", {});
  if (from > 1) nav.append(el("a", { href: "#/s/" + encodeURIComponent(id) + "/" + Math.max(1, from - PAGE), text: "earlier" }), " ");
  if (from + PAGE <= page.total) nav.append(el("a", { href: "#/s/" + encodeURIComponent(id) + "/" + (from + PAGE), text: "later" }));
  const events = el("ol", { id: "events" }, ...history.events.map((e) => eventItem(path, e)));
  show(
    el("h2", { text: "Session " + s.id }),
    el("p", { id: "summary", text: s.messages + " messages, " + s.turns + " turns, version " + s.version + ", budget " + s.budget_status }),
    el("section", {}, el("h3", { text: "The window (last build)" }), ...windowBar(s)),
    el("section", {}, el("h3", { text: "Each build against the window" }), budgetChart(builds, history.events)),
    el("section", {}, el("h3", { text: "Actions" }), compactButton(path),
      el("div", { id: "action", "aria-live": "polite" })),
    el("section", {}, el("h3", { text: "Messages" }), nav,
      el("table", { id: "messages" }, el("thead", {}, el("tr", {},
        ...["seq", "turn", "role", "tokens", "state", "what the model sees", ""].map((t) => el("th", { scope: "col", text: t })))),
        el("tbody", {}, ...rows))),
    el("section", {}, el("h3", { text: "Summaries" }), summaryList(path, summaries.summaries, "summaries")),
    el("section", {}, el("h3", { text: "Task ledger" }), ledgerTable(ledger.entries)),
    el("section", {}, el("h3", { text: "Compaction history" }), events),
  );
  // Live: an event joins the history as it commits; a new version (an append, a
  // compaction) redraws the page.
  const last = history.events.length ? history.events[history.events.length - 1].seq : 0;
  follow(path, String(last), (e) => events.append(eventItem(path, e)), (beat) => {
    if (beat.version !== s.version && !acting) route();
  });
}

function eventItem(path, e) {
  const revertible = ["CompactionCompleted", "ToolResultsCleared"];
  return el("li", { "data-event": e.seq, "data-kind": e.kind }, e.at + " " + e.kind + " " + JSON.stringify(e.detail) + " ",
    ...(revertible.includes(e.kind) ? [revertButton(path, e)] : []));
}

// The session's live stream (JSON lines: events, and a heartbeat with the version every
// second), read with fetch so the key goes as a header; opened again after the last
// cursor when it breaks, until the page changes.
async function follow(path, after, onEvent, onBeat) {
  const controller = new AbortController();
  live = controller;
  let cursor = after;
  while (!controller.signal.aborted) {
    try {
      const headers = {};
      const key = sessionStorage.getItem(KEY);
      if (key) headers["x-ctxd-key"] = key;
      const url = "/api/" + path + "/live?after=" + encodeURIComponent(cursor);
      const response = await fetch(url, { headers, signal: controller.signal });
      if (!response.ok) {
        const body = await response.json();
        failed(new Error(body.error ? body.error.message : "HTTP " + response.status));
        return;
      }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffered = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
          const line = JSON.parse(buffered.slice(0, end));
          buffered = buffered.slice(end + 1);
          if (line.event) {
            cursor = String(line.event.seq);
            onEvent(line.event);
          } else if (line.heartbeat) {
            cursor = line.heartbeat.cursor || cursor;
            onBeat(line.heartbeat);
          }
        }
      }
    } catch (error) {
      if (controller.signal.aborted) return;
    }
    // The stream ended or broke (a restart, a dropped connection): resume after a pause.
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function route() {
  if (live) live.abort();
  live = null;
  acting = false;
  const hash = location.hash.replace(/^#/, "");
  const session = hash.match(/^\/s\/([^/]+)(?:\/(\d+))?$/);
  const search = hash.startsWith("/?") ? hash.slice(2) : "";
  const page = session ? sessionPage(decodeURIComponent(session[1]), Number(session[2] || 1)) : listPage(search);
  page.catch(failed);
}

document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("key-form");
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const key = document.getElementById("key").value.trim();
    if (key) sessionStorage.setItem(KEY, key); else sessionStorage.removeItem(KEY);
    route();
  });
  window.addEventListener("hashchange", route);
  route();
});
