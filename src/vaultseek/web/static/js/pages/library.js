// The knowledge base: every file of the index, a page at a time from the server (searched,
// sorted and filtered there, so 20k files cost what 50 do), a folder and category tree beside
// it, a status per file that says what is true (indexed, waiting for OCR, failed and why,
// skipped and why, being indexed), uploads with progress that ask before replacing a file, and
// checkboxes that choose the chat's sources (remember("chat.scope", {paths})).

import { api, documentUrl, el, formatSize, openPassage, readNdjson, recall, remember, toast } from "../ui.js";

export const title = "Knowledge base";

const SORTS = [["path", "Name"], ["title", "Title"], ["kind", "Type"], ["size", "Size"], ["chunks", "Passages"], ["status", "Status"], ["indexed_at", "Indexed"]];
const STATUS = {
  indexed: { label: "indexed", tone: "ok" },
  ocr_pending: { label: "waiting for OCR", tone: "warn" },
  indexing: { label: "indexing…", tone: "" },
  deleting: { label: "deleting…", tone: "" },
  failed: { label: "failed", tone: "bad" },
  skipped: { label: "skipped", tone: "warn" },
};
const PAGE_SIZES = [25, 50, 100, 200];

// Dates and counts are formatted here without Intl: in a fresh page the first Intl formatter
// (ui.js's formatDate and plural make them) costs 100 ms or more to set up, which was a third
// of the page's first render. English month names and a comma every three digits.
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const number = (n) => String(Math.trunc(Number(n) || 0)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
const count = (n, one, many) => `${number(n)} ${Number(n) === 1 ? one : many}`;
function indexedOn(iso) {
  const date = new Date(iso);
  if (!iso || Number.isNaN(date.getTime())) return "";
  const now = new Date();
  if (date.toDateString() === now.toDateString()) return `${String(date.getHours()).padStart(2, "0")}:${String(date.getMinutes()).padStart(2, "0")}`;
  return `${date.getDate()} ${MONTHS[date.getMonth()]}${date.getFullYear() === now.getFullYear() ? "" : ` ${date.getFullYear()}`}`;
}

const view = { q: "", folder: "", category: "", status: "", kind: "", sort: "path", order: "asc", offset: 0, limit: 50 };
const parts = {};
let ctx = null;
let request = 0;
let categories = [];
let events = null;
let refreshTimer = null;

// ---- chat scope ---------------------------------------------------------------------------
function chosen() {
  const scope = recall("chat.scope", null);
  return new Set(Array.isArray(scope?.paths) ? scope.paths.filter((p) => typeof p === "string") : []);
}

function choose(paths, on) {
  const set = chosen();
  for (const path of paths) if (on) set.add(path); else set.delete(path);
  remember("chat.scope", set.size ? { paths: [...set].sort() } : null);
  renderScope();
}

function renderScope() {
  const set = chosen();
  parts.scopeCount.textContent = set.size
    ? `${count(set.size, "file", "files")} chosen for the chat`
    : "Tick files to ask the chat about them only";
  parts.scopeClear.hidden = parts.scopeOpen.hidden = !set.size;
  parts.scope.classList.toggle("active", set.size > 0);
  for (const box of parts.list.querySelectorAll("input.kb-use")) box.checked = set.has(box.dataset.path);
  syncPageBox(set);
}

function syncPageBox(set = chosen()) {
  const boxes = [...parts.list.querySelectorAll("input.kb-use")];
  const ticked = boxes.filter((b) => set.has(b.dataset.path)).length;
  parts.pageBox.checked = boxes.length > 0 && ticked === boxes.length;
  parts.pageBox.indeterminate = ticked > 0 && ticked < boxes.length;
  parts.pageBox.disabled = boxes.length === 0;
}

// ---- mounting -----------------------------------------------------------------------------
export async function mount(root, context) {
  ctx = context;
  Object.assign(view, recall("kb.view", {}), { offset: 0 });
  if (!PAGE_SIZES.includes(view.limit)) view.limit = 50;

  parts.total = el("span", { class: "muted kb-total", role: "status", "aria-live": "polite" });
  parts.fileInput = el("input", { type: "file", multiple: true, class: "visually-hidden", id: "kb-file", tabindex: "-1" });
  parts.fileInput.addEventListener("change", () => { upload([...parts.fileInput.files]); parts.fileInput.value = ""; });
  parts.uploadCategory = el("input", { name: "upload-category", list: "kb-categories", placeholder: "none", autocomplete: "off", maxlength: "80" });
  parts.categoryList = el("datalist", { id: "kb-categories" });
  parts.uploads = el("ul", { class: "kb-uploads", "aria-label": "Uploads" });
  parts.dropzone = el("div", { id: "dropzone", class: "kb-drop" },
    el("p", {}, el("strong", {}, "Drop files here"), " or ",
      el("button", { type: "button", class: "secondary", on: { click: () => parts.fileInput.click() } }, "Choose files…")),
    el("label", { class: "kb-drop-category" }, "File uploads under ", parts.uploadCategory),
    parts.fileInput, parts.categoryList);
  for (const name of ["dragenter", "dragover"]) {
    parts.dropzone.addEventListener(name, (event) => { event.preventDefault(); parts.dropzone.classList.add("over"); });
  }
  parts.dropzone.addEventListener("dragleave", () => parts.dropzone.classList.remove("over"));
  parts.dropzone.addEventListener("drop", (event) => {
    event.preventDefault();
    parts.dropzone.classList.remove("over");
    const files = [...(event.dataTransfer?.files || [])];
    if (files.length) upload(files);
  });

  parts.scopeCount = el("span", { class: "kb-scope-count" });
  parts.scopeOpen = el("button", { type: "button", class: "secondary", on: { click: () => ctx.navigate("#chat") } }, "Ask in chat");
  parts.scopeClear = el("button", { type: "button", class: "ghost", on: { click: () => { remember("chat.scope", null); renderScope(); } } }, "Clear");
  parts.scope = el("div", { class: "kb-scope", role: "status", "aria-live": "polite" }, parts.scopeCount, parts.scopeOpen, parts.scopeClear);

  parts.q = el("input", { type: "search", name: "q", value: view.q, placeholder: "Search names and titles", "aria-label": "Search names and titles", autocomplete: "off", enterkeyhint: "search" });
  let typing = null;
  parts.q.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => { view.q = parts.q.value.trim(); view.offset = 0; load(); }, 200);
  });
  parts.sort = el("select", { name: "sort", "aria-label": "Sort by" }, ...SORTS.map(([value, label]) => el("option", { value }, label)));
  parts.sort.value = view.sort;
  parts.sort.addEventListener("change", () => setSort(parts.sort.value, view.order));
  parts.order = el("button", { type: "button", class: "secondary kb-order", on: { click: () => setSort(view.sort, view.order === "asc" ? "desc" : "asc") } });
  parts.statusSelect = el("select", { name: "status", "aria-label": "Status" }, el("option", { value: "" }, "any status"),
    ...Object.entries(STATUS).map(([value, s]) => el("option", { value }, s.label.replace("…", ""))));
  parts.statusSelect.value = view.status;
  parts.statusSelect.addEventListener("change", () => { view.status = parts.statusSelect.value; view.offset = 0; load(); });
  parts.kindSelect = el("select", { name: "kind", "aria-label": "Type" }, el("option", { value: "" }, "any type"));
  parts.kindSelect.addEventListener("change", () => { view.kind = parts.kindSelect.value; view.offset = 0; load(); });
  parts.filters = el("div", { class: "kb-active-filters chips" });

  parts.tree = el("nav", { class: "kb-tree", "aria-label": "Folders and categories" });
  parts.treeBox = el("details", { class: "kb-side" }, el("summary", {}, "Folders and categories"), parts.tree);
  if (!matchMedia("(max-width: 720px)").matches) parts.treeBox.open = true;

  parts.pageBox = el("input", { type: "checkbox", class: "kb-page-box", "aria-label": "Use every file on this page in chat" });
  parts.pageBox.addEventListener("change", () => {
    choose([...parts.list.querySelectorAll("input.kb-use")].map((b) => b.dataset.path), parts.pageBox.checked);
  });
  parts.head = el("div", { class: "kb-head", role: "presentation" }, el("span", { class: "kb-cell-use" }, parts.pageBox),
    ...[["path", "Name"], ["kind", "Type"], ["size", "Size"], ["chunks", "Passages"], ["status", "Status"], ["indexed_at", "Indexed"]].map(([key, label]) =>
      el("button", { type: "button", class: `kb-sort kb-col-${key}`, dataset: { sort: key }, on: { click: () => setSort(key, view.sort === key && view.order === "asc" ? "desc" : "asc") } }, label)),
    el("span", { class: "kb-col-actions muted" }, "Category"));
  parts.list = el("ul", { class: "kb-list", "aria-label": "Files" });
  parts.pager = el("nav", { class: "kb-pager", "aria-label": "Pages" });

  root.append(
    el("div", { class: "page-header" },
      el("h1", {}, "Knowledge base"), parts.total),
    parts.dropzone, parts.uploads, parts.scope,
    el("div", { class: "kb-layout" },
      parts.treeBox,
      el("div", { class: "kb-main" },
        el("form", { class: "kb-toolbar", role: "search", on: { submit: (e) => { e.preventDefault(); view.q = parts.q.value.trim(); view.offset = 0; load(); } } },
          parts.q,
          el("div", { class: "kb-toolbar-row" }, parts.sort, parts.order, parts.statusSelect, parts.kindSelect)),
        parts.filters, parts.head, parts.list, parts.pager)));
  parts.list.addEventListener("change", (event) => {
    const box = event.target;
    if (box instanceof HTMLInputElement && box.classList.contains("kb-use")) { choose([box.dataset.path], box.checked); }
  });
  renderScope();
  await Promise.all([load(), loadTree()]);
}

// #kb/<path> (the map's "In the knowledge base"): the list narrowed to that file's name, and
// the file open in the side panel.
export function show(route) {
  renderScope();
  watch();
  if (route) {
    const name = route.split("/").pop();
    view.q = parts.q.value = name;
    view.offset = 0;
    history.replaceState(null, "", "#kb");
    remember("section", "kb");
    load();
    openPassage({ path: route });
  } else if (parts.loadedOnce) load({ quiet: true });
  parts.loadedOnce = true;
}

export function hide() {
  if (events) { events.abort(); events = null; }
}

// ---- the list -----------------------------------------------------------------------------
function setSort(sort, order) {
  view.sort = sort;
  view.order = order;
  view.offset = 0;
  load();
}

function query() {
  const params = new URLSearchParams({ sort: view.sort, order: view.order, offset: String(view.offset), limit: String(view.limit) });
  for (const key of ["q", "folder", "category", "status", "kind"]) if (view[key]) params.set(key, view[key]);
  return params;
}

async function load({ quiet = false } = {}) {
  if (quiet && parts.list.querySelector(".kb-refile")) { refreshSoon(1500); return; } // not under the user's hands
  const mine = ++request;
  remember("kb.view", { ...view, offset: 0 });
  parts.sort.value = view.sort;
  parts.order.textContent = view.order === "asc" ? "↑ A–Z" : "↓ Z–A";
  parts.order.setAttribute("aria-label", view.order === "asc" ? "Ascending; switch to descending" : "Descending; switch to ascending");
  for (const button of parts.head.querySelectorAll(".kb-sort")) {
    const on = button.dataset.sort === view.sort;
    button.classList.toggle("on", on);
    button.dataset.order = on ? view.order : "";
    button.setAttribute("aria-pressed", String(on));
    button.setAttribute("aria-label", `Sort by ${button.textContent.toLowerCase()}${on ? (view.order === "asc" ? ", ascending now" : ", descending now") : ""}`);
  }
  if (!quiet) parts.list.setAttribute("aria-busy", "true");
  renderFilters();
  try {
    const body = await api(`/api/documents?${query()}`);
    if (mine !== request) return;
    // A re-file opened while this refresh was on its way: keep it, refresh later.
    if (quiet && parts.list.querySelector(".kb-refile")) { refreshSoon(1500); return; }
    if (body.total && body.offset >= body.total) { view.offset = Math.max(0, Math.floor((body.total - 1) / view.limit) * view.limit); return load(); }
    renderRows(body);
  } catch (error) {
    if (mine !== request) return;
    parts.list.replaceChildren(el("li", { class: "notice error", role: "alert" }, error.message, el("small", {}, error.hint)));
    parts.pager.replaceChildren();
  } finally {
    if (mine === request) parts.list.removeAttribute("aria-busy");
  }
}

function renderRows(body) {
  const set = chosen();
  const filtered = view.q || view.folder || view.category || view.status || view.kind;
  parts.total.textContent = filtered ? `${count(body.total, "file matches", "files match")}` : count(body.total, "file", "files");
  if (!body.items.length) {
    parts.list.replaceChildren(el("li", { class: "empty" }, filtered
      ? "No file matches. Try other words or fewer filters."
      : "No files yet. Drop documents above, or add them to the vault folder."));
  } else {
    parts.list.replaceChildren(...body.items.map((item) => row(item, set)));
  }
  syncPageBox(set);
  renderPager(body);
  if (!parts.rendered) { parts.rendered = true; performance.mark("kb-first-rows"); } // read by benchmarks.library_page
}

function row(item, set) {
  const slash = item.path.lastIndexOf("/");
  const name = item.path.slice(slash + 1);
  const folder = slash > 0 ? item.path.slice(0, slash) : "";
  const status = STATUS[item.status] || { label: item.status, tone: "" };
  const box = el("input", { type: "checkbox", class: "kb-use", checked: set.has(item.path), dataset: { path: item.path }, "aria-label": `Use ${item.path} in chat` });
  const opener = el("button", { type: "button", class: "kb-name", title: item.path, on: { click: () => openPassage({ path: item.path }) } }, name);
  const titleLine = item.title && item.title !== name.replace(/\.[^.]+$/, "") ? el("span", { class: "kb-title" }, item.title) : null;
  const notes = [];
  if (item.reason) notes.push(el("span", { class: `kb-reason ${status.tone}` }, item.reason));
  if (item.duplicate_of) notes.push(el("span", { class: "kb-reason" }, `same content as ${item.duplicate_of}`));
  const category = el("span", { class: "kb-category" }, item.category ? el("span", { class: "chip plain" }, el("span", { class: "chip-text" }, item.category)) : null);
  const actions = el("span", { class: "kb-actions" },
    el("button", { type: "button", class: "ghost small", "aria-label": `File ${item.path} under a category`, on: { click: () => refile(item, category, actions) } }, "Re-file"),
    item.deletable ? el("button", { type: "button", class: "ghost small danger-text", "aria-label": `Delete ${item.path}`, on: { click: () => remove(item) } }, "Delete") : null);
  return el("li", { class: `kb-row status-row-${item.status}`, dataset: { path: item.path } },
    el("span", { class: "kb-cell-use" }, box),
    el("span", { class: "kb-col-path" }, opener, titleLine, folder ? el("span", { class: "kb-folder muted" }, folder) : null, ...notes),
    el("span", { class: "kb-col-kind muted" }, item.kind || ""),
    el("span", { class: "kb-col-size muted" }, formatSize(item.size)),
    el("span", { class: "kb-col-chunks muted" },
      item.status === "failed" || item.status === "skipped" ? "" : [number(item.chunks), el("span", { class: "kb-unit" }, item.chunks === 1 ? " passage" : " passages")]),
    el("span", { class: "kb-col-status" }, el("span", { class: `badge ${status.tone} status-${item.status}`, title: item.reason || status.label }, status.label)),
    el("span", { class: "kb-col-indexed_at muted", title: item.indexed_at || null }, indexedOn(item.indexed_at)),
    el("span", { class: "kb-col-actions" }, category, actions));
}

function renderPager(body) {
  const first = body.total ? body.offset + 1 : 0;
  const last = body.offset + body.items.length;
  const pages = Math.max(1, Math.ceil(body.total / view.limit));
  const current = Math.floor(body.offset / view.limit) + 1;
  const go = (offset) => { view.offset = offset; load(); parts.head.scrollIntoView({ block: "nearest" }); };
  const size = el("select", { "aria-label": "Files per page" }, ...PAGE_SIZES.map((n) => el("option", { value: String(n) }, `${n} a page`)));
  size.value = String(view.limit);
  size.addEventListener("change", () => { view.limit = Number(size.value); view.offset = 0; load(); });
  parts.pager.replaceChildren(
    el("span", { class: "muted kb-range" }, body.total ? `${number(first)}–${number(last)} of ${number(body.total)}` : ""),
    el("span", { class: "kb-pager-buttons" },
      el("button", { type: "button", class: "secondary", disabled: body.offset === 0, "aria-label": "First page", on: { click: () => go(0) } }, "«"),
      el("button", { type: "button", class: "secondary", disabled: body.offset === 0, on: { click: () => go(Math.max(0, body.offset - view.limit)) } }, "Previous"),
      el("span", { class: "kb-page-of" }, `page ${number(current)} of ${number(pages)}`),
      el("button", { type: "button", class: "secondary", disabled: last >= body.total, on: { click: () => go(body.offset + view.limit) } }, "Next"),
      el("button", { type: "button", class: "secondary", disabled: last >= body.total, "aria-label": "Last page", on: { click: () => go((pages - 1) * view.limit) } }, "»")),
    size);
}

function renderFilters() {
  const chips = [];
  const chip = (label, clear) => el("span", { class: "chip" }, el("span", { class: "chip-text" }, label),
    el("button", { type: "button", "aria-label": `Remove the filter ${label}`, on: { click: () => { clear(); view.offset = 0; load(); } } }, "✕"));
  if (view.folder) chips.push(chip(`folder: ${view.folder}`, () => { view.folder = ""; }));
  if (view.category) chips.push(chip(`category: ${view.category}`, () => { view.category = ""; }));
  if (view.status) chips.push(chip(`status: ${(STATUS[view.status] || {}).label || view.status}`, () => { view.status = ""; parts.statusSelect.value = ""; }));
  if (view.kind) chips.push(chip(`type: ${view.kind}`, () => { view.kind = ""; parts.kindSelect.value = ""; }));
  parts.filters.replaceChildren(...chips);
  for (const button of parts.tree.querySelectorAll("button[data-filter]")) {
    const [key, value] = [button.dataset.filter, button.dataset.value];
    const on = key === "all" ? !view.folder && !view.category && !view.status : view[key] === value;
    button.classList.toggle("on", on);
    if (on) button.setAttribute("aria-current", "true"); else button.removeAttribute("aria-current");
  }
}

// ---- the tree -------------------------------------------------------------------------------
async function loadTree() {
  try {
    const tree = await api("/api/documents/tree");
    renderTree(tree);
  } catch (error) {
    parts.tree.replaceChildren(el("p", { class: "notice error" }, error.message, el("small", {}, error.hint)));
  }
}

function filterButton(key, value, label, count) {
  return el("button", { type: "button", class: "kb-filter", dataset: { filter: key, value }, on: { click: () => {
    if (key === "all") { view.folder = ""; view.category = ""; view.status = ""; parts.statusSelect.value = ""; }
    else view[key] = view[key] === value ? "" : value;
    if (key === "status") parts.statusSelect.value = view.status;
    view.offset = 0;
    load();
  } } }, el("span", { class: "kb-filter-label" }, label), el("span", { class: "kb-count" }, number(count)));
}

function renderTree(tree) {
  categories = tree.categories.map((c) => c.name);
  parts.categoryList.replaceChildren(...categories.map((name) => el("option", { value: name })));
  const kinds = Object.keys(tree.kinds);
  const keep = view.kind;
  parts.kindSelect.replaceChildren(el("option", { value: "" }, "any type"), ...kinds.map((k) => el("option", { value: k }, k === "note" ? "note (Markdown)" : k)));
  parts.kindSelect.value = kinds.includes(keep) ? keep : "";

  // Folders: nested by their paths; a folder's children are drawn when it is opened.
  const children = new Map();
  for (const folder of tree.folders) {
    const cut = folder.path.lastIndexOf("/");
    const parent = cut < 0 ? "" : folder.path.slice(0, cut);
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(folder);
  }
  const branch = (parent) => el("ul", { class: "kb-folders" }, ...(children.get(parent) || []).map((folder) => {
    const label = folder.path.slice(folder.path.lastIndexOf("/") + 1);
    const button = filterButton("folder", folder.path, label, folder.files);
    if (!children.has(folder.path)) return el("li", {}, el("div", { class: "kb-tree-row" }, el("span", { class: "kb-twist-space" }), button));
    const item = el("li", {});
    const twist = el("button", { type: "button", class: "kb-twist", "aria-expanded": "false", "aria-label": `Show the folders in ${label}` });
    const setOpen = (open) => {
      twist.setAttribute("aria-expanded", String(open));
      twist.textContent = open ? "▾" : "▸";
      let sub = item.querySelector(":scope > ul");
      if (open && !sub) { sub = branch(folder.path); item.append(sub); }
      if (sub) sub.hidden = !open;
    };
    twist.addEventListener("click", () => setOpen(twist.getAttribute("aria-expanded") !== "true"));
    item.append(el("div", { class: "kb-tree-row" }, twist, button));
    setOpen(view.folder.startsWith(folder.path + "/"));
    return item;
  }));
  const statuses = Object.entries(tree.statuses);
  parts.tree.replaceChildren(...[ // the parts not shown are null: left out (replaceChildren would write "null")
    el("ul", { class: "kb-folders kb-root" }, el("li", {}, filterButton("all", "", "All files", tree.total))),
    tree.folders.length ? el("h2", { class: "kb-tree-head" }, "Folders") : null,
    tree.folders.length ? branch("") : null,
    el("h2", { class: "kb-tree-head" }, "Categories"),
    categories.length
      ? el("ul", { class: "kb-folders" }, ...tree.categories.map((c) => el("li", {}, filterButton("category", c.name, c.name, c.documents))))
      : el("p", { class: "muted small" }, "None yet: re-file a file, or choose one for uploads."),
    statuses.length > 1 ? el("h2", { class: "kb-tree-head" }, "Status") : null,
    statuses.length > 1 ? el("ul", { class: "kb-folders" }, ...statuses.map(([s, n]) => el("li", {}, filterButton("status", s, (STATUS[s] || {}).label?.replace("…", "") || s, n)))) : null,
  ].filter(Boolean));
  renderFilters();
}

// ---- changing files ---------------------------------------------------------------------------
function refile(item, cell, actions) {
  const input = el("input", { value: item.category || "", list: "kb-categories", "aria-label": `Category for ${item.path}`, maxlength: "80", autocomplete: "off" });
  const restore = () => { form.replaceWith(cell); actions.hidden = false; };
  const form = el("form", { class: "kb-refile", on: { submit: async (event) => {
    event.preventDefault();
    const name = input.value.trim();
    try {
      const body = await api(`${documentUrl(item.path)}/category`, { method: "PUT", json: { category: name || null } });
      toast(body.category ? `${item.path} is filed under ${body.category}.` : `${item.path} has no category now.`);
      item.category = body.category;
      cell.replaceChildren(...(body.category ? [el("span", { class: "chip plain" }, el("span", { class: "chip-text" }, body.category))] : []));
      restore();
      refreshSoon(0);
    } catch (error) {
      toast(`${error.message}${error.hint ? ` — ${error.hint}` : ""}`, { kind: "error" });
      restore();
    }
  } } },
  input,
  el("button", { type: "submit", class: "small" }, "Save"),
  el("button", { type: "button", class: "ghost small", on: { click: restore } }, "Cancel"));
  form.addEventListener("keydown", (event) => { if (event.key === "Escape") { event.stopPropagation(); restore(); } });
  cell.replaceWith(form);
  actions.hidden = true;
  input.focus();
  input.select();
}

async function remove(item) {
  if (!window.confirm(`Delete ${item.path} and its passages? The file is removed from the upload folder.`)) return;
  try {
    await api(documentUrl(item.path), { method: "DELETE" });
    choose([item.path], false);
    toast(`Deleting ${item.path}…`);
    refreshSoon(0);
  } catch (error) {
    toast(`${error.message}${error.hint ? ` — ${error.hint}` : ""}`, { kind: "error" });
  }
}

// Uploads go one file at a time, each with its own progress; a name already there is asked
// about (replace, keep both, or skip), a file whose bytes are there already is said and not
// stored again.
async function upload(files) {
  const category = parts.uploadCategory.value.trim();
  for (const file of files) {
    const line = el("li", { class: "kb-upload" });
    const bar = el("progress", { max: "100", value: "0", "aria-label": `Uploading ${file.name}` });
    const said = el("span", { class: "kb-upload-state muted" }, "waiting…");
    line.append(el("span", { class: "kb-upload-name" }, file.name), bar, said);
    parts.uploads.prepend(line);
    await send(file, category, null, line, bar, said);
  }
}

function send(file, category, onConflict, line, bar, said) {
  return new Promise((resolve) => {
    const form = new FormData();
    if (category) form.append("category", category);
    form.append("file", file, file.name);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `/api/documents${onConflict ? `?on_conflict=${onConflict}` : ""}`);
    xhr.withCredentials = true;
    xhr.responseType = "json";
    said.textContent = "uploading…";
    bar.hidden = false;
    xhr.upload.addEventListener("progress", (event) => { if (event.lengthComputable) bar.value = Math.round((100 * event.loaded) / event.total); });
    xhr.addEventListener("error", () => { finish(line, bar, said, "error", "the upload did not reach the server"); resolve(); });
    xhr.addEventListener("load", async () => {
      const body = xhr.response || {};
      if (xhr.status === 201) {
        bar.value = 100;
        const stored = body.uploaded?.[0]?.path || file.name;
        finish(line, bar, said, "ok", `stored as ${stored}; indexing…`);
        line.dataset.path = stored;
        refreshSoon(300);
        catchUp(line, stored);
      } else if (xhr.status === 409 && body.conflict) {
        resolve(await ask(file, category, body.conflict, line, bar, said));
        return;
      } else if (xhr.status === 409 && body.duplicate_of) {
        finish(line, bar, said, "warn", `not added: the same content is already here as ${body.duplicate_of}`);
      } else {
        const error = body.error || {};
        finish(line, bar, said, "error", [error.message || `upload failed (${xhr.status})`, error.hint].filter(Boolean).join(" — "));
      }
      resolve();
    });
    xhr.send(form);
  });
}

function ask(file, category, conflict, line, bar, said) {
  return new Promise((resolve) => {
    const choice = (label, value, cls) => el("button", { type: "button", class: `${cls} small`, on: { click: async () => {
      question.remove();
      if (value) await send(file, category, value, line, bar, said);
      else finish(line, bar, said, "", "skipped: the file already there is kept");
      resolve();
    } } }, label);
    const question = el("span", { class: "kb-question", role: "group", "aria-label": `${conflict.name} is already in the knowledge base` },
      el("span", {}, `${conflict.existing} is already in the knowledge base.`),
      choice("Replace it", "replace", ""), choice("Keep both", "keep_both", "secondary"), choice("Skip", null, "ghost"));
    said.textContent = "";
    bar.hidden = true;
    line.append(question);
    question.querySelector("button").focus();
  });
}

// A small file can be indexed before the browser has read the upload's answer, so its
// "indexed" event went by while the line did not yet know its path: ask for the file's state
// once. The answer is at least as new as the upload (the server queued the job before it
// answered), so a state left from an earlier file of the same name cannot show.
async function catchUp(line, path) {
  try {
    const body = await api(`/api/documents?q=${encodeURIComponent(path)}`);
    const row = (body.items || []).find((item) => item.path === path);
    if (row && ["indexed", "failed", "skipped"].includes(row.status)) showJob(line, { ...row, error: row.reason });
  } catch { /* the event stream still reports it */ }
}

function showJob(line, job) {
  const said = line.querySelector(".kb-upload-state");
  const last = job.steps?.[job.steps.length - 1];
  if (job.status === "indexed") { said.className = "kb-upload-state tone-ok"; said.textContent = `${job.path}: indexed`; line.querySelector("progress").hidden = true; }
  else if (job.status === "failed" || job.status === "skipped") {
    said.className = `kb-upload-state tone-${job.status === "failed" ? "error" : "warn"}`;
    said.textContent = `${job.path}: ${job.status} — ${job.error || ""}`;
    line.querySelector("progress").hidden = true;
  }
  else if (last) said.textContent = `${job.path}: ${[last.step, last.detail].filter(Boolean).join(" ")}`;
}

function finish(line, bar, said, tone, text) {
  bar.hidden = tone !== "ok";
  said.className = `kb-upload-state ${tone ? `tone-${tone}` : "muted"}`;
  said.textContent = text;
  if (tone === "error") said.setAttribute("role", "alert");
}

// ---- live: ingestion events ---------------------------------------------------------------------
function refreshSoon(delay = 400) {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => { load({ quiet: true }); loadTree(); }, delay);
}

async function watch() {
  if (events) return;
  const controller = new AbortController();
  events = controller;
  try {
    const response = await fetch("/api/ingest/events", { credentials: "same-origin", signal: controller.signal });
    if (!response.ok) return;
    await readNdjson(response, (event) => {
      if (event.type !== "job") return;
      const job = event.data;
      const settled = ["indexed", "failed", "skipped", "deleted"].includes(job.status);
      for (const line of parts.uploads.querySelectorAll("li.kb-upload")) {
        if (line.dataset.path === job.path) showJob(line, job);
      }
      const shown = [...parts.list.querySelectorAll("li.kb-row")].find((r) => r.dataset.path === job.path);
      if (settled) refreshSoon();
      else if (shown) refreshSoon(1000);
    });
  } catch (error) {
    if (error.name === "AbortError") return;
  } finally {
    if (events === controller) {
      events = null;
      if (!controller.signal.aborted) setTimeout(() => { if (!events && !parts.list.closest("[hidden]")) watch(); }, 3000);
    }
  }
}
