// The ctxd console: the tenant's sessions, one session's window, messages and history.
// Every value from a session is set as text (textContent), never as markup.
"use strict";

const KEY = "ctxd-console-key";
const PAGE = 100;
let poll = null;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (name === "class") node.className = value;
    // Through the CSSOM: the policy allows no inline style attribute.
    else if (name === "width" || name === "left") node.style[name] = value;
    else if (name === "text") node.textContent = String(value);
    else node.setAttribute(name, String(value));
  }
  for (const child of children) {
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function api(path) {
  const headers = {};
  const key = sessionStorage.getItem(KEY);
  if (key) headers["x-ctxd-key"] = key;
  const response = await fetch("/api/" + path, { headers });
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

async function listPage() {
  const found = await api("sessions");
  const rows = found.sessions.map((s) =>
    el("tr", {},
      el("td", {}, el("a", { href: "#/s/" + encodeURIComponent(s.id), text: s.id })),
      el("td", {}, el("span", { class: "badge " + s.budget_status, text: s.budget_status })),
      el("td", { text: s.messages }),
      el("td", { text: s.parent || s.forked_from || "" }),
      el("td", { text: s.updated_at }),
    ));
  const table = el("table", { id: "sessions" },
    el("thead", {}, el("tr", {},
      el("th", { scope: "col", text: "session" }), el("th", { scope: "col", text: "budget" }),
      el("th", { scope: "col", text: "messages" }), el("th", { scope: "col", text: "parent or source" }),
      el("th", { scope: "col", text: "last activity" }))),
    el("tbody", {}, ...rows));
  show(el("h2", { text: "Sessions" }), table);
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

function messageRow(s, m) {
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
    cell, el("td", {}, open));
}

async function sessionPage(id, from) {
  const path = "sessions/" + encodeURIComponent(id);
  const [s, page, history] = await Promise.all([
    api(path), api(path + "/messages?from=" + from + "&limit=" + PAGE), api(path + "/events"),
  ]);
  const rows = page.messages.map((m) => messageRow(s, m));
  const nav = el("p", {});
  if (from > 1) nav.append(el("a", { href: "#/s/" + encodeURIComponent(id) + "/" + Math.max(1, from - PAGE), text: "earlier" }), " ");
  if (from + PAGE <= page.total) nav.append(el("a", { href: "#/s/" + encodeURIComponent(id) + "/" + (from + PAGE), text: "later" }));
  const events = el("ol", { id: "events" }, ...history.events.map((e) =>
    el("li", {}, e.at + " " + e.kind + " " + JSON.stringify(e.detail))));
  show(
    el("h2", { text: "Session " + s.id }),
    el("p", { id: "summary", text: s.messages + " messages, " + s.turns + " turns, version " + s.version + ", budget " + s.budget_status }),
    el("section", {}, el("h3", { text: "The window (last build)" }), ...windowBar(s)),
    el("section", {}, el("h3", { text: "Messages" }), nav,
      el("table", { id: "messages" }, el("thead", {}, el("tr", {},
        ...["seq", "turn", "role", "tokens", "state", "what the model sees", ""].map((t) => el("th", { scope: "col", text: t })))),
        el("tbody", {}, ...rows))),
    el("section", {}, el("h3", { text: "Compaction history" }), events),
  );
  // Live: a new version (an append, a compaction) shows without a reload.
  poll = setInterval(async () => {
    try {
      const now = await api(path + "/events?after=" + (history.events.length ? history.events[history.events.length - 1].seq : 0));
      if (now.version !== s.version) {
        clearInterval(poll);
        route();
      }
    } catch (error) {
      clearInterval(poll);
      failed(error);
    }
  }, 500);
}

function route() {
  if (poll) clearInterval(poll);
  const hash = location.hash.replace(/^#/, "");
  const session = hash.match(/^\/s\/([^/]+)(?:\/(\d+))?$/);
  const page = session ? sessionPage(decodeURIComponent(session[1]), Number(session[2] || 1)) : listPage();
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
