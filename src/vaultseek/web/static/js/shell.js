// The app's shell: one page, one navigation. Each section is a page module under ./pages/,
// imported the first time it is shown and kept mounted (hidden) when another is shown, so its
// state survives. The hash names the section (#chat, #kb, #search, #map, #hub, #dashboard,
// #privacy), with an optional sub-route after a slash (#hub/material/12); the last one is
// remembered and reopened on the next visit (head.js, run before the page is drawn, has already
// asked for the opening section's module: keep its MODULES in step with ROUTES). The header
// also shows the model's state and switches the theme.

import { api, closePanel, el, recall, remember, toast } from "./ui.js";

const ROUTES = {
  chat: { module: "chat", title: "Chat" },
  kb: { module: "library", title: "Knowledge base" },
  search: { module: "search", title: "Search" },
  map: { module: "map", title: "Map" },
  hub: { module: "hub", title: "Study hub" },
  dashboard: { module: "dashboard", title: "Dashboard" },
  privacy: { module: "privacy", title: "Privacy" },
};
const DEFAULT_ROUTE = "chat";
const STATUS_EVERY_MS = 30_000;
const FIRST_STATUS_WITHIN_MS = 1_000;

const pages = new Map(); // route name → {root, module (once loaded), loading (promise)}
let current = null;
let lastStatus = null;
const statusListeners = new Set();

function parseHash(hash) {
  const raw = String(hash || "").replace(/^#/, "");
  let text = raw;
  // A bare % (an address written by hand, or a section remembered decoded by an older
  // version) is no escape: read as written, where decodeURIComponent threw and nothing opened.
  try { text = decodeURIComponent(raw); } catch { /* as written */ }
  const slash = text.indexOf("/");
  const name = slash < 0 ? text : text.slice(0, slash);
  const sub = slash < 0 ? "" : text.slice(slash + 1);
  return ROUTES[name] ? { name, sub } : null;
}

// A section as its address (#search/20%25%20off): what parseHash reads back to the same.
function hashOf(target) {
  return `${target.name}${target.sub ? "/" + encodeURIComponent(target.sub) : ""}`;
}

function navigate(hash) {
  const target = hash.startsWith("#") ? hash : `#${hash}`;
  if (location.hash === target) route(); else location.hash = target;
}

const context = {
  navigate,
  status: () => lastStatus,
  onStatus(fn) { statusListeners.add(fn); if (lastStatus) fn(lastStatus); return () => statusListeners.delete(fn); },
  refreshStatus: () => loadStatus(),
  toast,
  api,
};

async function load(name) {
  let page = pages.get(name);
  if (page) return page;
  const root = el("section", { class: `page page-${name}`, id: `page-${name}`, "aria-label": ROUTES[name].title });
  document.getElementById("app").append(root);
  page = { root, module: null };
  pages.set(name, page);
  page.loading = (async () => {
    try {
      const module = await import(`./pages/${ROUTES[name].module}.js`);
      await module.mount(root, context);
      page.module = module;
    } catch (error) {
      console.error(error);
      root.replaceChildren(el("div", { class: "notice error page-failed", role: "alert" },
        el("strong", {}, `The ${ROUTES[name].title.toLowerCase()} section could not be loaded.`),
        el("p", {}, String(error && error.message ? error.message : error)),
        el("p", { class: "muted" }, "The other sections still work. Reload the page to try again; if it keeps failing, the server log may say why.")));
    }
  })();
  return page;
}

async function route() {
  let target = parseHash(location.hash);
  if (!target) {
    const remembered = parseHash(recall("section", ""));
    target = remembered || { name: DEFAULT_ROUTE, sub: "" };
    history.replaceState(null, "", `#${hashOf(target)}`);
  }
  remember("section", hashOf(target));
  for (const link of document.querySelectorAll(".app-nav a")) {
    if (link.dataset.route === target.name) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
  }
  document.title = `${ROUTES[target.name].title} · vaultseek`;
  const switching = current !== target.name;
  if (switching && current) {
    const previous = pages.get(current);
    if (previous) {
      previous.root.hidden = true;
      try { previous.module?.hide?.(); } catch (error) { console.error(error); }
    }
    closePanel();
  }
  current = target.name;
  const page = await load(target.name);
  if (current !== target.name) return; // another section was chosen while this one loaded
  page.root.hidden = false;
  await page.loading;
  if (current !== target.name) return;
  try { page.module?.show?.(target.sub); } catch (error) { console.error(error); }
  if (switching) document.querySelector(".app-nav a[aria-current]")?.scrollIntoView({ block: "nearest", inline: "nearest" });
}

// ---- the model's state ----------------------------------------------------------------
// The server says how to fix a model server that does not answer (/api/status's llm.hint).
function statusHint(llm) {
  return llm.hint || `check the model server the app asks at ${llm.url}`;
}

async function loadStatus() {
  const button = document.getElementById("model-status");
  const label = button.querySelector(".label");
  try {
    const status = await api("/api/status");
    const llm = status.llm || {};
    if (!llm.ok) llm.hint = statusHint(llm);
    lastStatus = status;
    button.className = `model-status ${llm.ok ? "ok" : "down"}`;
    label.textContent = llm.ok ? llm.model : "model offline";
    button.title = llm.ok ? `${llm.model} on ${llm.url} (${llm.backend})` : `${llm.message || "the model server is not answering"} — ${llm.hint}`;
    button.setAttribute("aria-label", llm.ok ? `Model ${llm.model} is ready` : `The model is offline: ${llm.hint}`);
  } catch (error) {
    lastStatus = { llm: { ok: false, message: error.message, hint: error.hint }, error: true };
    button.className = "model-status down";
    label.textContent = "server offline";
    button.title = `${error.message} — ${error.hint || ""}`;
  }
  for (const fn of statusListeners) { try { fn(lastStatus); } catch (error) { console.error(error); } }
  return lastStatus;
}

function showStatus() {
  const llm = lastStatus?.llm;
  if (!llm) return;
  if (llm.ok) toast(`Answers come from ${llm.model} at ${llm.url} (${llm.backend}), on this machine or the host you configured.`);
  else toast(`${llm.message || "The model server is not answering"}. Fix: ${llm.hint}`, { kind: "error" });
  loadStatus();
}

// ---- theme ------------------------------------------------------------------------------
function effectiveTheme() {
  const chosen = document.documentElement.dataset.theme;
  if (chosen) return chosen;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

function labelThemeToggle() {
  const next = effectiveTheme() === "dark" ? "light" : "dark";
  const button = document.getElementById("theme-toggle");
  button.setAttribute("aria-label", `Switch to the ${next} theme`);
  button.title = `Switch to the ${next} theme`;
  button.textContent = next === "dark" ? "☾" : "☀";
}

function toggleTheme() {
  const next = effectiveTheme() === "dark" ? "light" : "dark";
  document.documentElement.dataset.theme = next;
  remember("theme", next);
  labelThemeToggle();
}

// ---- wiring -------------------------------------------------------------------------------
function start() {
  window.addEventListener("hashchange", route);
  document.getElementById("model-status").addEventListener("click", showStatus);
  document.getElementById("theme-toggle").addEventListener("click", toggleTheme);
  document.getElementById("panel-close").addEventListener("click", closePanel);
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", labelThemeToggle);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !document.getElementById("panel").hidden) { event.preventDefault(); closePanel(); }
  });
  labelThemeToggle();
  // The header's real height (on a phone its links wrap onto one or two more lines), for what
  // sticks below it: --header-bottom.
  const header = document.querySelector(".app-header");
  new ResizeObserver(() => document.documentElement.style.setProperty("--header-bottom", `${header.offsetHeight}px`)).observe(header);
  // The model's state is asked for once the opening section has drawn (a second at most):
  // asked at once, it would compete with the section's own first requests.
  const opened = route();
  Promise.race([opened, new Promise((resolve) => setTimeout(resolve, FIRST_STATUS_WITHIN_MS))]).finally(loadStatus);
  setInterval(() => { if (document.visibilityState === "visible") loadStatus(); }, STATUS_EVERY_MS);
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") loadStatus(); });
}

start();
