// The project's own stand-in for the `obsidian` module: the parts of Obsidian's API the plugin
// uses, small and observable (what was opened, which notices were shown, the status bar text).
// It runs under Node (no DOM: the logic tests) and in a browser page (the views rendered).
// It imitates Obsidian's behaviour where the plugin relies on it; it is not Obsidian.
"use strict";

const hasDom = typeof document !== "undefined" && typeof HTMLElement !== "undefined";

// Obsidian adds these helpers to every element.
function domOptions(el, o) {
  if (o === undefined || o === null) return el;
  if (typeof o === "string") o = { cls: o };
  if (o.cls) el.classList.add(...(Array.isArray(o.cls) ? o.cls : String(o.cls).split(/\s+/)).filter(Boolean));
  if (o.text !== undefined) el.textContent = String(o.text);
  if (o.href !== undefined) el.setAttribute("href", o.href);
  if (o.title !== undefined) el.setAttribute("title", o.title);
  if (o.type !== undefined) el.setAttribute("type", o.type);
  if (o.placeholder !== undefined) el.setAttribute("placeholder", o.placeholder);
  if (o.value !== undefined) el.value = o.value;
  for (const [name, value] of Object.entries(o.attr || {})) el.setAttribute(name, String(value));
  return el;
}
if (hasDom && !HTMLElement.prototype.createEl) {
  const proto = HTMLElement.prototype;
  proto.createEl = function (tag, o, callback) {
    const el = domOptions(document.createElement(tag), o);
    this.appendChild(el);
    if (callback) callback(el);
    return el;
  };
  proto.createDiv = function (o, callback) { return this.createEl("div", o, callback); };
  proto.createSpan = function (o, callback) { return this.createEl("span", o, callback); };
  proto.empty = function () { while (this.firstChild) this.removeChild(this.firstChild); };
  proto.setText = function (text) { this.textContent = String(text); };
  proto.appendText = function (text) { this.appendChild(document.createTextNode(String(text))); };
  proto.addClass = function (...cls) { this.classList.add(...cls); };
  proto.removeClass = function (...cls) { this.classList.remove(...cls); };
  proto.toggleClass = function (cls, on) { this.classList.toggle(cls, Boolean(on)); };
  proto.hasClass = function (cls) { return this.classList.contains(cls); };
  proto.setAttr = function (name, value) { this.setAttribute(name, String(value)); };
}

/** A stand-in element under Node: records text and classes, enough for the plugin's status bar. */
class NodeElement {
  constructor(tag) { this.tag = tag; this.children = []; this.textContent = ""; this.classes = new Set(); this.attrs = {}; this.listeners = {}; }
  createEl(tag, o) { const el = new NodeElement(tag); if (typeof o === "string") o = { cls: o }; if (o && o.cls) String(o.cls).split(/\s+/).forEach((c) => el.classes.add(c)); if (o && o.text !== undefined) el.textContent = String(o.text); this.children.push(el); return el; }
  createDiv(o) { return this.createEl("div", o); }
  createSpan(o) { return this.createEl("span", o); }
  empty() { this.children = []; this.textContent = ""; }
  setText(text) { this.textContent = String(text); }
  appendText(text) { this.textContent += String(text); }
  addClass(...cls) { cls.forEach((c) => this.classes.add(c)); }
  removeClass(...cls) { cls.forEach((c) => this.classes.delete(c)); }
  toggleClass(cls, on) { if (on) this.classes.add(cls); else this.classes.delete(cls); }
  setAttr(name, value) { this.attrs[name] = String(value); }
  setAttribute(name, value) { this.attrs[name] = String(value); }
  addEventListener(name, callback) { (this.listeners[name] = this.listeners[name] || []).push(callback); }
  click() { for (const callback of this.listeners.click || []) callback({}); }
}

function element(tag) {
  return hasDom ? document.createElement(tag) : new NodeElement(tag);
}

class Events {
  constructor() { this._handlers = {}; }
  on(name, callback) { (this._handlers[name] = this._handlers[name] || []).push(callback); return { events: this, name, callback }; }
  off(name, callback) { this._handlers[name] = (this._handlers[name] || []).filter((c) => c !== callback); }
  offref(ref) { this.off(ref.name, ref.callback); }
  trigger(name, ...args) { for (const callback of [...(this._handlers[name] || [])]) callback(...args); }
}

class Component {
  constructor() { this._cleanups = []; this._loaded = false; }
  load() { this._loaded = true; if (this.onload) return this.onload(); }
  unload() { for (const cleanup of this._cleanups.splice(0)) cleanup(); this._loaded = false; if (this.onunload) this.onunload(); }
  register(cleanup) { this._cleanups.push(cleanup); }
  registerEvent(ref) { this._cleanups.push(() => ref.events.offref(ref)); }
  registerInterval(id) { this._cleanups.push(() => clearInterval(id)); return id; }
  registerDomEvent(el, name, callback) { el.addEventListener(name, callback); }
}

class TAbstractFile {
  constructor(path) { this.setPath(path); }
  setPath(path) { this.path = path; this.name = path.split("/").pop(); }
}
class TFile extends TAbstractFile {
  setPath(path) {
    super.setPath(path);
    const dot = this.name.lastIndexOf(".");
    this.extension = dot > 0 ? this.name.slice(dot + 1) : "";
    this.basename = dot > 0 ? this.name.slice(0, dot) : this.name;
  }
}
class TFolder extends TAbstractFile {}

class Vault extends Events {
  constructor(files = {}, basePath = "/vault") {
    super();
    this.contents = new Map(Object.entries(files));
    this.files = new Map([...this.contents.keys()].map((path) => [path, new TFile(path)]));
    this.adapter = { getBasePath: () => basePath };
  }
  getName() { return this.adapter.getBasePath().split("/").pop(); }
  getAbstractFileByPath(path) { return this.files.get(path) || null; }
  getMarkdownFiles() { return [...this.files.values()].filter((f) => f.extension === "md"); }
  getFiles() { return [...this.files.values()]; }
  async cachedRead(file) { return this.contents.get(file.path) ?? ""; }
  async read(file) { return this.contents.get(file.path) ?? ""; }
  async create(path, text) { const file = new TFile(path); this.files.set(path, file); this.contents.set(path, text); this.trigger("create", file); return file; }
  async modify(file, text) { this.contents.set(file.path, text); this.trigger("modify", file); }
  async rename(file, newPath) {
    const old = file.path;
    this.files.delete(old); const text = this.contents.get(old); this.contents.delete(old);
    file.setPath(newPath); this.files.set(newPath, file); this.contents.set(newPath, text);
    this.trigger("rename", file, old);
  }
  async delete(file) { this.files.delete(file.path); this.contents.delete(file.path); this.trigger("delete", file); }
}

class MetadataCache extends Events {
  constructor(vault) { super(); this.vault = vault; }
  getFileCache(file) {
    const text = this.vault.contents.get(file.path);
    if (text === undefined) return null;
    const headings = [];
    text.split("\n").forEach((line, n) => {
      const found = /^(#{1,6})\s+(.*?)\s*$/.exec(line);
      if (found) headings.push({ heading: found[2], level: found[1].length, position: { start: { line: n, col: 0, offset: 0 }, end: { line: n, col: line.length, offset: 0 } } });
    });
    return { headings };
  }
  getFirstLinkpathDest(linkpath) { return this.vault.getMarkdownFiles().find((f) => f.basename === linkpath || f.path === linkpath) || null; }
}

class FileManager {
  generateMarkdownLink(file) { return `[[${file.extension === "md" ? file.basename : file.name}]]`; }
}

/** A one-string editor: a cursor, replaceSelection, setCursor. */
class Editor {
  constructor(text = "") { this.text = text; this.cursor = text.length; }
  getValue() { return this.text; }
  setValue(text) { this.text = text; this.cursor = text.length; }
  replaceSelection(insert) { this.text = this.text.slice(0, this.cursor) + insert + this.text.slice(this.cursor); this.cursor += insert.length; }
  setCursor(pos) { this.cursorLine = pos.line; }
  getCursor() { return { line: this.cursorLine || 0, ch: 0 }; }
  scrollIntoView() {}
}

class View extends Component {
  constructor(leaf) {
    super();
    this.leaf = leaf;
    this.app = leaf.app;
    this.containerEl = element("div");
    this.containerEl.addClass("workspace-leaf-content");
    const header = this.containerEl.createDiv({ cls: "view-header" });
    void header;
    this.contentEl = this.containerEl.createDiv({ cls: "view-content" });
  }
  getViewType() { return "empty"; }
  getDisplayText() { return ""; }
  getIcon() { return ""; }
}
class ItemView extends View {}
class MarkdownView extends View {
  constructor(leaf, file) { super(leaf); this.file = file; this.editor = new Editor(leaf.app.vault.contents.get(file.path) ?? ""); }
  getViewType() { return "markdown"; }
}

class WorkspaceLeaf {
  constructor(app, where) { this.app = app; this.where = where; this.view = null; }
  async setViewState({ type }) {
    const factory = this.app.viewFactories[type];
    if (!factory) throw new Error(`no view registered as ${type}`);
    this.view = factory(this);
    if (hasDom && this.where) this.where.appendChild(this.view.containerEl);
    this.app.workspace.leaves.push(this);
    if (this.view.onOpen) await this.view.onOpen();
  }
  async openFile(file, state = {}) {
    this.view = new MarkdownView(this, file);
    if (!this.app.workspace.leaves.includes(this)) this.app.workspace.leaves.push(this);
    this.app.workspace.activeLeaf = this;
    this.app.opened.push({ path: file.path, eState: state.eState || {} });
    this.app.workspace.trigger("file-open", file);
  }
  getViewState() { return { type: this.view ? this.view.getViewType() : "empty" }; }
  detach() { const leaves = this.app.workspace.leaves; leaves.splice(leaves.indexOf(this), 1); }
}

class Workspace extends Events {
  constructor(app) { super(); this.app = app; this.leaves = []; this.activeLeaf = null; this.layoutReady = false; this._ready = []; }
  getLeaf(newLeaf) {
    if (!newLeaf && this.activeLeaf && this.activeLeaf.view instanceof MarkdownView) return this.activeLeaf;
    return new WorkspaceLeaf(this.app, this.app.rootEl);
  }
  getRightLeaf() { return new WorkspaceLeaf(this.app, this.app.rightEl); }
  getLeavesOfType(type) { return this.leaves.filter((leaf) => leaf.view && leaf.view.getViewType() === type); }
  revealLeaf() {}
  getActiveFile() { const view = this.activeLeaf && this.activeLeaf.view; return view instanceof MarkdownView ? view.file : null; }
  getActiveViewOfType(type) { const view = this.activeLeaf && this.activeLeaf.view; return view instanceof type ? view : null; }
  async openLinkText(linktext, sourcePath, newLeaf) {
    const [path, subpath] = linktext.split("#");
    this.app.opened.push({ path, eState: { subpath: subpath ? `#${subpath}` : undefined }, linktext, newLeaf: Boolean(newLeaf) });
  }
  onLayoutReady(callback) { if (this.layoutReady) callback(); else this._ready.push(callback); }
  ready() { this.layoutReady = true; for (const callback of this._ready.splice(0)) callback(); }
}

class App {
  constructor({ files = {}, basePath = "/vault" } = {}) {
    this.vault = new Vault(files, basePath);
    this.metadataCache = new MetadataCache(this.vault);
    this.fileManager = new FileManager();
    this.workspace = new Workspace(this);
    this.viewFactories = {};
    this.commands = {};
    this.opened = [];
    this.settingTabs = [];
    this.data = null;
    this.statusBarEl = element("div");
    this.rootEl = hasDom ? document.body : null;
    this.rightEl = hasDom ? document.body : null;
  }
}

class Plugin extends Component {
  constructor(app, manifest) { super(); this.app = app; this.manifest = manifest || { id: "standin" }; }
  async loadData() { return this.app.data; }
  async saveData(data) { this.app.data = JSON.parse(JSON.stringify(data)); }
  addCommand(command) { this.app.commands[command.id] = command; return command; }
  addRibbonIcon(_icon, title, callback) { const el = element("div"); el.setAttr("aria-label", title); el.addEventListener("click", callback); return el; }
  addStatusBarItem() { return this.app.statusBarEl.createDiv({ cls: "status-bar-item" }); }
  addSettingTab(tab) { this.app.settingTabs.push(tab); }
  registerView(type, factory) { this.app.viewFactories[type] = factory; this.register(() => delete this.app.viewFactories[type]); }
  registerEditorExtension() {}
}

class Notice {
  constructor(message, timeout) {
    Notice.shown.push(String(message));
    this.message = message; this.timeout = timeout;
    if (hasDom) {
      let box = document.querySelector(".notice-container");
      if (!box) box = document.body.createDiv({ cls: "notice-container" });
      this.noticeEl = box.createDiv({ cls: "notice", text: String(message) });
    }
  }
  hide() { if (this.noticeEl) this.noticeEl.remove(); }
  setMessage(message) { this.message = message; if (this.noticeEl) this.noticeEl.setText(message); return this; }
}
Notice.shown = [];

class Scope {
  constructor() { this.keys = []; }
  register(modifiers, key, callback) { const handler = { modifiers: modifiers || [], key, callback }; this.keys.push(handler); return handler; }
  unregister(handler) { this.keys = this.keys.filter((h) => h !== handler); }
}

class Modal {
  constructor(app) {
    this.app = app;
    this.scope = new Scope();
    this.containerEl = element("div");
    this.containerEl.addClass("modal-container");
    this.modalEl = this.containerEl.createDiv({ cls: "modal" });
    this.titleEl = this.modalEl.createDiv({ cls: "modal-title" });
    this.contentEl = this.modalEl.createDiv({ cls: "modal-content" });
  }
  open() { if (hasDom) document.body.appendChild(this.containerEl); if (this.onOpen) this.onOpen(); }
  close() { if (hasDom) this.containerEl.remove(); if (this.onClose) this.onClose(); }
}

/** Obsidian's SuggestModal as the plugin sees it: an input, a list redrawn from getSuggestions on
 * each input event, ↑/↓ to move, Enter to choose (with the Scope's Mod/Shift bindings first). */
class SuggestModal extends Modal {
  constructor(app) {
    super(app);
    this.modalEl.addClass("prompt");
    this.inputEl = this.modalEl.createEl("input", { cls: "prompt-input", attr: { type: "text" } });
    this.resultContainerEl = this.modalEl.createDiv({ cls: "prompt-results" });
    this.instructionsEl = this.modalEl.createDiv({ cls: "prompt-instructions" });
    this.chooser = { values: [], selectedItem: 0 };
    this.emptyStateText = "No results found.";
    this.limit = 50;
    this._asked = 0;
    this.modalEl.insertBefore && this.modalEl.insertBefore(this.inputEl, this.modalEl.firstChild);
    if (hasDom) {
      this.inputEl.addEventListener("input", () => void this.updateSuggestions());
      this.inputEl.addEventListener("keydown", (event) => this._key(event));
    }
  }
  setPlaceholder(text) { this.inputEl.setAttribute("placeholder", text); }
  setInstructions(instructions) {
    if (!this.instructionsEl.empty) return;
    this.instructionsEl.empty();
    for (const { command, purpose } of instructions) {
      const item = this.instructionsEl.createDiv({ cls: "prompt-instruction" });
      item.createSpan({ cls: "prompt-instruction-command", text: command });
      item.createSpan({ text: ` ${purpose}` });
    }
  }
  open() { super.open(); if (hasDom) this.inputEl.focus(); void this.updateSuggestions(); }
  async updateSuggestions() {
    const asked = ++this._asked;
    const values = await this.getSuggestions(this.inputEl.value);
    if (asked !== this._asked) return; // Obsidian drops an answer to an older input
    this.chooser.values = values.slice(0, this.limit);
    this.chooser.selectedItem = 0;
    this._draw();
    this.drawn = (this.drawn || 0) + 1;
    if (this.onDrawn) this.onDrawn(this.chooser.values);
  }
  _draw() {
    if (!hasDom) return;
    this.resultContainerEl.empty();
    if (this.chooser.values.length === 0) {
      this.resultContainerEl.createDiv({ cls: "suggestion-empty", text: this.emptyStateText });
      return;
    }
    this.chooser.values.forEach((value, n) => {
      const el = this.resultContainerEl.createDiv({ cls: "suggestion-item" });
      el.toggleClass("is-selected", n === this.chooser.selectedItem);
      this.renderSuggestion(value, el);
      el.addEventListener("click", (event) => { this.close(); this.onChooseSuggestion(value, event); });
    });
  }
  selectActiveSuggestion(event) {
    const value = this.chooser.values[this.chooser.selectedItem];
    if (value === undefined) return;
    this.close();
    this.onChooseSuggestion(value, event);
  }
  _key(event) {
    const mods = [event.ctrlKey || event.metaKey ? "Mod" : null, event.shiftKey ? "Shift" : null].filter(Boolean);
    const bound = this.scope.keys.find((h) => h.key === event.key && h.modifiers.length === mods.length && h.modifiers.every((m) => mods.includes(m)));
    if (bound) { event.preventDefault(); bound.callback(event, {}); return; }
    const count = this.chooser.values.length;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      if (count === 0) return;
      this.chooser.selectedItem = (this.chooser.selectedItem + (event.key === "ArrowDown" ? 1 : count - 1)) % count;
      [...this.resultContainerEl.children].forEach((el, n) => el.toggleClass("is-selected", n === this.chooser.selectedItem));
    } else if (event.key === "Enter" && count > 0) {
      event.preventDefault();
      const value = this.chooser.values[this.chooser.selectedItem];
      this.close();
      this.onChooseSuggestion(value, event);
    } else if (event.key === "Escape") {
      this.close();
    }
  }
}

class PluginSettingTab {
  constructor(app, plugin) { this.app = app; this.plugin = plugin; this.containerEl = element("div"); this.containerEl.addClass("vertical-tab-content"); }
}

class Setting {
  constructor(containerEl) {
    this.settingEl = containerEl.createDiv({ cls: "setting-item" });
    this.infoEl = this.settingEl.createDiv({ cls: "setting-item-info" });
    this.nameEl = this.infoEl.createDiv({ cls: "setting-item-name" });
    this.descEl = this.infoEl.createDiv({ cls: "setting-item-description" });
    this.controlEl = this.settingEl.createDiv({ cls: "setting-item-control" });
  }
  setName(name) { this.nameEl.setText(name); return this; }
  setDesc(desc) { this.descEl.setText(desc); return this; }
  _input(tag, type) {
    const inputEl = this.controlEl.createEl(tag, { attr: { type } });
    let change = () => {};
    if (inputEl.addEventListener) inputEl.addEventListener(type === "checkbox" ? "change" : "input", () => change(type === "checkbox" ? inputEl.checked : inputEl.value));
    return { inputEl, setValue(v) { if (type === "checkbox") inputEl.checked = v; else inputEl.value = v; return this; }, setPlaceholder(p) { inputEl.setAttribute("placeholder", p); return this; }, onChange(cb) { change = cb; return this; } };
  }
  addText(callback) { callback(this._input("input", "text")); return this; }
  addToggle(callback) { callback(this._input("input", "checkbox")); return this; }
  addButton(callback) {
    const buttonEl = this.controlEl.createEl("button");
    const button = { buttonEl, setButtonText(t) { buttonEl.setText(t); return this; }, setCta() { return this; }, onClick(cb) { buttonEl.addEventListener("click", cb); return this; } };
    callback(button);
    return this;
  }
}

function debounce(callback, timeout = 0) {
  let timer = null;
  const run = (...args) => { clearTimeout(timer); timer = setTimeout(() => callback(...args), timeout); return run; };
  run.cancel = () => { clearTimeout(timer); return run; };
  return run;
}

module.exports = {
  App, Component, Editor, Events, FileManager, ItemView, MarkdownView, MetadataCache, Modal, Notice,
  Plugin, PluginSettingTab, Scope, Setting, SuggestModal, TAbstractFile, TFile, TFolder, Vault, View,
  Workspace, WorkspaceLeaf, debounce, normalizePath: (p) => p.replace(/\\/g, "/").replace(/\/+/g, "/"),
  setIcon: () => {}, Platform: { isDesktop: true, isMobile: false },
};
