// The chat: questions answered from the user's documents, streamed as NDJSON envelopes
// (metadata, thinking, text, error, done; see study/chat.py). Answers are rendered Markdown with
// each [n] a button that opens the cited passage in the side panel; only the sources that passed
// the relevance threshold come back. Questions can be edited or asked again, answers copied,
// follow-ups picked; when the model is down the conversation says how to start it and still
// shows the passages found.

import { api, ApiError, el, formatDate, openPassage, plainText, plural, readNdjson, recall, remember, shownPath, toast } from "../ui.js";
import { renderMarkdown } from "../markdown.js";

export const title = "Chat";

const DOWN_CODES = new Set(["llm_unavailable", "model_missing"]);
const state = {
  root: null, ctx: null, cid: null, streaming: null, models: null, attachments: null,
  conversations: [], think: false, parts: {},
};

// ---- mounting ---------------------------------------------------------------------------
export async function mount(root, ctx) {
  state.root = root;
  state.ctx = ctx;
  const p = state.parts;
  p.list = el("ul", { class: "conversation-list", "aria-label": "Saved conversations" });
  p.listToggle = el("button", { type: "button", class: "secondary list-toggle", "aria-expanded": "false", on: { click: toggleList } }, "Conversations");
  p.sidebar = el("aside", { class: "chat-sidebar", "aria-label": "Conversations" },
    el("div", { class: "sidebar-head" },
      el("button", { type: "button", class: "new-chat", "aria-label": "New conversation", on: { click: newConversation } }, "+ New", el("span", { class: "wide-only" }, "conversation")),
      p.listToggle),
    p.list);
  p.messages = el("div", { class: "messages", role: "log", "aria-live": "polite", "aria-label": "Conversation" });
  p.question = el("textarea", { name: "question", rows: 2, placeholder: "Ask your documents…", "aria-label": "Your question", autocomplete: "off", enterkeyhint: "send" });
  p.ask = el("button", { type: "submit", class: "ask", disabled: true }, "Ask");
  p.stop = el("button", { type: "button", class: "secondary stop", hidden: true, on: { click: stop } }, "Stop");
  p.scope = el("div", { class: "scope-chips chips", "aria-label": "Sources this chat is limited to" });
  p.model = el("select", { class: "model-select", "aria-label": "Model", title: "The model that answers" });
  p.think = el("input", { type: "checkbox", class: "think" });
  p.attachSlot = el("div", { class: "composer-attachments" });
  p.form = el("form", { class: "composer", "aria-label": "Ask a question" },
    p.scope,
    p.attachSlot,
    p.question,
    el("div", { class: "composer-bar" },
      el("div", { class: "composer-options" },
        p.model,
        el("label", { class: "check", title: "Show the model's reasoning (models that expose it)" }, p.think, "Thinking")),
      el("div", { class: "composer-actions" }, p.stop, p.ask)));
  p.main = el("div", { class: "chat-main" }, p.messages, p.form);
  root.append(el("h1", { class: "visually-hidden" }, "Chat"), el("div", { class: "chat" }, p.sidebar, p.main));

  p.form.addEventListener("submit", (event) => { event.preventDefault(); ask(p.question.value); });
  p.question.addEventListener("input", () => { updateButtons(); autosize(); });
  p.question.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) { event.preventDefault(); p.form.requestSubmit(); }
  });
  p.model.addEventListener("change", () => remember("chat.model", p.model.value));
  p.think.addEventListener("change", () => remember("chat.think", p.think.checked));
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && state.streaming && !root.hidden) stop();
  });
  ctx.onStatus((status) => { statusChanged(status); });

  renderScope();
  mountAttachmentsIfThere();
  loadModels();
  await loadConversations();
  const remembered = recall("chat.conversation", null);
  if (remembered && state.conversations.some((c) => c.id === remembered)) await resume(remembered);
  else renderEmpty();
}

export function show() {
  renderScope();
  updateButtons();
  if (!matchMedia("(max-width: 720px)").matches) state.parts.question.focus({ preventScroll: true });
}

export function hide() {}

// ---- the composer ---------------------------------------------------------------------
function autosize() {
  const q = state.parts.question;
  q.style.height = "auto";
  q.style.height = `${Math.min(q.scrollHeight + 2, 240)}px`;
}

function updateButtons() {
  const p = state.parts;
  const empty = !p.question.value.trim();
  p.ask.disabled = empty || !!state.streaming;
  p.ask.title = state.streaming ? "Wait for the answer, or stop it" : empty ? "Type a question first" : "Ask (Enter)";
  p.stop.hidden = !state.streaming;
  for (const button of state.root.querySelectorAll("[data-needs-idle]")) button.disabled = !!state.streaming;
}

function scopePaths() {
  const scope = recall("chat.scope", null);
  return Array.isArray(scope?.paths) ? scope.paths.filter((p) => typeof p === "string") : [];
}

function renderScope() {
  const paths = scopePaths();
  const p = state.parts;
  if (!paths.length) { p.scope.replaceChildren(); p.scope.hidden = true; return; }
  p.scope.hidden = false;
  const remove = (path) => {
    const left = scopePaths().filter((x) => x !== path);
    remember("chat.scope", left.length ? { paths: left } : null);
    renderScope();
  };
  p.scope.replaceChildren(
    el("span", { class: "scope-label muted" }, "Only from:"),
    ...paths.map((path) => el("span", { class: "chip", title: path },
      el("span", { class: "chip-text" }, path.split("/").pop()),
      el("button", { type: "button", "aria-label": `Stop limiting the chat to ${path}`, on: { click: () => remove(path) } }, "✕"))),
    el("button", { type: "button", class: "ghost small", on: { click: () => { remember("chat.scope", null); renderScope(); } } }, "All sources"));
}

async function mountAttachmentsIfThere() {
  try {
    const module = await import("../attachments.js");
    if (typeof module.mountAttachments !== "function") return;
    state.attachments = module.mountAttachments(state.parts.form, { api, toast });
    const element = state.attachments?.element;
    if (element && !element.isConnected) state.parts.attachSlot.append(element);
    state.attachments?.onChange?.(() => updateButtons());
  } catch (error) {
    // No attachments module on this server: the chat works without the attach button.
    state.attachments = null;
  }
}

async function loadModels() {
  const p = state.parts;
  const chosen = recall("chat.model", null);
  try {
    const { models, current } = await api("/api/models");
    state.models = models || [];
    const names = state.models.map((m) => m.name);
    if (current && !names.includes(current)) names.unshift(current);
    p.model.replaceChildren(...names.map((name) => {
      const info = state.models.find((m) => m.name === name);
      const label = info && info.vision ? `${name} · sees images` : name;
      return el("option", { value: name, selected: name === (names.includes(chosen) ? chosen : current) }, label);
    }));
    p.model.dataset.current = current || "";
    p.model.disabled = names.length < 2;
    p.model.hidden = names.length === 0;
  } catch (error) {
    // The server cannot list models (an older server, or the model server is down): show the
    // configured one, from the status line.
    state.models = null;
    const current = state.ctx.status()?.llm?.model;
    p.model.replaceChildren(...(current ? [el("option", { value: current }, current)] : []));
    p.model.dataset.current = current || "";
    p.model.disabled = true;
    p.model.hidden = !current;
    p.model.title = "This server does not list its models; the configured one answers";
  }
}

function statusChanged(status) {
  const p = state.parts;
  if (status?.settings && recall("chat.think", null) === null) p.think.checked = !!status.settings.think;
  else p.think.checked = !!recall("chat.think", false);
  if (state.models === null && status?.llm?.model && !p.model.options.length) {
    p.model.replaceChildren(el("option", { value: status.llm.model }, status.llm.model));
    p.model.dataset.current = status.llm.model;
    p.model.hidden = false;
  }
  const welcome = state.root.querySelector(".chat-welcome .welcome-status");
  if (welcome) welcome.replaceWith(welcomeStatus(status));
}

// ---- conversations --------------------------------------------------------------------
function toggleList() {
  const open = state.parts.sidebar.classList.toggle("open");
  state.parts.listToggle.setAttribute("aria-expanded", String(open));
}

async function loadConversations() {
  try {
    const { conversations } = await api("/api/conversations");
    state.conversations = conversations;
  } catch (error) {
    state.conversations = [];
  }
  const p = state.parts;
  p.listToggle.textContent = `Conversations (${state.conversations.length})`;
  if (!state.conversations.length) {
    p.list.replaceChildren(el("li", { class: "muted empty-list" }, "No saved conversations yet."));
    return;
  }
  p.list.replaceChildren(...state.conversations.map((c) => el("li", { class: c.id === state.cid ? "current" : null },
    el("button", { type: "button", class: "conversation", title: c.title, "aria-current": c.id === state.cid ? "true" : null,
      on: { click: () => { state.parts.sidebar.classList.remove("open"); resume(c.id); } } },
      el("span", { class: "conversation-title" }, c.title),
      el("span", { class: "conversation-when muted" }, formatDate(c.updated_at))),
    el("button", { type: "button", class: "icon delete", "aria-label": `Delete the conversation “${c.title}”`, title: "Delete", "data-needs-idle": true,
      on: { click: () => forget(c) } }, "✕"))));
}

async function forget(conversation) {
  if (!confirm(`Delete the conversation “${conversation.title}”?`)) return;
  try {
    await api(`/api/conversations/${encodeURIComponent(conversation.id)}`, { method: "DELETE" });
    if (conversation.id === state.cid) newConversation();
  } catch (error) {
    toast(`${error.message} — ${error.hint}`, { kind: "error" });
  }
  loadConversations();
}

function newConversation() {
  if (state.streaming) return;
  setConversation(null);
  state.parts.messages.replaceChildren();
  renderEmpty();
  loadConversations();
  state.parts.question.focus();
}

function setConversation(cid) {
  state.cid = cid;
  remember("chat.conversation", cid);
}

async function resume(cid) {
  if (state.streaming) return;
  let conversation;
  try {
    conversation = await api(`/api/conversations/${encodeURIComponent(cid)}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) { setConversation(null); renderEmpty(); loadConversations(); return; }
    toast(`${error.message} — ${error.hint}`, { kind: "error" });
    return;
  }
  setConversation(cid);
  const p = state.parts;
  p.messages.replaceChildren();
  let lastUser = null;
  const last = conversation.messages.length - 1;
  conversation.messages.forEach((message, i) => {
    if (message.role === "user") {
      lastUser = userView(message.content, message.id);
      if (message.meta) showNotes(lastUser, message.meta);
    } else {
      const view = assistantView(lastUser);
      view.citations = message.citations || [];
      view.text = message.content || "";
      if (message.thinking) { view.thinkingBox.hidden = false; view.thinking.textContent = message.thinking; }
      for (const tool of message.meta?.tools || []) view.tools.append(el("li", {}, `used ${tool.name}`));
      renderAnswer(view);
      renderSources(view);
      if (message.meta?.error) renderError(view, message.meta.error);
      finish(view, { ...message.meta, message_id: message.id, followups: i === last ? message.meta?.followups : [] });
    }
  });
  loadConversations();
  p.messages.lastElementChild?.scrollIntoView({ block: "end" });
}

// ---- the empty conversation -------------------------------------------------------------
function welcomeStatus(status) {
  const llm = status?.llm;
  if (!llm) return el("p", { class: "welcome-status muted" }, "Checking the model…");
  if (llm.ok) return el("p", { class: "welcome-status muted" }, `Answers come from ${llm.model}, with numbered citations of your documents.`);
  const box = el("div", { class: "welcome-status notice error" },
    el("strong", {}, "The model is not answering."),
    el("p", {}, llm.message || "The model server did not answer."));
  box.append(el("div", { class: "fix" }, renderMarkdown(`**Fix:** ${llm.hint}`)),
    el("p", { class: "small" }, "You can still ask: the passages that match your question are shown without an answer."));
  return box;
}

function renderEmpty() {
  const p = state.parts;
  if (p.messages.children.length) return;
  p.messages.append(el("div", { class: "chat-welcome" },
    el("h2", {}, "Ask your documents"),
    el("p", { class: "muted" }, "Answers use only your notes and uploaded files, and cite them: click a [1] to read the passage. Questions are checked for passwords and keys, which are removed before anything is saved or sent."),
    welcomeStatus(state.ctx.status())));
}

// ---- messages ---------------------------------------------------------------------------
function userView(text, id = null) {
  const view = { kind: "user", text, id };
  view.body = el("div", { class: "bubble" }, text);
  view.notes = el("div", { class: "user-notes" });
  view.edit = el("button", { type: "button", class: "ghost small", "data-needs-idle": true, title: "Edit this question and ask again", on: { click: () => editQuestion(view) } }, "Edit");
  view.node = el("article", { class: "msg user", "aria-label": "Your question" }, view.body, view.notes, el("div", { class: "msg-actions" }, view.edit));
  view.node.view = view;
  view.edit.hidden = id === null;
  state.parts.messages.querySelector(".chat-welcome")?.remove();
  state.parts.messages.append(view.node);
  return view;
}

// What the question's metadata says under it: secrets removed before sending, and what the
// search of your notes took for a word no note holds (a corrected typo, the vault's nearest
// word), which the cited passages mark too.
function showNotes(view, meta) {
  const kinds = Object.entries(meta?.redacted || {});
  const searched = Object.entries(meta?.searched || {});
  view.searched = searched.flatMap(([, words]) => words.map((word) => word.replace(/\*$/, "")));
  const notes = [];
  if (kinds.length) {
    const total = kinds.reduce((n, [, c]) => n + c, 0);
    notes.push(el("p", { class: "notice warn redacted", role: "note" },
      `${plural(total, "secret was", "secrets were")} removed before sending (${kinds.map(([k, c]) => `${k} ×${c}`).join(", ")}). `,
      el("small", {}, "The model and the saved conversation got [REDACTED:…] in its place.")));
  }
  if (searched.length) {
    const quoted = (words) => words.map((word) => `“${word.replace(/\*$/, "…")}”`).join(", ");
    notes.push(el("p", { class: "notice searched", role: "note" },
      searched.map(([typed, words]) => `No note has “${typed}”: searched ${quoted(words)}.`).join(" ")));
  }
  view.notes.replaceChildren(...notes);
}

function assistantView(userPart) {
  const view = { kind: "assistant", user: userPart, text: "", citations: [], error: null, rendered: null, frame: 0 };
  view.thinking = el("pre", {});
  view.thinkingBox = el("details", { class: "thinking", hidden: true }, el("summary", {}, "Thinking"), view.thinking);
  view.tools = el("ul", { class: "tool-notes" });
  view.answer = el("div", { class: "answer" }, el("span", { class: "typing", "aria-label": "Waiting for the answer" }, el("i"), el("i"), el("i")));
  view.errorSlot = el("div", { class: "answer-error" });
  view.sources = el("div", { class: "sources" });
  view.actions = el("div", { class: "msg-actions" });
  view.meta = el("p", { class: "meta muted" });
  view.followups = el("div", { class: "followups" });
  view.node = el("article", { class: "msg assistant", "aria-label": "Answer" },
    view.thinkingBox, view.tools, view.answer, view.errorSlot, view.sources, view.actions, view.meta, view.followups);
  view.node.view = view;
  state.parts.messages.append(view.node);
  return view;
}

function scheduleRender(view) {
  if (view.frame) return;
  view.frame = requestAnimationFrame(() => { view.frame = 0; renderAnswer(view); });
}

function renderAnswer(view) {
  if (!view.text) { if (!state.streaming || view !== state.current) view.answer.replaceChildren(); return; }
  const box = renderMarkdown(view.text);
  linkCitations(box, view);
  view.answer.replaceChildren(box);
}

// Each [n] (or [1][2], [1, 2]) in the answer's text becomes a button opening source n.
function linkCitations(root, view) {
  const byNumber = new Map(view.citations.map((c) => [c.n, c]));
  if (!byNumber.size) return;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walker.nextNode()) if (/\[\d/.test(walker.currentNode.textContent) && !walker.currentNode.parentElement.closest("code, pre, a")) nodes.push(walker.currentNode);
  for (const node of nodes) {
    const parts = node.textContent.split(/(\[\d+(?:\s*,\s*\d+)*\])/);
    if (parts.length < 2) continue;
    const frag = document.createDocumentFragment();
    for (const part of parts) {
      const group = /^\[(\d+(?:\s*,\s*\d+)*)\]$/.exec(part);
      if (!group) { if (part) frag.append(part); continue; }
      const numbers = group[1].split(",").map((n) => Number(n.trim()));
      if (!numbers.every((n) => byNumber.has(n))) { frag.append(part); continue; }
      for (const n of numbers) frag.append(citeButton(byNumber.get(n), view));
    }
    node.replaceWith(frag);
  }
}

function citeButton(citation, view) {
  return el("button", { type: "button", class: "cite", title: `${shownPath(citation.path)}${citation.label ? " · " + citation.label : ""}`,
    "aria-label": `Source ${citation.n}: ${shownPath(citation.path)}${citation.label ? ", " + citation.label : ""}`,
    on: { click: () => openCitation(citation, view) } }, String(citation.n));
}

function openCitation(citation, view) {
  const highlight = [view.user?.text || "", ...(view.user?.searched || [])].join(" ");
  openPassage({ path: citation.path, chunkId: citation.chunk_id, label: citation.label, highlight });
}

function renderSources(view) {
  const list = view.citations;
  if (!list.length) { view.sources.replaceChildren(); return; }
  const down = view.error && DOWN_CODES.has(view.error.code);
  const cards = list.map((c) => el("li", {},
    el("button", { type: "button", class: "source", on: { click: () => openCitation(c, view) },
      "aria-label": `Open source ${c.n}: ${shownPath(c.path)}${c.label ? ", " + c.label : ""}` },
      el("span", { class: "source-head" },
        el("span", { class: "source-n" }, String(c.n)),
        el("span", { class: "source-path" }, shownPath(c.path).split("/").pop()),
        c.label ? el("span", { class: "source-label muted" }, c.label) : null),
      el("span", { class: "source-folder muted" }, !c.path.startsWith("attachment:") && c.path.includes("/") ? c.path.slice(0, c.path.lastIndexOf("/")) : ""),
      el("span", { class: "source-snippet" }, plainText(c.snippet)))));
  const heading = down
    ? el("h3", { class: "sources-title" }, `What your documents say (${plural(list.length, "passage", "passages")} found, no answer written)`)
    : el("h3", { class: "sources-title muted" }, `Sources (${list.length})`);
  view.sources.replaceChildren(heading, el("ol", { class: ["source-list", down && "expanded"] }, cards));
}

function renderError(view, error) {
  view.error = error;
  const down = DOWN_CODES.has(error.code);
  const heading = error.code === "llm_unavailable" ? "The model is not answering."
    : error.code === "model_missing" ? "The model is not installed."
    : error.code === "context_too_long" ? "The question and its sources are too long for the model."
    : "The answer failed.";
  const box = el("div", { class: "notice error", role: "alert" },
    el("strong", {}, heading), el("p", { class: "error-message" }, error.message),
    el("div", { class: "fix" }, renderMarkdown(`**Fix:** ${error.hint || "the server log has the details"}`)));
  if (down && !view.citations.length) box.append(el("p", { class: "small" }, "No passage of your documents matched the question either."));
  view.errorBox = box;
  view.answer.querySelector(".typing")?.remove();
  view.errorSlot.replaceChildren(box);
  renderSources(view);
}

function finish(view, data) {
  view.answer.querySelector(".typing")?.remove();
  const t = data.timings || {}, tk = data.tokens || {};
  const bits = [];
  if (data.model) bits.push(data.model);
  if (t.first_token_ms != null) bits.push(`first token ${Math.round(t.first_token_ms)} ms`);
  if (t.total_ms != null) bits.push(`${(t.total_ms / 1000).toFixed(1)} s`);
  if (tk.prompt || tk.completion) bits.push(`${tk.prompt || 0} + ${tk.completion || 0} tokens`);
  if (data.stopped) bits.push("stopped");
  view.meta.textContent = bits.join(" · ");
  if (!view.citations.length && !data.error && view.text) {
    view.sources.replaceChildren(el("p", { class: "no-sources muted small" }, "No passage of your documents was relevant enough to cite."));
  }
  const actions = [];
  if (view.text) actions.push(el("button", { type: "button", class: "ghost small", title: "Copy the answer (Markdown)", on: { click: (event) => copy(view, event.currentTarget) } }, "Copy"));
  actions.push(el("button", { type: "button", class: "ghost small", "data-needs-idle": true, title: "Ask the same question again", on: { click: () => regenerate(view) } }, data.error ? "Try again" : "Regenerate"));
  view.actions.replaceChildren(...actions);
  const followups = data.followups || [];
  view.followups.replaceChildren(...(followups.length ? [el("span", { class: "muted small" }, "Ask next:"),
    ...followups.map((q) => el("button", { type: "button", class: "followup secondary", "data-needs-idle": true, on: { click: () => ask(q) } }, q))] : []));
  updateButtons();
}

async function copy(view, button) {
  try {
    await navigator.clipboard.writeText(view.text);
  } catch {
    const area = el("textarea", { class: "visually-hidden" }, view.text);
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  button.textContent = "Copied";
  setTimeout(() => { button.textContent = "Copy"; }, 1500);
}

// ---- edit and ask again -------------------------------------------------------------------
function editQuestion(view) {
  if (state.streaming || view.id === null) return;
  const area = el("textarea", { class: "edit-question", rows: 3, "aria-label": "Edit your question" }, view.text);
  const save = el("button", { type: "submit" }, "Ask again");
  const cancel = el("button", { type: "button", class: "secondary", on: { click: () => form.replaceWith(view.body) } }, "Cancel");
  const form = el("form", { class: "edit-form" }, area, el("div", { class: "composer-actions" }, cancel, save));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = area.value.trim();
    if (!text) return;
    form.replaceWith(view.body);
    ask(text, { replace: view });
  });
  area.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); form.requestSubmit(); }
    if (event.key === "Escape") { event.stopPropagation(); form.replaceWith(view.body); }
  });
  view.body.replaceWith(form);
  area.focus();
}

function regenerate(view) {
  if (state.streaming || !view.user) return;
  ask(view.user.text, { replace: view.user });
}

// ---- asking -------------------------------------------------------------------------------
async function ask(text, { replace = null } = {}) {
  const p = state.parts;
  const question = String(text || "").trim();
  if (!question || state.streaming) return;
  const replaceFrom = replace && replace.id !== null && state.cid ? replace.id : null;
  if (replace) { // the replaced question and everything after it go
    let node = replace.node;
    while (node) { const next = node.nextElementSibling; node.remove(); node = next; }
  }
  if (!replace) { p.question.value = ""; autosize(); }
  const user = userView(question);
  const view = assistantView(user);
  state.current = view;
  user.node.scrollIntoView({ block: "start", behavior: "smooth" });
  const controller = new AbortController();
  state.streaming = controller;
  updateButtons();
  const body = { question, conversation_id: state.cid, think: p.think.checked };
  const paths = scopePaths();
  if (paths.length) body.scope = { paths };
  if (p.model.value && p.model.value !== p.model.dataset.current) body.model = p.model.value;
  if (replaceFrom !== null) body.replace_from = replaceFrom;
  const attached = state.attachments?.ids?.() || [];
  if (attached.length) body.attachments = attached;
  let finished = false;
  try {
    const response = await fetch("/api/chat", {
      method: "POST", credentials: "same-origin", signal: controller.signal,
      headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      const error = data.error || {};
      if (response.status === 404 && state.cid) setConversation(null);
      renderError(view, { code: error.code || "error", message: error.message || `HTTP ${response.status}`, hint: error.hint || "the server log has the details" });
      finish(view, { error });
      finished = true;
      return;
    }
    if (attached.length) state.attachments?.clear?.();
    setConversation(response.headers.get("X-Conversation-Id") || state.cid);
    await readNdjson(response, (item) => {
      const data = item.data || {};
      if (item.type === "metadata") {
        view.citations = data.citations || view.citations;
        if (data.question) {
          user.id = data.question.id ?? user.id;
          user.edit.hidden = user.id === null;
          if (data.question.text && data.question.text !== user.text) { user.text = data.question.text; user.body.textContent = data.question.text; }
          showNotes(user, data.question);
        }
        if (data.tool_call) view.tools.append(el("li", {}, `used ${data.tool_call.name}`));
        renderSources(view);
        if (view.text) scheduleRender(view);
      } else if (item.type === "thinking") {
        view.thinkingBox.hidden = false;
        view.thinking.textContent += data.text;
      } else if (item.type === "text") {
        view.text += data.text;
        scheduleRender(view);
      } else if (item.type === "error") {
        renderError(view, data);
      } else if (item.type === "done") {
        setConversation(data.conversation_id);
        if (data.conversation_id === null) { user.id = null; user.edit.hidden = true; }
        renderAnswer(view);
        finish(view, data);
        finished = true;
      }
    });
  } catch (error) {
    if (error.name !== "AbortError") {
      renderError(view, { code: "connection", message: `The connection to the app broke: ${error.message}`, hint: "is `vaultseek serve` still running? Reload the page to see what was saved" });
    }
  } finally {
    if (!finished) { renderAnswer(view); finish(view, { error: view.error, stopped: true }); }
    state.streaming = null;
    state.current = null;
    updateButtons();
    loadConversations();
  }
}

async function stop() {
  if (!state.streaming) return;
  if (state.cid) {
    try { await api(`/api/chat/${encodeURIComponent(state.cid)}/stop`, { method: "POST" }); return; } catch { /* fall through */ }
  }
  state.streaming.abort();
}
