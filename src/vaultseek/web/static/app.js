"use strict";
// vaultseek study: a small hand-written client for the local JSON API. No framework, no
// build step, nothing loaded from anywhere but this server. All text from the server is
// inserted with textContent, never as HTML.

const $ = (selector) => document.querySelector(selector);
const state = { conversationId: null, streaming: null, categories: [], ingest: null };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== null && value !== undefined && value !== false) node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child);
  return node;
}

async function api(path, { onResponse, ...options } = {}) {
  const response = await fetch(path, { credentials: "same-origin", ...options });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = body.error || { message: `HTTP ${response.status}` };
    throw Object.assign(new Error(error.message), { hint: error.hint, code: error.code });
  }
  if (onResponse) onResponse(response);
  return body;
}

// A document's API address: each path segment encoded whole, so "#", "?" and "%" in a file
// name stay part of the name (encodeURI leaves "#" and "?" alone, which cut the path short).
function documentUrl(path) {
  return `/api/documents/${path.split("/").map(encodeURIComponent).join("/")}`;
}

// The server's own time for a request, from its Server-Timing header ("search;dur=1.23").
function serverMs(response) {
  const match = /dur=([\d.]+)/.exec(response.headers.get("Server-Timing") || "");
  return match ? Number(match[1]) : null;
}

// Read an NDJSON response line by line, calling onItem for each parsed object.
async function readNdjson(response, onItem) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line) onItem(JSON.parse(line));
    }
  }
}

const split = (text) => text.split(",").map((s) => s.trim()).filter(Boolean);
const size = (n) => n == null ? "" : n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1048576).toFixed(1)} MB`;

// ---- pages ----------------------------------------------------------------------------
function showPage() {
  const page = (location.hash || "#chat").slice(1);
  for (const section of document.querySelectorAll(".page")) section.hidden = section.id !== `page-${page}`;
  for (const link of document.querySelectorAll("nav a")) {
    if (link.dataset.page === page) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
  }
  if (page === "kb") loadDocuments();
  if (page === "privacy") loadPrivacy();
  if (page === "chat") $("#question").focus();
  if (page === "search") $("#search-q").focus();
}

async function loadStatus() {
  const badge = $("#llm-status");
  try {
    const status = await api("/api/status");
    const llm = status.llm;
    badge.textContent = llm.ok ? `model: ${llm.model} (${llm.backend})` : `model unavailable: ${llm.message}${llm.hint ? " — " + llm.hint : ""}`;
    badge.className = "badge " + (llm.ok ? "ok" : "bad");
    if (status.index && status.index.indexing_error) {
      badge.textContent += ` · indexing failed: ${status.index.indexing_error}`;
      badge.className = "badge bad";
    }
    $("#think").checked = !!status.settings.think;
  } catch (error) {
    badge.textContent = `status: ${error.message}`;
    badge.className = "badge bad";
  }
}

// ---- chat -----------------------------------------------------------------------------
function scopeFromForm() {
  const scope = {};
  const categories = [...$("#scope-categories").selectedOptions].map((o) => o.value);
  if (categories.length) scope.categories = categories;
  const folders = split($("#scope-folders").value), tags = split($("#scope-tags").value), paths = split($("#scope-paths").value);
  if (folders.length) scope.folders = folders;
  if (tags.length) scope.tags = tags;
  if (paths.length) scope.paths = paths;
  return scope;
}

function messageView(role) {
  const node = el("article", { class: `msg ${role}` });
  const parts = { node };
  if (role === "assistant") {
    parts.thinkingBox = el("details", { class: "thinking", hidden: true }, el("summary", {}, "Thinking"), parts.thinking = el("pre"));
    parts.answer = el("div", { class: "answer" });
    parts.tools = el("div", { class: "tool-note" });
    parts.citations = el("div", { class: "citations", role: "list", "aria-label": "Sources" });
    parts.meta = el("div", { class: "meta" });
    node.append(parts.thinkingBox, parts.tools, parts.answer, parts.citations, parts.meta);
  } else {
    parts.answer = el("div", { class: "answer" });
    node.append(parts.answer);
  }
  $("#messages").append(node);
  return parts;
}

function renderCitations(view, citations) {
  view.citations.replaceChildren(...citations.map((c) =>
    el("button", { type: "button", class: "citation", role: "listitem", onclick: () => openSource(c.path, c.chunk_id, c.label) },
      el("b", {}, `[${c.n}] `), `${c.path}${c.label ? " · " + c.label : ""}`, el("span", {}, c.snippet))));
}

function renderError(view, data) {
  view.answer.after(el("p", { class: "error", role: "alert" }, data.message, data.hint ? el("small", {}, data.hint) : null));
}

function renderDone(view, data) {
  const t = data.timings || {}, tk = data.tokens || {};
  const bits = [];
  if (t.first_token_ms != null) bits.push(`first token ${Math.round(t.first_token_ms)} ms`);
  if (t.total_ms != null) bits.push(`total ${(t.total_ms / 1000).toFixed(1)} s`);
  if (tk.prompt || tk.completion) bits.push(`${tk.prompt || 0} prompt + ${tk.completion || 0} answer tokens`);
  if (data.stopped) bits.push("stopped");
  view.meta.textContent = bits.join(" · ");
}

async function ask(event) {
  event.preventDefault();
  const question = $("#question").value.trim();
  if (!question || state.streaming) return;
  $("#question").value = "";
  messageView("user").answer.textContent = question;
  const view = messageView("assistant");
  view.answer.textContent = "…";
  const controller = new AbortController();
  state.streaming = controller;
  $("#send").disabled = true; $("#stop").disabled = false;
  let started = false;
  try {
    const response = await fetch("/api/chat", {
      method: "POST", credentials: "same-origin", signal: controller.signal,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ question, conversation_id: state.conversationId, scope: scopeFromForm(), think: $("#think").checked }),
    });
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      renderError(view, body.error || { message: `HTTP ${response.status}` });
      view.answer.textContent = "";
      return;
    }
    state.conversationId = response.headers.get("X-Conversation-Id");
    await readNdjson(response, (item) => {
      const data = item.data;
      if (item.type === "thinking") { view.thinkingBox.hidden = false; view.thinking.textContent += data.text; }
      else if (item.type === "metadata") {
        renderCitations(view, data.citations);
        if (data.tool_call) view.tools.append(el("div", {}, `used ${data.tool_call.name}`));
      } else if (item.type === "text") {
        if (!started) { view.answer.textContent = ""; started = true; }
        view.answer.textContent += data.text;
      } else if (item.type === "error") renderError(view, data);
      else if (item.type === "done") { renderDone(view, data); if (!started) view.answer.textContent = ""; }
      $("#messages").scrollTop = $("#messages").scrollHeight;
    });
  } catch (error) {
    if (error.name !== "AbortError") renderError(view, { message: `the connection broke: ${error.message}` });
  } finally {
    state.streaming = null;
    $("#send").disabled = false; $("#stop").disabled = true;
    loadConversations();
  }
}

async function stop() {
  if (state.conversationId) await api(`/api/chat/${state.conversationId}/stop`, { method: "POST" }).catch(() => {});
}

async function loadConversations() {
  const { conversations } = await api("/api/conversations").catch(() => ({ conversations: [] }));
  $("#conversation-list").replaceChildren(...conversations.map((c) => el("li", {},
    el("button", { type: "button", "aria-current": c.id === state.conversationId ? "true" : null, title: c.title, onclick: () => resume(c.id) }, c.title))));
}

async function resume(id) {
  const conversation = await api(`/api/conversations/${id}`);
  state.conversationId = id;
  $("#messages").replaceChildren();
  for (const message of conversation.messages) {
    const view = messageView(message.role);
    view.answer.textContent = message.content;
    if (message.role === "assistant") {
      if (message.thinking) { view.thinkingBox.hidden = false; view.thinking.textContent = message.thinking; }
      renderCitations(view, message.citations);
      if (message.meta.error) renderError(view, message.meta.error);
      renderDone(view, message.meta);
    }
  }
  loadConversations();
}

function newChat() {
  state.conversationId = null;
  $("#messages").replaceChildren();
  loadConversations();
  $("#question").focus();
}

async function openSource(path, chunkId, label) {
  const dialog = $("#viewer");
  $("#viewer-title").textContent = `${path}${label ? " · " + label : ""}`;
  $("#viewer-body").replaceChildren(el("p", {}, "Loading…"));
  dialog.showModal();
  try {
    const { chunks } = await api(`${documentUrl(path)}/chunks`);
    const nodes = chunks.map((c) => el("section", { class: "chunk" + (c.id === chunkId ? " cited" : ""), id: `chunk-${c.id}` },
      el("h3", {}, c.label || c.section || "—"), c.text));
    $("#viewer-body").replaceChildren(...nodes);
    const cited = document.getElementById(`chunk-${chunkId}`);
    if (cited) cited.scrollIntoView({ block: "center" });
  } catch (error) {
    $("#viewer-body").replaceChildren(el("p", { class: "error" }, error.message));
  }
}

// ---- knowledge base -------------------------------------------------------------------
async function loadDocuments() {
  try {
    const { documents, categories } = await api("/api/documents");
    state.categories = categories;
    renderCategoryChoices();
    $("#category-summary").replaceChildren(...categories.map((c) => el("span", {}, `${c.name}: ${c.documents}`)));
    $("#documents tbody").replaceChildren(...documents.map(documentRow));
  } catch (error) {
    $("#upload-message").textContent = error.message;
  }
}

function documentRow(doc) {
  const job = state.ingest && state.ingest[doc.path];
  const category = el("input", { value: doc.category || "", "aria-label": `Category of ${doc.path}`, size: 10, list: "category-names" });
  category.addEventListener("change", async () => {
    try { await api(`${documentUrl(doc.path)}/category`, { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ category: category.value || null }) }); loadDocuments(); }
    catch (error) { $("#upload-message").textContent = error.message; }
  });
  const remove = doc.deletable ? el("button", { type: "button", class: "secondary", "aria-label": `Delete ${doc.path}`, onclick: async () => {
    if (!confirm(`Delete ${doc.path} and its chunks?`)) return;
    try { await api(documentUrl(doc.path), { method: "DELETE" }); } catch (error) { $("#upload-message").textContent = error.message; }
    setTimeout(loadDocuments, 300);
  } }, "Delete") : "";
  const status = job ? job.status : doc.status;
  const timeline = job ? el("ol", { class: "timeline", "aria-label": `Steps for ${doc.path}` }, job.steps.map((s) => el("li", {}, s.step + (s.detail ? ` (${s.detail})` : "")))) : null;
  return el("tr", { "data-path": doc.path },
    el("td", { class: "path" }, doc.path, timeline),
    el("td", {}, doc.kind || ""), el("td", {}, size(doc.size)), el("td", {}, String(doc.chunks ?? "")),
    el("td", { class: `status-${status}`, title: doc.error || "" }, status + (doc.error ? `: ${doc.error}` : "")),
    el("td", {}, category), el("td", {}, remove));
}

function renderCategoryChoices() {
  const names = state.categories.map((c) => c.name);
  let list = document.getElementById("category-names");
  if (!list) { list = el("datalist", { id: "category-names" }); document.body.append(list); }
  list.replaceChildren(...names.map((n) => el("option", { value: n })));
  const chosen = new Set([...$("#scope-categories").selectedOptions].map((o) => o.value));
  $("#scope-categories").replaceChildren(...names.map((n) => el("option", { value: n, selected: chosen.has(n) }, n)));
  const current = $("#search-category").value;
  $("#search-category").replaceChildren(el("option", { value: "" }, "any"), ...names.map((n) => el("option", { value: n, selected: n === current }, n)));
}

async function upload(files) {
  if (!files.length) return;
  const form = new FormData();
  const category = $("#upload-category").value.trim();
  if (category) form.append("category", category);
  for (const file of files) form.append("file", file, file.name);
  $("#upload-message").textContent = `Uploading ${files.length} file(s)…`;
  try {
    const { uploaded } = await api("/api/documents", { method: "POST", body: form });
    $("#upload-message").textContent = `Uploaded ${uploaded.map((u) => u.path).join(", ")}; indexing…`;
  } catch (error) {
    $("#upload-message").textContent = `${error.message}${error.hint ? " — " + error.hint : ""}`;
  }
  $("#file-input").value = "";
  loadDocuments();
}

async function followIngestion() {
  state.ingest = {};
  for (;;) {
    try {
      const response = await fetch("/api/ingest/events", { credentials: "same-origin" });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      await readNdjson(response, (item) => {
        const jobs = item.type === "snapshot" ? item.data : item.type === "job" ? [item.data] : [];
        for (const job of jobs) state.ingest[job.path] = job;
        if (jobs.length && !$("#page-kb").hidden) loadDocumentsSoon();
        if (jobs.some((j) => j.status === "indexed")) $("#upload-message").textContent = `Indexed ${jobs.filter((j) => j.status === "indexed").map((j) => j.path).join(", ")}`;
      });
    } catch (error) { /* the server restarted or the tab slept: retry below */ }
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

let pending = null;
function loadDocumentsSoon() { clearTimeout(pending); pending = setTimeout(loadDocuments, 150); }

// ---- search ---------------------------------------------------------------------------
async function search(event) {
  event.preventDefault();
  const params = new URLSearchParams({ q: $("#search-q").value, mode: $("#search-mode").value, k: "20" });
  for (const [name, selector] of [["categories", "#search-category"], ["folders", "#search-folder"], ["tags", "#search-tag"], ["kinds", "#search-kind"]]) {
    const value = $(selector).value.trim();
    if (value) params.append(name, value);
  }
  try {
    let took = null;
    const body = await api(`/api/search?${params}`, { onResponse: (response) => { took = serverMs(response); } });
    $("#search-meta").textContent = `${body.results.length} results in ${took ?? "?"} ms (server)` + (body.notices.length ? ` — ${body.notices.join("; ")}` : "");
    $("#search-results").replaceChildren(...body.results.map((r) => el("li", {},
      el("button", { type: "button", class: "citation", onclick: () => openSource(r.path, r.chunk_id, r.label) },
        el("span", { class: "where" }, `${r.path}${r.label ? " · " + r.label : ""}`), el("span", {}, r.snippet)),
      el("div", { class: "why" }, `score ${r.score.toFixed(3)} · bm25 #${r.bm25_rank ?? "–"} · vector #${r.vec_rank ?? "–"}`))));
  } catch (error) {
    $("#search-meta").textContent = `${error.message}${error.hint ? " — " + error.hint : ""}`;
  }
}

// ---- privacy --------------------------------------------------------------------------
async function loadPrivacy() {
  try {
    const p = await api("/api/privacy");
    const rows = p.network.connections.map((c) => el("tr", {},
      el("td", { class: c.kind === "other" ? "net-other" : "" }, c.kind), el("td", {}, c.local.join(":")), el("td", {}, c.remote.join(":")), el("td", {}, c.state)));
    const verdict = !p.network.supported ? el("p", {}, "Live connection check needs Linux /proc.")
      : p.network.ok ? el("p", { class: "net-ok" }, "Only local clients and the LLM host are connected.")
      : el("p", { class: "net-other", role: "alert" }, "Connections to other hosts found (red below).");
    $("#privacy-body").replaceChildren(
      el("dl", { class: "facts" },
        el("dt", {}, "Documents"), el("dd", {}, String(p.documents)),
        el("dt", {}, "Notes"), el("dd", {}, String(p.notes)),
        el("dt", {}, "Chunks"), el("dd", {}, String(p.chunks)),
        el("dt", {}, "LLM host"), el("dd", {}, `${p.llm.url} (${p.llm.backend}, ${p.llm.model})`),
        el("dt", {}, "Telemetry"), el("dd", {}, p.telemetry)),
      verdict,
      el("div", { class: "table-wrap" }, el("table", {}, el("caption", {}, "Live network connections of the server process"),
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Kind"), el("th", { scope: "col" }, "Local"), el("th", { scope: "col" }, "Remote"), el("th", { scope: "col" }, "State"))),
        el("tbody", {}, rows))));
  } catch (error) {
    $("#privacy-body").replaceChildren(el("p", { class: "error" }, error.message));
  }
}

// ---- wiring ---------------------------------------------------------------------------
function setUp() {
  window.addEventListener("hashchange", showPage);
  $("#chat-form").addEventListener("submit", ask);
  $("#question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); $("#chat-form").requestSubmit(); }
  });
  $("#stop").addEventListener("click", stop);
  $("#new-chat").addEventListener("click", newChat);
  $("#search-form").addEventListener("submit", search);
  $("#privacy-refresh").addEventListener("click", loadPrivacy);
  $("#upload-form").addEventListener("submit", (event) => event.preventDefault());
  $("#file-input").addEventListener("change", () => upload([...$("#file-input").files]));
  const zone = $("#dropzone");
  for (const name of ["dragenter", "dragover"]) zone.addEventListener(name, (event) => { event.preventDefault(); zone.classList.add("over"); });
  for (const name of ["dragleave", "drop"]) zone.addEventListener(name, () => zone.classList.remove("over"));
  zone.addEventListener("drop", (event) => { event.preventDefault(); upload([...event.dataTransfer.files]); });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && state.streaming) stop();
  });
  showPage();
  loadStatus();
  loadConversations();
  loadDocuments();
  followIngestion();
}

document.addEventListener("DOMContentLoaded", setUp);
