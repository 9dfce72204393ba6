"use strict";
var __defProp = Object.defineProperty;
var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
var __getOwnPropNames = Object.getOwnPropertyNames;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __export = (target, all) => {
  for (var name in all)
    __defProp(target, name, { get: all[name], enumerable: true });
};
var __copyProps = (to, from, except, desc) => {
  if (from && typeof from === "object" || typeof from === "function") {
    for (let key of __getOwnPropNames(from))
      if (!__hasOwnProp.call(to, key) && key !== except)
        __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
  }
  return to;
};
var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);

// src/main.ts
var main_exports = {};
__export(main_exports, {
  default: () => VaultseekPlugin,
  internals: () => internals
});
module.exports = __toCommonJS(main_exports);
var import_obsidian6 = require("obsidian");

// src/chat.ts
var import_obsidian2 = require("obsidian");

// src/navigate.ts
var import_obsidian = require("obsidian");

// src/query.ts
var UNWRAP = /\b(?:content|line|section|block|match-case|ignore-case):(\([^)]*\)|"[^"]*"|\S+)/g;
var MODIFIED = /\bmodified:(>=?|<=?)?("[^"]*"|\S+)/g;
function readQuery(typed) {
  let query = typed.replace(/\btag:#/g, "tag:");
  query = query.replace(UNWRAP, (_all, value) => value.startsWith("(") ? value.slice(1, -1) : value);
  query = query.replace(MODIFIED, (_all, op, value) => op?.startsWith("<") ? `before:${value}` : `after:${value}`);
  query = query.replace(/\bext:(\S+)/g, "kind:$1");
  query = query.replace(/\s+/g, " ").trim();
  return { query, marks: markedWords(query) };
}
var OPERATOR = /^(?:tag|path|file|kind|after|before):/;
function markedWords(query) {
  const marks = [];
  const rest = query.replace(/(^|\s)(-?)"([^"]+)"/g, (_all, lead, minus, phrase) => {
    if (!minus) marks.push(phrase);
    return lead;
  });
  for (const word of rest.replace(/\[[^\]]*\]/g, " ").split(/\s+/)) {
    if (!word || word.startsWith("-") || word.startsWith("#") || OPERATOR.test(word) || word.includes('"')) continue;
    const bare = word.replace(/\*+$/, "").replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");
    if (bare.length >= 2) marks.push(bare);
  }
  return [...new Set(marks)];
}
function escapeRegExp(text2) {
  return text2.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
function markRanges(text2, marks, limit = 200) {
  if (marks.length === 0) return [];
  const pattern = new RegExp(marks.map(escapeRegExp).sort((a, b) => b.length - a.length).join("|"), "giu");
  const ranges = [];
  for (const found of text2.matchAll(pattern)) {
    if (found.index === void 0 || found[0].length === 0) continue;
    ranges.push([found.index, found.index + found[0].length]);
    if (ranges.length >= limit) break;
  }
  return ranges;
}
function markRuns(text2, marks) {
  const runs = [];
  let at = 0;
  for (const [from, to] of markRanges(text2, marks)) {
    if (from > at) runs.push({ text: text2.slice(at, from), marked: false });
    runs.push({ text: text2.slice(from, to), marked: true });
    at = to;
  }
  if (at < text2.length) runs.push({ text: text2.slice(at), marked: false });
  return runs;
}

// src/navigate.ts
var RenameLog = class {
  constructor() {
    this.moves = /* @__PURE__ */ new Map();
  }
  record(oldPath, newPath) {
    this.moves.set(oldPath, newPath);
    for (const [from, to] of this.moves) if (to === oldPath) this.moves.set(from, newPath);
  }
  current(path) {
    return this.moves.get(path) ?? path;
  }
};
function findFile(app, renames, path) {
  const file = app.vault.getAbstractFileByPath(renames.current(path));
  return file instanceof import_obsidian.TFile ? file : null;
}
function headingOf(section) {
  if (!section) return null;
  const parts = section.split(" > ");
  return parts[parts.length - 1].trim() || null;
}
async function openTarget(app, renames, target, marks, newLeaf = false) {
  const file = findFile(app, renames, target.path);
  if (!file) {
    new import_obsidian.Notice(`vaultseek: ${target.path} was renamed or deleted since these results were shown; search again.`);
    return false;
  }
  const leaf = app.workspace.getLeaf(newLeaf ? "tab" : false);
  if (file.extension !== "md") {
    const subpath = target.page ? `#page=${target.page}` : "";
    await app.workspace.openLinkText(file.path + subpath, "", newLeaf);
    return true;
  }
  const heading = headingOf(target.section);
  const eState = {};
  if (heading && app.metadataCache.getFileCache(file)?.headings?.some((h) => h.heading === heading)) {
    eState.subpath = `#${heading}`;
  }
  if (marks.length > 0) {
    const content = await app.vault.cachedRead(file);
    const matches = markRanges(content, marks);
    if (matches.length > 0) eState.match = { content, matches };
  }
  await leaf.openFile(file, { active: true, eState });
  const view = app.workspace.getActiveViewOfType(import_obsidian.MarkdownView);
  if (view && eState.subpath) {
    const line = app.metadataCache.getFileCache(file)?.headings?.find((h) => h.heading === heading)?.position.start.line;
    if (line !== void 0) view.editor?.setCursor({ line, ch: 0 });
  }
  return true;
}
function linkTo(app, renames, path, sourcePath) {
  const file = findFile(app, renames, path);
  if (!file) return null;
  return app.fileManager.generateMarkdownLink(file, sourcePath);
}

// src/problem.ts
var ProblemError = class extends Error {
  constructor(problem) {
    super(problem.message);
    this.problem = problem;
  }
};
function startCommand(vaultPath, serverUrl) {
  let port = "";
  try {
    const url = new URL(serverUrl);
    if (url.port && url.port !== "8765") port = ` --port ${url.port}`;
  } catch {
  }
  const vault = vaultPath ? ` --vault "${vaultPath}"` : "";
  return `vaultseek serve${vault}${port} --token-file ~/.config/vaultseek/token`;
}
function serverDown(serverUrl, vaultPath, autoStart) {
  return {
    kind: "down",
    title: "vaultseek is not running",
    message: `Nothing answers at ${serverUrl}.`,
    hint: autoStart ? "The plugin is starting it; this takes a few seconds (a first index takes longer)." : `Start it in a terminal: ${startCommand(vaultPath, serverUrl)} \u2014 and put the same token in this plugin's settings. Or allow the plugin to start it (Settings \u2192 vaultseek).`
  };
}
function wrongToken(status, serverHint) {
  return {
    kind: "token",
    title: status === 429 ? "Too many wrong tokens" : "vaultseek refused the token",
    message: status === 429 ? "vaultseek is slowing down token guesses; wait a minute." : "The server at this URL needs its token, and the one in the settings is not it.",
    hint: "Copy the token from the file you gave `vaultseek serve --token-file` into Settings \u2192 vaultseek \u2192 Token." + (serverHint && status === 429 ? ` (${serverHint})` : "")
  };
}
function noIndex(vault) {
  return {
    kind: "no-index",
    title: "The index is empty",
    message: vault ? `vaultseek serves ${vault}, and has indexed no note there yet.` : "vaultseek has indexed no note yet.",
    hint: "If it has just started, it is indexing: wait a moment. Otherwise run the command \u201Cvaultseek: Re-index the vault\u201D."
  };
}
function describe(problem) {
  return `${problem.title}. ${problem.message} ${problem.hint}`;
}

// src/render.ts
function renderProblem(el, problem) {
  const box = el.createDiv({ cls: `vaultseek-problem vaultseek-problem-${problem.kind}` });
  box.createDiv({ cls: "vaultseek-problem-title", text: problem.title });
  box.createDiv({ cls: "vaultseek-problem-message", text: problem.message });
  if (problem.hint) renderHint(box.createDiv({ cls: "vaultseek-problem-hint" }), problem.hint);
  return box;
}
function renderHint(el, hint) {
  hint.split(/(`[^`]+`|vaultseek serve[^—]*?(?= —|$))/).forEach((part) => {
    if (!part) return;
    if (part.startsWith("`")) el.createEl("code", { text: part.slice(1, -1) });
    else if (part.startsWith("vaultseek serve")) el.createEl("code", { text: part.trim() });
    else el.appendText(part);
  });
}
function renderRuns(el, runs) {
  for (const run of runs) {
    if (run.marked) el.createEl("mark", { text: run.text });
    else el.appendText(run.text);
  }
}

// src/transport.ts
var TransportError = class extends Error {
  constructor(reason, message) {
    super(message);
    this.reason = reason;
  }
};
var NodeTransport = class {
  constructor(http) {
    this.http = http;
  }
  send(method, url, headers, options = {}) {
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (error) => {
        if (!settled) {
          settled = true;
          reject(error);
        }
      };
      let request;
      try {
        request = this.http.request(url, { method, headers, agent: false }, (response) => {
          response.setEncoding("utf8");
          let body = "";
          response.on("data", (piece) => {
            body += piece;
            options.onChunk?.(piece);
          });
          response.on("end", () => {
            if (settled) return;
            settled = true;
            const flat = {};
            for (const [name, value] of Object.entries(response.headers)) {
              if (value !== void 0) flat[name] = Array.isArray(value) ? value.join(", ") : value;
            }
            resolve({ status: response.statusCode ?? 0, headers: flat, body });
          });
          response.on("error", () => fail(new TransportError("failed", "the connection broke mid-answer")));
        });
      } catch (error) {
        fail(new TransportError("failed", `cannot ask ${url}: ${error.message}`));
        return;
      }
      request.on("error", (error) => {
        const refused = ["ECONNREFUSED", "ECONNRESET", "EHOSTUNREACH", "ENOTFOUND", "EADDRNOTAVAIL"];
        fail(new TransportError(refused.includes(error.code ?? "") ? "refused" : "failed", error.message));
      });
      if (options.timeoutMs) {
        request.setTimeout(options.timeoutMs, () => {
          fail(new TransportError("timeout", `no answer within ${options.timeoutMs} ms`));
          request.destroy();
        });
      }
      options.signal?.addEventListener("abort", () => {
        fail(new TransportError("aborted", "stopped"));
        request.destroy();
      });
      if (options.body !== void 0) request.write(options.body);
      request.end();
    });
  }
};
var FetchTransport = class {
  async send(method, url, headers, options = {}) {
    const controller = new AbortController();
    options.signal?.addEventListener("abort", () => controller.abort());
    const timer = options.timeoutMs ? setTimeout(() => controller.abort("timeout"), options.timeoutMs) : void 0;
    try {
      const response = await fetch(url, { method, headers, body: options.body, signal: controller.signal });
      const reader = response.body?.getReader();
      const decoder = new TextDecoder();
      let body = "";
      while (reader) {
        const { done, value } = await reader.read();
        if (done) break;
        const piece = decoder.decode(value, { stream: true });
        body += piece;
        options.onChunk?.(piece);
      }
      const flat = {};
      response.headers.forEach((value, name) => flat[name] = value);
      return { status: response.status, headers: flat, body };
    } catch (error) {
      if (options.signal?.aborted) throw new TransportError("aborted", "stopped");
      if (controller.signal.aborted) throw new TransportError("timeout", `no answer within ${options.timeoutMs} ms`);
      throw new TransportError("refused", error.message);
    } finally {
      if (timer) clearTimeout(timer);
    }
  }
};
function defaultTransport() {
  try {
    const http = require("http");
    if (http && typeof http.request === "function") return new NodeTransport(http);
  } catch {
  }
  return new FetchTransport();
}

// src/chat.ts
var CHAT_VIEW = "vaultseek-chat";
function applyEnvelope(turn, envelope) {
  const data = envelope.data ?? {};
  if (envelope.type === "metadata" && Array.isArray(data.citations)) turn.citations = data.citations;
  else if (envelope.type === "text" && typeof data.text === "string") turn.answer += data.text;
  else if (envelope.type === "error") {
    turn.problem = { kind: "server", title: "The chat could not answer", message: String(data.message ?? "the model failed"), hint: String(data.hint ?? "") };
  } else if (envelope.type === "done") {
    turn.done = true;
    turn.stopped = Boolean(data.stopped);
    if (typeof data.conversation_id === "string") return { conversationId: data.conversation_id };
  }
  return {};
}
function citationRuns(answer, citations) {
  const byNumber = new Map(citations.map((c) => [c.n, c]));
  const runs = [];
  let at = 0;
  for (const found of answer.matchAll(/\[(\d{1,3})\]/g)) {
    const citation = byNumber.get(Number(found[1]));
    if (!citation || found.index === void 0) continue;
    if (found.index > at) runs.push(answer.slice(at, found.index));
    runs.push(citation);
    at = found.index + found[0].length;
  }
  if (at < answer.length) runs.push(answer.slice(at));
  return runs;
}
var ChatView = class extends import_obsidian2.ItemView {
  constructor(leaf, client, renames) {
    super(leaf);
    this.client = client;
    this.renames = renames;
    this.turns = [];
    this.conversationId = null;
    this.running = null;
  }
  getViewType() {
    return CHAT_VIEW;
  }
  getDisplayText() {
    return "Ask your vault";
  }
  getIcon() {
    return "message-circle";
  }
  async onOpen() {
    const root = this.contentEl;
    root.empty();
    root.addClass("vaultseek-chat");
    const head = root.createDiv({ cls: "vaultseek-pane-head" });
    head.createDiv({ cls: "vaultseek-pane-title", text: "Ask your vault" });
    const fresh = head.createEl("button", { cls: "vaultseek-small-button", text: "New chat" });
    fresh.addEventListener("click", () => this.reset());
    this.log = root.createDiv({ cls: "vaultseek-chat-log" });
    const form = root.createDiv({ cls: "vaultseek-chat-form" });
    this.input = form.createEl("textarea", { cls: "vaultseek-chat-input", attr: { rows: "3", placeholder: "Ask a question about your notes\u2026 (Enter sends, Shift+Enter a new line)" } });
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        void this.ask(this.input.value);
      }
    });
    this.askButton = form.createEl("button", { cls: "mod-cta vaultseek-ask", text: "Ask" });
    this.askButton.addEventListener("click", () => this.running ? this.stop() : void this.ask(this.input.value));
    this.renderLog();
  }
  async onClose() {
    this.running?.abort();
  }
  reset() {
    this.running?.abort();
    this.turns = [];
    this.conversationId = null;
    this.renderLog();
  }
  stop() {
    if (this.conversationId) void this.client.stopChat(this.conversationId).catch(() => void 0);
    this.running?.abort();
  }
  async ask(question) {
    question = question.trim();
    if (!question || this.running) return;
    this.input.value = "";
    const turn = { question, answer: "", citations: [], problem: null, done: false, stopped: false };
    this.turns.push(turn);
    this.running = new AbortController();
    this.askButton.setText("Stop");
    this.renderLog();
    try {
      await this.client.chat({ question, conversation_id: this.conversationId }, (envelope) => {
        const { conversationId } = applyEnvelope(turn, envelope);
        if (conversationId) this.conversationId = conversationId;
        this.renderLog();
      }, this.running.signal);
    } catch (error) {
      if (error instanceof ProblemError) turn.problem = error.problem;
      else if (error instanceof TransportError && error.reason === "aborted") turn.stopped = true;
      else turn.problem = { kind: "server", title: "The chat failed", message: String(error.message ?? error), hint: "Try again; if it persists, see the terminal where vaultseek serve runs." };
    } finally {
      turn.done = true;
      this.running = null;
      this.askButton.setText("Ask");
      this.renderLog();
    }
  }
  renderLog() {
    const log = this.log;
    if (!log) return;
    log.empty();
    if (this.turns.length === 0) {
      log.createDiv({ cls: "vaultseek-empty", text: "Answers come from your notes, with the passages they cite. Click a source to open it." });
    }
    for (const turn of this.turns) {
      log.createDiv({ cls: "vaultseek-question", text: turn.question });
      const answer = log.createDiv({ cls: "vaultseek-answer" });
      for (const run of citationRuns(turn.answer, turn.citations)) {
        if (typeof run === "string") answer.appendText(run);
        else this.citationButton(answer, run, `[${run.n}]`, "vaultseek-cite");
      }
      if (!turn.done && !turn.answer) answer.createSpan({ cls: "vaultseek-empty", text: turn.citations.length ? "Writing\u2026" : "Finding passages\u2026" });
      if (turn.stopped) answer.createSpan({ cls: "vaultseek-stopped", text: " (stopped)" });
      if (turn.problem) renderProblem(log, turn.problem);
      if (turn.citations.length > 0) {
        const sources = log.createDiv({ cls: "vaultseek-sources" });
        for (const citation of turn.citations) {
          const where = citation.label || citation.section || "";
          this.citationButton(sources, citation, `[${citation.n}] ${this.renames.current(citation.path)}${where ? " \u203A " + where : ""}`, "vaultseek-source");
        }
      }
    }
    log.scrollTop = log.scrollHeight;
  }
  citationButton(parent, citation, label, cls) {
    const button = parent.createEl("button", { cls, text: label, attr: { title: citation.snippet ?? "" } });
    button.addEventListener("click", () => void openTarget(this.app, this.renames, { path: citation.path, section: citation.section, page: citation.page }, []));
  }
};

// src/client.ts
var QUICK_MS = 15e3;
var LineReader = class {
  constructor(onLine) {
    this.onLine = onLine;
    this.rest = "";
  }
  push(piece) {
    this.rest += piece;
    let end;
    while ((end = this.rest.indexOf("\n")) >= 0) {
      const line = this.rest.slice(0, end).trim();
      this.rest = this.rest.slice(end + 1);
      if (line) this.emit(line);
    }
  }
  finish() {
    const line = this.rest.trim();
    this.rest = "";
    if (line) this.emit(line);
  }
  emit(line) {
    try {
      this.onLine(JSON.parse(line));
    } catch {
    }
  }
};
var VaultseekClient = class {
  constructor(settings, transport, vaultPath = () => null) {
    this.settings = settings;
    this.transport = transport;
    this.vaultPath = vaultPath;
  }
  url(path) {
    return this.settings().serverUrl.replace(/\/+$/, "") + path;
  }
  headers(json) {
    const headers = { Accept: "application/json" };
    const token = this.settings().token.trim();
    if (token) headers.Authorization = `Bearer ${token}`;
    if (json) headers["Content-Type"] = "application/json";
    return headers;
  }
  /** One request; a refused connection, a timeout and an error status become ProblemErrors. */
  async call(method, path, body, options = {}) {
    let reply;
    try {
      reply = await this.transport.send(method, this.url(path), this.headers(body !== void 0), {
        body: body === void 0 ? void 0 : JSON.stringify(body),
        timeoutMs: options.timeoutMs ?? QUICK_MS,
        signal: options.signal,
        onChunk: options.onChunk
      });
    } catch (error) {
      if (error instanceof TransportError) {
        if (error.reason === "aborted") throw error;
        if (error.reason === "timeout") {
          throw new ProblemError({ kind: "slow", title: "vaultseek is slow to answer", message: error.message, hint: "It may be indexing a large vault; try again in a moment." });
        }
        const settings = this.settings();
        throw new ProblemError(serverDown(settings.serverUrl, this.vaultPath(), settings.autoStart));
      }
      throw error;
    }
    if (reply.status >= 400) throw new ProblemError(problemOf(reply));
    return reply;
  }
  async json(method, path, body, signal) {
    const reply = await this.call(method, path, body, { signal });
    try {
      return JSON.parse(reply.body);
    } catch {
      throw new ProblemError({ kind: "server", title: "Not a vaultseek answer", message: `${this.settings().serverUrl} answered something that is not vaultseek's JSON.`, hint: "Check the server URL in the settings." });
    }
  }
  search(query, k, signal) {
    return this.json("GET", `/api/search?q=${encodeURIComponent(query)}&k=${k}`, void 0, signal);
  }
  /** The notes related to `path`; an older vaultseek's answer (no `close`, no `nothing_close`)
   * reads as one that cannot tell. */
  async related(path, k = 12) {
    const answer = await this.json("GET", `/api/related?path=${encodeURIComponent(path)}&k=${k}`);
    const results = (Array.isArray(answer?.results) ? answer.results : []).map((note) => ({ ...note, close: typeof note.close === "boolean" ? note.close : null }));
    const notices = Array.isArray(answer?.notices) ? answer.notices.filter((n) => typeof n === "string") : [];
    return { path: answer?.path ?? path, results, notices, nothing_close: answer?.nothing_close === true && results.length > 0 };
  }
  /** The map's missing links for a note; null when the server has no map (an older vaultseek). */
  async missingLinks(path) {
    let answer;
    try {
      answer = await this.json("GET", `/api/map/note?path=${encodeURIComponent(path)}`);
    } catch (error) {
      if (error instanceof ProblemError && (error.problem.kind === "not-indexed" || error.problem.kind === "server")) return null;
      throw error;
    }
    return readMissingLinks(answer, path);
  }
  async indexState() {
    try {
      return await this.json("GET", "/api/index/state");
    } catch (error) {
      if (!(error instanceof ProblemError) || error.problem.kind !== "not-indexed") throw error;
    }
    const status = await this.json("GET", "/api/status");
    return { ...status.index, indexing: false, deep: null };
  }
  /** The index state, or the empty-index problem when there is nothing in it. */
  async readyState() {
    const state = await this.indexState();
    if (state.files === 0 && !state.indexing) throw new ProblemError(noIndex(state.vault));
    return state;
  }
  async reindex(wait) {
    const reply = await this.call("POST", "/api/index/sync", { wait }, { timeoutMs: wait ? 9e4 : QUICK_MS });
    return wait ? JSON.parse(reply.body) : null;
  }
  /** Ask the chat; each envelope is handed over as it arrives. Resolves when the stream ends. */
  async chat(request, onEnvelope, signal) {
    const lines = new LineReader(onEnvelope);
    await this.call("POST", "/api/chat", request, { signal, timeoutMs: 6e5, onChunk: (piece) => lines.push(piece) });
    lines.finish();
  }
  stopChat(conversationId) {
    return this.json("POST", `/api/chat/${encodeURIComponent(conversationId)}/stop`);
  }
};
function problemOf(reply) {
  let error = {};
  try {
    error = JSON.parse(reply.body).error ?? {};
  } catch {
  }
  if (reply.status === 401 || reply.status === 429) return wrongToken(reply.status, error.hint ?? null);
  if (reply.status === 403 && error.code === "forbidden_host") {
    return { kind: "server", title: "vaultseek refused this address", message: error.message ?? "forbidden host", hint: "Use http://127.0.0.1:PORT or http://localhost:PORT as the server URL." };
  }
  if (reply.status === 404) {
    return { kind: "not-indexed", title: "Not in the index", message: error.message ?? "vaultseek does not know this note.", hint: error.hint ?? "A new or renamed note is found after the next index run." };
  }
  if (reply.status === 400) {
    return { kind: "bad-query", title: "vaultseek cannot read this query", message: error.message ?? "a bad query", hint: error.hint ?? "" };
  }
  return { kind: "server", title: `vaultseek answered ${reply.status}`, message: error.message ?? "the server failed", hint: error.hint ?? "See the terminal where vaultseek serve runs." };
}
function text(value) {
  return typeof value === "string" && value ? value : null;
}
function readMissingLinks(answer, note) {
  const list = answer?.missing_links;
  if (!Array.isArray(list)) return [];
  const found = [];
  for (const item of list) {
    if (typeof item === "string") {
      if (item !== note) found.push({ path: item, title: null, why: null });
      continue;
    }
    if (!item || typeof item !== "object") continue;
    const record = item;
    const ends = ["other", "path", "target", "b", "a", "source"].map((key) => text(record[key]));
    const other = ends.find((end) => end !== null && end !== note);
    if (!other) continue;
    const passage = record.target === other ? record.target_passage : record.source_passage;
    const why = text(passage?.text) ?? text(record.passage) ?? text(record.snippet) ?? text(record.why) ?? null;
    found.push({ path: other, title: text(record.title) ?? text(record.other_title), why });
  }
  return found;
}

// src/launcher.ts
function launchOf(serveCommand, serverUrl, token, vaultPath) {
  const url = new URL(serverUrl);
  const words = serveCommand.trim().split(/\s+/).filter(Boolean);
  const command = words[0] ?? "vaultseek";
  const args = [...words.slice(1), "serve", "--vault", vaultPath, "--host", url.hostname.replace(/^\[|\]$/g, ""), "--port", url.port || "8765"];
  return { command, args, env: token.trim() ? { VAULTSEEK_SERVE_TOKEN: token.trim() } : {} };
}
function startServer(launch) {
  let spawn;
  try {
    spawn = require("child_process").spawn;
  } catch {
    return Promise.resolve("this Obsidian cannot start programs (mobile?)");
  }
  return new Promise((resolve) => {
    const child = spawn(launch.command, launch.args, { detached: true, stdio: "ignore", env: { ...process.env, ...launch.env } });
    child.once(
      "error",
      (error) => resolve(error.code === "ENOENT" ? `\`${launch.command}\` was not found: install vaultseek, or give its full path in the settings` : error.message)
    );
    child.once("spawn", () => {
      child.unref();
      resolve(null);
    });
  });
}

// src/related.ts
var import_obsidian3 = require("obsidian");
var RELATED_VIEW = "vaultseek-related";
var NOTHING_CLOSE = "Nothing closely related: no links, and no note close in meaning. The nearest notes:";
function reasonOf(note) {
  const parts = [];
  if (note.linked === "to") parts.push("linked from this note");
  else if (note.linked === "from") parts.push("links here");
  else if (note.linked === "both") parts.push("linked both ways");
  if (note.shared.length > 0) parts.push(`shares ${note.shared.slice(0, 3).join(", ")}`);
  if (note.close === false) parts.push("not close in meaning");
  else if (typeof note.similarity === "number") {
    parts.push(note.similarity >= 0.05 ? `${Math.round(note.similarity * 100)}% alike` : "little in common");
  }
  return parts.join(" \xB7 ");
}
async function loadRelated(client, path) {
  try {
    const [answer, missing] = await Promise.all([client.related(path), client.missingLinks(path)]);
    const related = answer.results;
    const listed = new Set(related.map((note) => note.path));
    return { path, related, nothingClose: answer.nothing_close, missing: missing?.filter((m) => !listed.has(m.path)) ?? null, problem: null, loading: false };
  } catch (error) {
    if (error instanceof ProblemError) return { path, related: [], nothingClose: false, missing: null, problem: error.problem, loading: false };
    throw error;
  }
}
var RelatedView = class extends import_obsidian3.ItemView {
  constructor(leaf, client, renames) {
    super(leaf);
    this.client = client;
    this.renames = renames;
    this.state = { path: null, related: [], nothingClose: false, missing: null, problem: null, loading: false };
    this.asked = 0;
  }
  getViewType() {
    return RELATED_VIEW;
  }
  getDisplayText() {
    return "Related notes";
  }
  getIcon() {
    return "git-fork";
  }
  async onOpen() {
    this.render();
    await this.show(this.app.workspace.getActiveFile());
  }
  /** Show what is related to `file` (a note, else nothing). */
  async show(file) {
    if (!file || file.extension !== "md") {
      if (this.state.path === null) this.render();
      return;
    }
    const asked = ++this.asked;
    this.state = { ...this.state, path: file.path, loading: true };
    this.render();
    const found = await loadRelated(this.client, file.path);
    if (asked !== this.asked) return;
    this.state = found;
    this.render();
  }
  /** A note was renamed: follow it if it is the one shown; relist the renamed entries. */
  renamed(oldPath, newPath) {
    if (this.state.path === oldPath) this.state = { ...this.state, path: newPath };
    this.render();
  }
  render() {
    const root = this.contentEl;
    root.empty();
    root.addClass("vaultseek-related");
    const { path, related, nothingClose, missing, problem, loading } = this.state;
    const head = root.createDiv({ cls: "vaultseek-pane-head" });
    head.createDiv({ cls: "vaultseek-pane-title", text: "Related notes" });
    if (path) head.createDiv({ cls: "vaultseek-path", text: path });
    if (!path) {
      root.createDiv({ cls: "vaultseek-empty", text: "Open a note to see the notes related to it." });
      return;
    }
    if (loading && related.length === 0 && !problem) root.createDiv({ cls: "vaultseek-empty", text: "Looking\u2026" });
    if (problem) {
      renderProblem(root, problem);
      return;
    }
    if (!loading && related.length === 0) root.createDiv({ cls: "vaultseek-empty", text: "Nothing related yet: no links, and no note close in meaning." });
    if (nothingClose && related.length > 0) root.createDiv({ cls: "vaultseek-nothing-close", text: NOTHING_CLOSE });
    const list = root.createDiv({ cls: "vaultseek-list" });
    for (const note of related) this.renderEntry(list, note.path, note.title, reasonOf(note), note.close === false);
    if (missing && missing.length > 0) {
      root.createDiv({ cls: "vaultseek-subhead", text: "Missing links (close in meaning, never linked)" });
      const more = root.createDiv({ cls: "vaultseek-list" });
      for (const link of missing) this.renderEntry(more, link.path, link.title ?? link.path, link.why ?? "");
    }
  }
  renderEntry(list, path, title, why, weak = false) {
    const current = this.renames.current(path);
    const gone = findFile(this.app, this.renames, path) === null;
    const entry = list.createDiv({ cls: "vaultseek-entry" });
    entry.toggleClass("vaultseek-gone", gone);
    entry.toggleClass("vaultseek-weak", weak);
    const text2 = entry.createDiv({ cls: "vaultseek-entry-text" });
    const name = text2.createEl("a", { cls: "vaultseek-title", text: title || current, href: "#" });
    name.addEventListener("click", (event) => {
      event.preventDefault();
      void openTarget(this.app, this.renames, { path }, [], event.ctrlKey || event.metaKey);
    });
    text2.createDiv({ cls: "vaultseek-path", text: gone ? `${current} \u2014 renamed or deleted` : current });
    if (why) text2.createDiv({ cls: "vaultseek-why", text: why });
    const button = entry.createEl("button", { cls: "vaultseek-link-button", text: "Link", attr: { "aria-label": `Insert a link to ${title || current}` } });
    button.disabled = gone;
    button.addEventListener("click", () => this.insertLink(path));
  }
  /** Insert a [[link]] to `path` at the cursor of the note this pane is about. */
  insertLink(path) {
    const view = findEditorOf(this.app, this.state.path);
    if (!view || !this.state.path) return false;
    const link = linkTo(this.app, this.renames, path, this.state.path);
    if (!link) return false;
    view.editor.replaceSelection(link);
    return true;
  }
};
function findEditorOf(app, path) {
  const active = app.workspace.getActiveViewOfType(import_obsidian3.MarkdownView);
  if (active && active.file?.path === path) return active;
  for (const leaf of app.workspace.getLeavesOfType("markdown")) {
    const view = leaf.view;
    if (view instanceof import_obsidian3.MarkdownView && view.file?.path === path) return view;
  }
  return null;
}

// src/search.ts
var import_obsidian4 = require("obsidian");

// src/timing.ts
var Debounced = class {
  constructor(run, waitMs) {
    this.run = run;
    this.waitMs = waitMs;
    this.timer = null;
    this.waiting = [];
    this.fired = 0;
    this.latest = null;
  }
  call(arg) {
    if (this.timer !== null) clearTimeout(this.timer);
    const result = new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
    this.timer = setTimeout(() => this.fire(arg), this.waitMs);
    return result;
  }
  fire(arg) {
    this.timer = null;
    const waiters = this.waiting;
    this.waiting = [];
    const generation = ++this.fired;
    const running = this.run(arg);
    this.latest = running;
    const settle = (ok, value) => {
      if (generation !== this.fired && this.latest) {
        const newer = this.latest;
        for (const w of waiters) newer.then(w.resolve, w.reject);
      } else if (this.timer !== null) {
        this.waiting.push(...waiters);
      } else {
        for (const w of waiters) ok ? w.resolve(value) : w.reject(value);
      }
    };
    running.then((value) => settle(true, value), (error) => settle(false, error));
  }
  cancel() {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
};

// src/search.ts
var RESULTS = 12;
var SearchSession = class {
  constructor(client, exists, debounceMs) {
    this.client = client;
    this.exists = exists;
    this.debounced = new Debounced((typed) => this.search(typed), debounceMs);
  }
  rows(typed) {
    if (!typed.trim()) {
      this.debounced.cancel();
      return Promise.resolve([]);
    }
    return this.debounced.call(typed);
  }
  async search(typed) {
    const { query, marks } = readQuery(typed);
    if (!query) return [];
    let answer;
    try {
      answer = await this.client.search(query, RESULTS);
    } catch (error) {
      if (error instanceof ProblemError) {
        if (error.problem.kind === "bad-query" || error.problem.kind === "slow") return [{ kind: "problem", problem: error.problem }];
        return [{ kind: "problem", problem: error.problem }];
      }
      throw error;
    }
    return rowsOf(answer, marks, this.exists);
  }
};
var NO_MATCH = "nothing in the index matches this well; the closest results are shown";
function rowsOf(answer, typedMarks, exists) {
  const added = Object.values(answer.alternatives ?? {}).flat().map((word) => word.replace(/\*$/, ""));
  const marks = [.../* @__PURE__ */ new Set([...typedMarks, ...added])];
  const rows = [];
  for (const hit of answer.results) {
    const gone = !exists(hit.path);
    hit.sections.forEach((section, n) => rows.push({ kind: "section", hit, section, first: n === 0, marks, gone }));
  }
  const notices = answer.notices.filter(Boolean);
  if (rows.length === 0) return [{ kind: "notice", text: notices[0] ?? "No note matches." }];
  const told = notices.filter((notice) => notice !== NO_MATCH).map((text2) => ({ kind: "notice", text: text2 }));
  if (answer.no_match) told.push({ kind: "notice", text: "Nothing answers this closely; these are the nearest notes." });
  return [...told, ...rows];
}
var SearchModal = class extends import_obsidian4.SuggestModal {
  constructor(app, client, renames, debounceMs, onProblem) {
    super(app);
    this.client = client;
    this.renames = renames;
    this.onProblem = onProblem;
    this.how = "open";
    /** The rows on screen: a line above the notes passes Enter on to the first of them. */
    this.shown = [];
    this.session = new SearchSession(client, (path) => findFile(app, renames, path) !== null, debounceMs);
    this.limit = 60;
    this.emptyStateText = "Type to search your vault with vaultseek.";
    this.setPlaceholder('Search with vaultseek\u2026 (path: tag: #tag kind: after: before: "phrase" -word)');
    this.setInstructions([
      { command: "\u2191\u2193", purpose: "to move" },
      { command: "\u21B5", purpose: "to open at the section" },
      { command: "mod \u21B5", purpose: "in a new tab" },
      { command: "shift \u21B5", purpose: "to insert a link" },
      { command: "esc", purpose: "to close" }
    ]);
    this.scope.register(["Mod"], "Enter", (event) => {
      this.chooseSelected(event, "tab");
      return false;
    });
    this.scope.register(["Shift"], "Enter", (event) => {
      this.chooseSelected(event, "link");
      return false;
    });
  }
  chooseSelected(event, how) {
    this.how = how;
    this.selectActiveSuggestion(event);
  }
  async getSuggestions(typed) {
    this.shown = await this.session.rows(typed);
    return this.shown;
  }
  renderSuggestion(row, el) {
    el.addClass("vaultseek-row");
    if (row.kind === "problem") {
      renderProblem(el, row.problem);
      return;
    }
    if (row.kind === "notice") {
      el.addClass("vaultseek-notice");
      el.setText(row.text);
      return;
    }
    const { hit, section, first } = row;
    el.toggleClass("vaultseek-subrow", !first);
    el.toggleClass("vaultseek-gone", row.gone);
    if (first) {
      const head = el.createDiv({ cls: "vaultseek-row-head" });
      head.createSpan({ cls: "vaultseek-title", text: hit.title || hit.path });
      if (hit.relevance >= 0.05) {
        head.createSpan({ cls: "vaultseek-relevance", text: `${Math.round(hit.relevance * 100)}%`, attr: { title: "how likely this answers the query" } });
      }
      el.createDiv({ cls: "vaultseek-path", text: row.gone ? `${hit.path} \u2014 renamed or deleted since indexing` : hit.path });
    }
    const where = section.label || section.section;
    if (where) el.createDiv({ cls: "vaultseek-section", text: `\u203A ${where}` });
    renderRuns(el.createDiv({ cls: "vaultseek-snippet" }), markRuns(section.snippet, row.marks));
  }
  onChooseSuggestion(row) {
    const how = this.how;
    this.how = "open";
    void this.choose(row, how);
  }
  async choose(chosen, how) {
    const row = chosen.kind === "notice" ? this.shown.find((r) => r.kind === "section") ?? chosen : chosen;
    if (row.kind === "problem") {
      this.onProblem(row.problem);
      return;
    }
    if (row.kind !== "section") return;
    if (how === "link") {
      const view = this.app.workspace.getActiveViewOfType(import_obsidian4.MarkdownView);
      const source = view?.file?.path ?? "";
      const link = linkTo(this.app, this.renames, row.hit.path, source);
      if (view && link) view.editor.replaceSelection(link);
      return;
    }
    await openTarget(this.app, this.renames, { path: row.hit.path, section: row.section.section, page: row.section.location?.page ?? null }, row.marks, how === "tab");
  }
};

// src/settings.ts
var import_obsidian5 = require("obsidian");
var DEFAULT_SETTINGS = {
  serverUrl: "http://127.0.0.1:8765",
  token: "",
  autoStart: false,
  serveCommand: "vaultseek",
  debounceMs: 120
};
function readSettings(stored) {
  const settings = { ...DEFAULT_SETTINGS };
  if (!stored || typeof stored !== "object") return settings;
  const given = stored;
  for (const key of Object.keys(DEFAULT_SETTINGS)) {
    if (typeof given[key] === typeof DEFAULT_SETTINGS[key]) settings[key] = given[key];
  }
  settings.debounceMs = Math.min(1e3, Math.max(0, Math.round(settings.debounceMs)));
  return settings;
}
var VaultseekSettingTab = class extends import_obsidian5.PluginSettingTab {
  constructor(app, plugin) {
    super(app, plugin);
    this.plugin = plugin;
  }
  display() {
    const { containerEl } = this;
    containerEl.empty();
    const settings = this.plugin.settings;
    const save = async () => {
      await this.plugin.saveSettings();
    };
    new import_obsidian5.Setting(containerEl).setName("Server URL").setDesc("Where `vaultseek serve` (or the daemon) answers, on this machine.").addText((text2) => text2.setPlaceholder(DEFAULT_SETTINGS.serverUrl).setValue(settings.serverUrl).onChange(async (value) => {
      settings.serverUrl = value.trim() || DEFAULT_SETTINGS.serverUrl;
      await save();
    }));
    new import_obsidian5.Setting(containerEl).setName("Token").setDesc("The token in the file given to `vaultseek serve --token-file` (empty when it runs without one).").addText((text2) => {
      text2.inputEl.type = "password";
      text2.setValue(settings.token).onChange(async (value) => {
        settings.token = value.trim();
        await save();
      });
    });
    new import_obsidian5.Setting(containerEl).setName("Start vaultseek when it is not running").setDesc("Allow the plugin to run `vaultseek serve` on this vault (with the URL's port and this token) when nothing answers.").addToggle((toggle) => toggle.setValue(settings.autoStart).onChange(async (value) => {
      settings.autoStart = value;
      await save();
    }));
    new import_obsidian5.Setting(containerEl).setName("vaultseek command").setDesc("The program to start (a full path if Obsidian does not find it on its PATH).").addText((text2) => text2.setValue(settings.serveCommand).onChange(async (value) => {
      settings.serveCommand = value.trim() || DEFAULT_SETTINGS.serveCommand;
      await save();
    }));
    new import_obsidian5.Setting(containerEl).setName("Search delay").setDesc("Milliseconds after the last keystroke before the search box asks (120 by default).").addText((text2) => text2.setValue(String(settings.debounceMs)).onChange(async (value) => {
      const ms = Number(value);
      if (Number.isFinite(ms)) {
        settings.debounceMs = Math.min(1e3, Math.max(0, Math.round(ms)));
        await save();
      }
    }));
    const check = new import_obsidian5.Setting(containerEl).setName("Connection").setDesc("Ask the server now.");
    check.addButton((button) => button.setButtonText("Check").onClick(async () => {
      try {
        const state = await this.plugin.client.indexState();
        check.setDesc(`Connected: ${state.files.toLocaleString("en")} files indexed in ${state.vault}.`);
      } catch (error) {
        check.setDesc(error instanceof ProblemError ? describe(error.problem) : String(error));
      }
    }));
  }
};

// src/status.ts
function ago(iso, now) {
  if (!iso) return "never indexed";
  const seconds = Math.max(0, (now - Date.parse(iso)) / 1e3);
  if (Number.isNaN(seconds)) return "indexed";
  if (seconds < 60) return "indexed just now";
  if (seconds < 3600) return `indexed ${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `indexed ${Math.floor(seconds / 3600)} h ago`;
  return `indexed ${Math.floor(seconds / 86400)} d ago`;
}
function deepText(state) {
  const deep = state.deep;
  if (!deep || deep.state === "complete") return null;
  if (deep.state === "unavailable") return "deep tier unavailable";
  const share = deep.chunks > 0 ? Math.floor(100 * deep.embedded / deep.chunks) : 0;
  if (deep.state === "paused") return `deep ${share}% (paused)`;
  if (deep.state === "waiting") return `deep ${share}% (waiting)`;
  return `deep ${share}%`;
}
function sameFolder(a, b) {
  const norm = (p) => {
    const slashed = p.replace(/\\/g, "/").replace(/\/+$/, "");
    return /^[A-Za-z]:/.test(slashed) ? slashed.toLowerCase() : slashed;
  };
  return norm(a) === norm(b);
}
function statusText(state, problem, now, vaultPath = null) {
  if (problem) {
    const short = { down: "not running", token: "wrong token", "no-index": "index empty", slow: "slow to answer" };
    return { text: `vaultseek: ${short[problem.kind] ?? "error"}`, tooltip: `${problem.title}. ${problem.message} ${problem.hint}`.trim() };
  }
  if (!state) return { text: "vaultseek: \u2026", tooltip: "Asking vaultseek\u2026" };
  if (vaultPath && state.vault && !sameFolder(state.vault, vaultPath)) {
    return {
      text: "vaultseek: serves another vault",
      tooltip: `vaultseek serves ${state.vault}, not this vault (${vaultPath}): its results may not open here. Start one for this vault: vaultseek serve --vault "${vaultPath}" (on another port, in the settings' URL).`
    };
  }
  const parts = [state.indexing ? "indexing\u2026" : ago(state.last_indexed, now)];
  const deep = deepText(state);
  if (deep) parts.push(deep);
  const notes = `${state.files.toLocaleString("en")} files, ${state.chunks.toLocaleString("en")} sections`;
  const error = state.indexing_error ? `
The last index run failed: ${state.indexing_error}` : "";
  return { text: `vaultseek: ${parts.join(" \xB7 ")}`, tooltip: `${notes} in ${state.vault}.${error}
Click to re-index.` };
}

// src/main.ts
var STATUS_EVERY_MS = 3e4;
var SAVE_SETTLE_MS = 1500;
var VaultseekPlugin = class extends import_obsidian6.Plugin {
  constructor() {
    super(...arguments);
    this.settings = { ...DEFAULT_SETTINGS };
    this.renames = new RenameLog();
    this.indexState = null;
    this.problem = null;
    this.statusEl = null;
    this.startedServer = false;
    this.saved = new Debounced((path) => this.afterSave(path), SAVE_SETTLE_MS);
  }
  async onload() {
    this.settings = readSettings(await this.loadData());
    this.client = new VaultseekClient(() => this.settings, defaultTransport(), () => this.vaultPath());
    this.registerView(RELATED_VIEW, (leaf) => new RelatedView(leaf, this.client, this.renames));
    this.registerView(CHAT_VIEW, (leaf) => new ChatView(leaf, this.client, this.renames));
    this.addCommand({ id: "search", name: "Search the vault", callback: () => this.openSearch() });
    this.addCommand({ id: "related-notes", name: "Show related notes", callback: () => void this.reveal(RELATED_VIEW) });
    this.addCommand({ id: "ask", name: "Ask your vault", callback: () => void this.reveal(CHAT_VIEW) });
    this.addCommand({ id: "reindex", name: "Re-index the vault", callback: () => void this.reindex() });
    this.addRibbonIcon("search", "vaultseek: search the vault", () => this.openSearch());
    this.statusEl = this.addStatusBarItem();
    this.statusEl.addClass("vaultseek-status", "mod-clickable");
    this.statusEl.addEventListener("click", () => void this.reindex());
    this.showStatus();
    this.addSettingTab(new VaultseekSettingTab(this.app, this));
    this.registerEvent(this.app.workspace.on("file-open", (file) => {
      for (const view of this.views(RELATED_VIEW)) void view.show(file);
    }));
    this.registerEvent(this.app.vault.on("modify", (file) => {
      if (file instanceof import_obsidian6.TFile && file.extension === "md") void this.saved.call(file.path);
    }));
    this.registerEvent(this.app.vault.on("rename", (file, oldPath) => {
      this.renames.record(oldPath, file.path);
      for (const view of this.views(RELATED_VIEW)) view.renamed(oldPath, file.path);
    }));
    this.registerEvent(this.app.vault.on("delete", () => {
      for (const view of this.views(RELATED_VIEW)) view.render();
    }));
    this.registerInterval(globalThis.setInterval(() => void this.refreshStatus(), STATUS_EVERY_MS));
    this.app.workspace.onLayoutReady(() => void this.refreshStatus());
  }
  onunload() {
    this.saved.cancel();
  }
  async saveSettings() {
    await this.saveData(this.settings);
    void this.refreshStatus();
  }
  vaultPath() {
    const adapter = this.app.vault.adapter;
    return typeof adapter.getBasePath === "function" ? adapter.getBasePath() : null;
  }
  /** This vault's folder with symbolic links resolved when the server's differs only by them. */
  realVaultPath(served) {
    const vault = this.vaultPath();
    if (!vault || !served) return vault;
    try {
      const fs = require("fs");
      return fs.realpathSync(vault) === fs.realpathSync(served) ? served : vault;
    } catch {
      return vault;
    }
  }
  openSearch() {
    new SearchModal(this.app, this.client, this.renames, this.settings.debounceMs, (problem) => this.act(problem)).open();
  }
  /** What choosing a problem does: start the server when allowed, else say how. */
  act(problem) {
    if (problem.kind === "down" && this.settings.autoStart) void this.ensureServer();
    else new import_obsidian6.Notice(describe(problem), 12e3);
  }
  views(type) {
    return this.app.workspace.getLeavesOfType(type).map((leaf) => leaf.view);
  }
  async reveal(type) {
    let leaf = this.app.workspace.getLeavesOfType(type)[0];
    if (!leaf) {
      leaf = this.app.workspace.getRightLeaf(false);
      await leaf.setViewState({ type, active: true });
    }
    this.app.workspace.revealLeaf(leaf);
  }
  async refreshStatus() {
    try {
      this.indexState = await this.client.readyState();
      this.problem = null;
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      this.problem = error.problem;
      if (error.problem.kind === "down" && this.settings.autoStart) void this.ensureServer();
    }
    this.showStatus();
  }
  showStatus() {
    if (!this.statusEl) return;
    const state = this.indexState && !this.problem ? this.indexState : null;
    const { text: text2, tooltip } = statusText(state, this.problem, Date.now(), this.realVaultPath(state?.vault ?? null));
    this.statusEl.setText(text2);
    this.statusEl.setAttr("aria-label", tooltip);
    this.statusEl.setAttr("title", tooltip);
  }
  /** Start `vaultseek serve` once per session, when allowed and nothing answers. */
  async ensureServer() {
    const vault = this.vaultPath();
    if (this.startedServer || !this.settings.autoStart || !vault) return;
    this.startedServer = true;
    const failed = await startServer(launchOf(this.settings.serveCommand, this.settings.serverUrl, this.settings.token, vault));
    if (failed) {
      this.problem = { ...serverDown(this.settings.serverUrl, vault, false), message: `Starting it failed: ${failed}.` };
      this.showStatus();
      return;
    }
    new import_obsidian6.Notice("vaultseek: starting the server for this vault\u2026");
    for (let tries = 0; tries < 60; tries++) {
      await new Promise((resolve) => globalThis.setTimeout(resolve, 1e3));
      try {
        await this.client.indexState();
        await this.refreshStatus();
        return;
      } catch {
      }
    }
  }
  async reindex() {
    try {
      this.indexState = this.indexState ? { ...this.indexState, indexing: true } : null;
      this.showStatus();
      await this.client.reindex(false);
      new import_obsidian6.Notice("vaultseek: indexing the vault");
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      this.act(error.problem);
    }
    globalThis.setTimeout(() => void this.refreshStatus(), 2e3);
  }
  /** A note was saved: index the change, then refresh the panes that show it. */
  async afterSave(path) {
    try {
      this.indexState = await this.client.reindex(true);
      this.problem = null;
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      this.problem = error.problem;
    }
    this.showStatus();
    for (const view of this.views(RELATED_VIEW)) {
      if (view.state.path === path) await view.show(this.app.vault.getAbstractFileByPath(path));
    }
  }
};
var internals = {
  VaultseekClient,
  NodeTransport,
  FetchTransport,
  LineReader,
  problemOf,
  readMissingLinks,
  readQuery,
  markedWords,
  markRanges,
  markRuns,
  headingOf,
  RenameLog,
  Debounced,
  openTarget,
  findFile,
  linkTo,
  SearchSession,
  SearchModal,
  rowsOf,
  RelatedView,
  loadRelated,
  reasonOf,
  ChatView,
  applyEnvelope,
  citationRuns,
  statusText,
  sameFolder,
  launchOf,
  startServer,
  readSettings,
  DEFAULT_SETTINGS,
  serverDown,
  ProblemError
};
