// Helpers every page of the app uses: building elements, calling the API, reading streams,
// remembered state, toasts and the side panel that shows a passage. Text from the server is
// inserted as text (el's children, textContent); the one way HTML reaches the page is
// markdown.js's renderMarkdown, through the vendored Markdown renderer and sanitiser, which
// this module loads only when the side panel first shows a passage (so a page that renders no
// Markdown never loads them).

// ---- elements ---------------------------------------------------------------------------
// el("button", {class: "x", text: "Go", on: {click: fn}, dataset: {id: 3}, "aria-label": "…"}, child…)
// Children are nodes or strings (always text, never HTML); null/undefined/false are skipped.
const PROPERTIES = new Set(["value", "checked", "selected", "indeterminate"]);
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = Array.isArray(value) ? value.filter(Boolean).join(" ") : value;
    else if (key === "text") node.textContent = value;
    else if (key === "on") for (const [name, fn] of Object.entries(value)) node.addEventListener(name, fn);
    else if (key === "dataset") for (const [name, v] of Object.entries(value)) node.dataset[name] = v;
    else if (PROPERTIES.has(key)) node[key] = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

// ---- the API ----------------------------------------------------------------------------
export class ApiError extends Error {
  constructor(status, message, hint = null, code = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.hint = hint;
    this.code = code;
  }
}

// fetch with the same-origin credentials (the token cookie). `options.json` is sent as a JSON
// body. Answers the parsed JSON (null for an empty body); throws ApiError on an HTTP error,
// with the server's {error: {message, hint}} or a readable stand-in.
export async function api(path, options = {}) {
  const { json, ...rest } = options;
  const init = { credentials: "same-origin", ...rest };
  if (json !== undefined) {
    init.method = init.method || "POST";
    init.headers = { "Content-Type": "application/json", ...(init.headers || {}) };
    init.body = JSON.stringify(json);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, "the app's server did not answer", "is `vaultseek serve` still running? Start it again and reload this page");
  }
  const type = response.headers.get("Content-Type") || "";
  const body = type.includes("json") ? await response.json().catch(() => null) : null;
  if (!response.ok) {
    const error = (body && body.error) || {};
    const message = error.message || `${response.status} ${response.statusText || "error"}`.trim();
    const hint = error.hint || (response.status === 404 ? "this server does not offer that (an older version?)" : "the server log has the details");
    throw new ApiError(response.status, message, hint, error.code || null);
  }
  return body;
}

// A document's API address: each path segment encoded whole, so "#", "?" and "%" in a file
// name stay part of the name.
export function documentUrl(path) {
  return `/api/documents/${String(path).split("/").map(encodeURIComponent).join("/")}`;
}

// A file attached to one conversation is cited as "attachment:<id>/<name>"; its passages come
// from the attachments API, and it is shown by its name alone.
const ATTACHMENT = /^attachment:([^/]+)\/(.*)$/;

function passagesUrl(path) {
  const attached = ATTACHMENT.exec(String(path));
  return attached ? `/api/attachments/${encodeURIComponent(attached[1])}/chunks` : `${documentUrl(path)}/chunks`;
}

export function shownPath(path) {
  const attached = ATTACHMENT.exec(String(path));
  return attached ? `${attached[2]} (attached)` : String(path);
}

// Read an NDJSON response line by line, calling onItem with each parsed object.
export async function readNdjson(response, onItem) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const flush = (final) => {
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line) onItem(JSON.parse(line));
    }
    if (final && buffer.trim()) { onItem(JSON.parse(buffer)); buffer = ""; }
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    flush(false);
  }
  buffer += decoder.decode();
  flush(true);
}

// Text with any HTML tags taken out (a snippet of a note with inline HTML), for textContent.
export function plainText(text) {
  return String(text ?? "").replace(/<\/?[A-Za-z][^<>]{0,400}>/g, " ").replace(/\s+/g, " ").trim();
}

// A snippet's Markdown emphasis as nodes: **bold** and __bold__ become <strong>, *it* and _it_
// <em>, `code` <code>; a [link](url) or [[note|alias]] shows its text; heading marks and stray
// ** (an emphasis the snippet cut in half) go. Only text nodes are made (never HTML), so
// nothing in a note can become markup; highlightTerms marks the query's words afterwards.
const INLINE = new RegExp([
  "`([^`\\n]{1,300})`",
  "(\\*\\*|__)(?=\\S)([^\\n]{0,400}?\\S)\\2",
  "(?<![\\p{L}\\p{N}*])\\*(?=[^\\s*])([^*\\n]{0,400}?[^\\s*])\\*(?![\\p{L}\\p{N}*])",
  "(?<![\\p{L}\\p{N}_])_(?=[^\\s_])([^_\\n]{0,400}?[^\\s_])_(?![\\p{L}\\p{N}_])",
  "!?\\[([^\\]\\n]{1,300})\\]\\([^)\\s]{0,1000}\\)",
  "\\[\\[(?:[^\\]|\\n]{1,300}\\|)?([^\\]|\\n]{1,300})\\]\\]",
].join("|"), "gu");

function bare(text) {
  return text.replace(/(^|\s)#{1,6}\s+/g, "$1").replace(/\*\*|__/g, "");
}

export function inlineMarkdown(text) {
  const source = String(text ?? "");
  const nodes = [];
  let at = 0;
  for (const m of source.matchAll(INLINE)) {
    if (m.index > at) nodes.push(bare(source.slice(at, m.index)));
    const [, code, , strong, em, under, link, wiki] = m;
    if (code !== undefined) nodes.push(el("code", {}, code));
    else if (strong !== undefined) nodes.push(el("strong", {}, bare(strong)));
    else if (em !== undefined || under !== undefined) nodes.push(el("em", {}, bare(em ?? under)));
    else nodes.push(bare(link ?? wiki));
    at = m.index + m[0].length;
  }
  if (at < source.length) nodes.push(bare(source.slice(at)));
  return nodes;
}

// Words too common to be worth marking in a passage.
const COMMON = new Set(("the and for are was were what how who why with from that this does did into about when which " +
  "your you have has can could would should will not but all any its our their there they them then than also " +
  "der die das und ist mit von les des est une pour").split(" "));

// Wrap the words of `query` (3+ letters, common words left out) in <mark> inside `root`'s
// text, outside code.
export function highlightTerms(root, query) {
  const words = (String(query || "").toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) || []).filter((w) => !COMMON.has(w));
  if (!words.length) return 0;
  const pattern = new RegExp(`(${[...new Set(words)].map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})`, "giu");
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walker.nextNode()) if (!walker.currentNode.parentElement.closest("code, pre, mark")) nodes.push(walker.currentNode);
  let count = 0;
  for (const node of nodes) {
    const parts = node.textContent.split(pattern);
    if (parts.length < 2) continue;
    const frag = document.createDocumentFragment();
    parts.forEach((part, i) => {
      if (!part) return;
      if (i % 2) { frag.append(el("mark", {}, part)); count++; } else frag.append(part);
    });
    node.replaceWith(frag);
  }
  return count;
}

// ---- words and numbers ---------------------------------------------------------------------
// One formatter each, made once (toLocaleString() builds a new Intl formatter per call, which
// cost 100–190 ms over a page of rows in a fresh page), and made on first use: the first Intl
// formatter of a fresh page loads the browser's locale data (80–170 ms measured), which a page
// that formats nothing, or formats without Intl as the knowledge base does, should not wait for.
const formatters = new Map();
function formatter(name, make) {
  if (!formatters.has(name)) formatters.set(name, make());
  return formatters.get(name);
}
const NUMBER = () => formatter("number", () => new Intl.NumberFormat());
const TIME = () => formatter("time", () => new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" }));
const DAY = () => formatter("day", () => new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric" }));

export function plural(n, one, many) {
  return `${NUMBER().format(Number(n))} ${Number(n) === 1 ? one : many}`;
}

export function formatSize(bytes) {
  if (bytes === null || bytes === undefined || Number.isNaN(Number(bytes))) return "";
  const n = Number(bytes);
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(1)} GB`;
}

export function formatDate(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso);
  const sameDay = date.toDateString() === new Date().toDateString();
  return sameDay ? TIME().format(date) : DAY().format(date);
}

// ---- remembered state ----------------------------------------------------------------------
const PREFIX = "vaultseek.";
export function remember(key, value) {
  try {
    if (value === undefined || value === null) localStorage.removeItem(PREFIX + key);
    else localStorage.setItem(PREFIX + key, JSON.stringify(value));
  } catch { /* storage full or disabled: the app works, it just forgets */ }
}

export function recall(key, fallback = null) {
  try {
    const raw = localStorage.getItem(PREFIX + key);
    return raw === null ? fallback : JSON.parse(raw);
  } catch {
    return fallback;
  }
}

// ---- toasts ------------------------------------------------------------------------------
export function toast(message, { kind = "info", timeout = kind === "error" ? 8000 : 4000 } = {}) {
  let box = document.getElementById("toasts");
  if (!box) { box = el("div", { id: "toasts", class: "toasts", role: "status", "aria-live": "polite" }); document.body.append(box); }
  const item = el("div", { class: `toast ${kind}`, role: kind === "error" ? "alert" : null },
    el("span", {}, message),
    el("button", { type: "button", class: "icon", "aria-label": "Dismiss", on: { click: () => item.remove() } }, "✕"));
  box.append(item);
  setTimeout(() => item.remove(), timeout);
  return item;
}

// ---- the side panel: one passage of a document ---------------------------------------------
let panelOpener = null;
let panelRequest = 0;

function panelParts() {
  const panel = document.getElementById("panel");
  return { panel, title: document.getElementById("panel-title"), where: document.getElementById("panel-where"), body: document.getElementById("panel-body") };
}

export function closePanel() {
  const { panel } = panelParts();
  if (!panel || panel.hidden) return;
  panel.hidden = true;
  document.body.classList.remove("panel-open");
  if (panelOpener && panelOpener.isConnected) panelOpener.focus();
  panelOpener = null;
}

// Open the side panel on `path`'s text with chunk `chunkId` marked and scrolled into view, its
// page/slide/row `label` named, and the words of `highlight` marked inside it.
export async function openPassage({ path, chunkId = null, label = "", highlight = "" }) {
  const { panel, title, where, body } = panelParts();
  if (!panel) return;
  const request = ++panelRequest;
  panelOpener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  title.textContent = shownPath(path).split("/").pop();
  where.textContent = [shownPath(path), label].filter(Boolean).join(" · ");
  body.replaceChildren(el("p", { class: "muted" }, "Loading…"));
  panel.hidden = false;
  document.body.classList.add("panel-open");
  panel.focus();
  try {
    const [{ chunks }, { renderMarkdown }] = await Promise.all([api(passagesUrl(path)), import("./markdown.js")]);
    if (request !== panelRequest) return;
    let cited = null;
    const sections = chunks.map((chunk) => {
      const isCited = chunk.id === chunkId;
      const section = el("section", { class: ["passage", isCited && "cited"], dataset: { chunkId: chunk.id }, "aria-current": isCited ? "true" : null },
        chunk.location && chunk.label ? el("h3", { class: "passage-label" }, chunk.label) : null,
        renderMarkdown(chunk.text));
      if (isCited) {
        cited = section;
        highlightTerms(section, highlight);
        if (label && !chunk.location && label !== chunk.section) section.prepend(el("h3", { class: "passage-label" }, label));
      }
      return section;
    });
    if (!chunks.length) sections.push(el("p", { class: "muted" }, "This document has no text in the index (yet)."));
    if (chunkId !== null && !cited) sections.unshift(el("p", { class: "notice warn" }, "The cited passage has changed since the answer was written; the document as it is now:"));
    body.replaceChildren(...sections);
    if (cited) {
      where.textContent = [shownPath(path), label || cited.querySelector(".passage-label")?.textContent].filter(Boolean).join(" · ");
      cited.scrollIntoView({ block: "start" });
    }
  } catch (error) {
    if (request !== panelRequest) return;
    body.replaceChildren(el("p", { class: "notice error", role: "alert" }, error.message, error.hint ? el("small", {}, error.hint) : null));
  }
}
