// The map: every note of the vault as a point (GET /api/map), placed so that notes close in
// meaning sit close together, coloured by cluster, folder, tag or age, with each cluster's name
// at its centre while zoomed out. Hover a point for its title and opening words; click it for
// its note beside the map (a bottom sheet on a phone): its cluster, nearest notes, links,
// related notes and missing links. The search box lights up where a query's answers are (the
// rest dims). The missing-link list names pairs of notes close in meaning that never link, with
// the passages that make them close, buttons to open both and one to copy the [[link]].

import { ApiError, api, documentUrl, el, openPassage, plainText, recall, remember, toast } from "../ui.js";
import { MapView } from "../mapview.js";

export const title = "Map";

const CATEGORICAL = ["#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#ff9da7",
  "#9c755f", "#1f77b4", "#bcbd22", "#17becf", "#d62728", "#9467bd", "#2ca02c", "#e377c2", "#8c564b", "#ff7f0e"];
const GREY = "#9aa0a6";
const AGES = [[7, "this week", "#e8590c"], [31, "this month", "#f59f00"], [92, "last 3 months", "#94d82d"],
  [365, "this year", "#20c997"], [730, "last year", "#339af0"], [Infinity, "older", "#845ef7"]];
const TOP_GROUPS = 11; // folders or tags coloured one by one; the rest share "other"
const LEGEND_ROWS = 12;
const MISSING_SHOWN = 12;
const MISSING_MORE = 24;
const MISSING_ASKED = 100;
const HITS = 50;
const REFRESH_AFTER_MS = 30_000;
const MATCH = 0.2;
const LINE_SIMILARITY = 0.3; // neighbours less alike than this get no line on the map

const parts = {};
let ctx = null;
let view = null;
let data = null; // the map's JSON
let byPath = new Map();
let clusters = new Map();
let selected = -1;
let hits = null;
let loading = 0;
let tipTimer = null;
let loadedAt = 0;
const snippets = new Map();

function colourAt(i) {
  return i < CATEGORICAL.length ? CATEGORICAL[i] : `hsl(${Math.round((i * 137.508) % 360)} 55% 52%)`;
}

// node's children replaced by these (null, undefined and false left out, as el() does).
const fill = (node, ...children) => node.replaceChildren(...children.filter((c) => c !== null && c !== undefined && c !== false));
const number = (n) => String(Math.trunc(Number(n) || 0)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
const count = (n, one, many) => `${number(n)} ${Number(n) === 1 ? one : many}`;
const stem = (path) => String(path).split("/").pop().replace(/\.[^.]+$/, "");
const titleOf = (i) => data.notes[i].title || stem(data.notes[i].path);
const clusterLabel = (id) => clusters.get(id)?.label || (id === null || id === undefined || id < 0 ? "no cluster" : `cluster ${id}`);

// ---- mounting -----------------------------------------------------------------------------------
export async function mount(root, context) {
  ctx = context;
  parts.summary = el("p", { class: "map-summary muted", role: "status", "aria-live": "polite" });
  parts.q = el("input", { type: "search", name: "q", placeholder: "Where do the answers live?", "aria-label": "Search the map", autocomplete: "off", enterkeyhint: "search" });
  parts.clear = el("button", { type: "button", class: "ghost", hidden: true, on: { click: clearSearch } }, "Clear");
  parts.colour = el("select", { name: "colour", "aria-label": "Colour by" },
    ...[["cluster", "cluster"], ["folder", "folder"], ["tag", "tag"], ["age", "age"]].map(([value, label]) => el("option", { value }, label)));
  parts.colour.value = recall("map.colour", "cluster");
  parts.colour.addEventListener("change", () => { remember("map.colour", parts.colour.value); paint(); });
  const zoom = (factor) => () => view && view.zoomAt(factor);
  parts.toolbar = el("form", { class: "map-toolbar", role: "search", on: { submit: (event) => { event.preventDefault(); search(); } } },
    el("div", { class: "map-query" }, parts.q, el("button", { type: "submit" }, "Search"), parts.clear),
    el("div", { class: "map-controls" },
      el("label", { class: "map-colour" }, "Colour by ", parts.colour),
      el("div", { class: "map-zoom", role: "group", "aria-label": "Zoom" },
        el("button", { type: "button", class: "secondary", "aria-label": "Zoom out", title: "Zoom out (−)", on: { click: zoom(1 / 1.6) } }, "−"),
        el("button", { type: "button", class: "secondary", "aria-label": "Zoom in", title: "Zoom in (+)", on: { click: zoom(1.6) } }, "+"),
        el("button", { type: "button", class: "secondary", title: "Show every note (0)", on: { click: () => view && view.fit() } }, "Fit"))));
  parts.searchMeta = el("div", { class: "map-search-meta", role: "status", "aria-live": "polite" });
  parts.canvas = el("canvas", { class: "map-canvas", tabindex: "0", role: "img",
    "aria-label": "Map of the vault's notes: drag or the arrow keys to pan, wheel, pinch or + and − to zoom, click a point (or Enter for the one in the middle) to open its note" });
  parts.tip = el("div", { class: "map-tip", role: "tooltip", hidden: true });
  parts.state = el("div", { class: "map-state", hidden: true });
  parts.legend = el("ul", { class: "map-legend", "aria-label": "Colours" });
  parts.stage = el("div", { class: "map-stage" }, parts.canvas, parts.tip, parts.state);
  parts.note = el("section", { class: "map-note card", hidden: true, "aria-label": "The chosen note", tabindex: "-1" });
  parts.missing = el("ol", { class: "map-missing-list" });
  parts.missingMeta = el("p", { class: "muted small" });
  parts.side = el("aside", { class: "map-side" }, parts.note,
    el("section", { class: "map-missing", "aria-labelledby": "map-missing-title" },
      el("h2", { id: "map-missing-title" }, "Missing links"),
      parts.missingMeta, parts.missing));
  root.append(
    el("div", { class: "page-header" }, el("h1", {}, "Map"), parts.summary),
    parts.toolbar, parts.searchMeta,
    el("div", { class: "map-layout" }, el("div", { class: "map-main" }, parts.stage, parts.legend), parts.side));
  view = new MapView(parts.canvas, { onHover: hover, onSelect: (i) => select(i, { centre: false }) });
  parts.canvas.mapView = view; // for the tests and the benchmark
  await load(false);
}

export function show(route) {
  if (view) view.resize();
  if (route && data && parts.q.value !== route) { parts.q.value = route; search(); }
  if (data && Date.now() - loadedAt > REFRESH_AFTER_MS) refresh();
}

// Back on the page after a while: the map again, drawn anew only if the index changed it (the
// server answers from its kept copy, or 304, while nothing changed).
async function refresh() {
  const mine = loading;
  loadedAt = Date.now();
  try {
    const body = await api("/api/map?limit=0");
    if (mine !== loading || !data) return;
    if (body.updated_at !== data.updated_at || body.notes.length !== data.notes.length) {
      loading++;
      take(body);
      if (body.notes.length) loadMissing(loading);
    }
  } catch { /* the map shown stays; the next visit tries again */ }
}

// ---- the map's data ---------------------------------------------------------------------------
async function load(rebuild) {
  const mine = ++loading;
  setState("loading");
  try {
    // The points first (limit=0: no missing links, the quickest answer), the list after them.
    const body = await api(`/api/map?limit=0${rebuild ? "&rebuild=true" : ""}`);
    if (mine !== loading) return;
    loadedAt = Date.now();
    performance.mark("map-data");
    take(body);
    if (body.notes && body.notes.length) loadMissing(mine);
  } catch (error) {
    if (mine !== loading) return;
    data = null;
    view.setPoints(new Float32Array(0), new Float32Array(0), []);
    parts.summary.textContent = "";
    fill(parts.legend);
    fill(parts.missing);
    parts.missingMeta.textContent = "The missing links come with the map.";
    setState("error", error);
  }
}

async function loadMissing(mine) {
  parts.missingMeta.textContent = "Finding the missing links…";
  try {
    const { missing_links: found } = await api(`/api/map/missing?limit=${MISSING_ASKED}`);
    if (mine !== loading) return;
    data.missing_links = found;
    renderMissing();
  } catch (error) {
    if (mine !== loading) return;
    fill(parts.missingMeta, el("span", { class: "notice error" }, error.message, error.hint ? el("small", {}, error.hint) : null));
  }
}

function take(body) {
  data = body;
  const notes = body.notes || [];
  byPath = new Map(notes.map((note, i) => [note.path, i]));
  clusters = new Map((body.clusters || []).map((c) => [c.id, c]));
  const xs = new Float32Array(notes.length), ys = new Float32Array(notes.length);
  notes.forEach((note, i) => { xs[i] = note.x; ys[i] = note.y; });
  view.setPoints(xs, ys, notes.map((note) => note.title || stem(note.path)));
  view.paths = notes.map((note) => note.path);
  view.setLabels((body.clusters || []).map((c) => ({ x: c.x, y: c.y, text: shortLabel(c.label), weight: c.size })));
  selected = -1;
  hits = null;
  parts.note.hidden = true;
  paint();
  summarise();
  fill(parts.missing);
  if (!notes.length) { setState("empty"); parts.missingMeta.textContent = ""; } else setState(null);
  if (parts.q.value.trim()) search();
}

// Text without its Markdown heading marks ("# Title" → "Title").
const unheaded = (text) => String(text).replace(/^\s{0,3}#{1,6}\s+/gm, "");

function shortLabel(label) {
  const text = String(label || "");
  return text.length > 34 ? `${text.slice(0, 33)}…` : text;
}

function summarise() {
  const n = data.notes.length;
  const space = data.space === "deep" ? "deep vectors"
    : data.space === "static+deep" ? `deep vectors for ${Math.round((data.deep_share || 0) * 100)}% of notes, static for the rest`
      : "static vectors";
  const said = [count(n, "note", "notes"), count((data.clusters || []).length, "cluster", "clusters"), `placed by meaning (${space})`];
  const rebuild = el("button", { type: "button", class: "ghost small map-rebuild", title: "Compute the map afresh", on: { click: () => load(true) } }, "Rebuild");
  fill(parts.summary, said.join(" · "), " ", rebuild,
    ...(n > 0 && n < 5 ? [el("span", { class: "map-small" }, `With ${count(n, "note", "notes")} there is little to see yet: the map fills in as the vault grows.`)] : []),
    ...(data.notices || []).map((notice) => el("span", { class: "map-notice" }, notice)));
}

function setState(kind, error = null) {
  const box = parts.state;
  if (!kind) { box.hidden = true; fill(box); return; }
  box.hidden = false;
  if (kind === "loading") fill(box, el("p", { class: "muted" }, "Placing your notes…"));
  else if (kind === "empty") {
    fill(box, el("div", { class: "notice" }, el("strong", {}, "No notes to map yet."),
      el("small", {}, "Add notes to the vault (or files in the knowledge base) and index them; the map draws every note the index holds.")));
  } else {
    const unavailable = error instanceof ApiError && (error.status === 503 || error.code === "map_unavailable");
    fill(box, el("div", { class: "notice error", role: "alert" },
      el("strong", {}, unavailable ? "The map is not available." : "The map could not be drawn."),
      el("p", {}, String(error?.message || error)),
      error?.hint ? el("small", {}, error.hint) : null,
      el("button", { type: "button", class: "secondary", on: { click: () => load(false) } }, "Try again")));
  }
}

// ---- colours ------------------------------------------------------------------------------------
function paint() {
  if (!data) return;
  const notes = data.notes;
  const by = parts.colour.value;
  const colourOf = new Uint16Array(notes.length);
  let palette, legend;
  if (by === "cluster") {
    const ids = [...clusters.values()].sort((a, b) => b.size - a.size).map((c) => c.id);
    const slot = new Map(ids.map((id, k) => [id, k]));
    palette = [...ids.map((_, k) => colourAt(k)), GREY];
    notes.forEach((note, i) => { colourOf[i] = slot.has(note.cluster) ? slot.get(note.cluster) : ids.length; });
    legend = ids.map((id, k) => [palette[k], clusters.get(id).label, clusters.get(id).size]);
  } else if (by === "age") {
    const now = Date.now() / 1000;
    palette = [...AGES.map((a) => a[2]), GREY];
    const sizes = new Array(palette.length).fill(0);
    notes.forEach((note, i) => {
      const days = note.modified ? (now - note.modified) / 86400 : null;
      const k = days === null ? AGES.length : AGES.findIndex((a) => days < a[0]);
      colourOf[i] = k;
      sizes[k]++;
    });
    legend = [...AGES.map((a, k) => [a[2], a[1], sizes[k]]), [GREY, "no date", sizes[AGES.length]]];
  } else {
    const keysOf = by === "folder" ? (note) => [String(note.folder || "").split("/")[0] || "(top level)"] : (note) => note.tags || [];
    const tally = new Map();
    for (const note of notes) for (const key of keysOf(note)) tally.set(key, (tally.get(key) || 0) + 1);
    const top = [...tally.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP_GROUPS).map((e) => e[0]);
    const slot = new Map(top.map((key, k) => [key, k]));
    palette = [...top.map((_, k) => colourAt(k)), "#6c757d", GREY];
    const sizes = new Array(palette.length).fill(0);
    notes.forEach((note, i) => {
      const keys = keysOf(note);
      let k = keys.length ? top.length : top.length + 1;
      for (const key of keys) if (slot.has(key) && slot.get(key) < k) k = slot.get(key);
      colourOf[i] = k;
      sizes[k]++;
    });
    legend = [...top.map((key, k) => [palette[k], key, sizes[k]]),
      [palette[top.length], by === "folder" ? "other folders" : "other tags", sizes[top.length]],
      [GREY, by === "folder" ? "" : "no tag", sizes[top.length + 1]]];
  }
  view.setColours(colourOf, palette);
  const rows = legend.filter((row) => row[2] > 0 && row[1]);
  fill(parts.legend, ...rows.slice(0, LEGEND_ROWS).map(([colour, label, size]) => {
    const swatch = el("span", { class: "map-swatch", "aria-hidden": "true" });
    swatch.style.background = colour;
    return el("li", { title: `${label}: ${count(size, "note", "notes")}` }, swatch, el("span", { class: "map-legend-label" }, label), el("span", { class: "muted" }, number(size)));
  }), ...(rows.length > LEGEND_ROWS ? [el("li", { class: "muted" }, `and ${rows.length - LEGEND_ROWS} more`)] : []));
}

// ---- hover: the title and the opening words -------------------------------------------------------
function hover(i, at) {
  clearTimeout(tipTimer);
  const tip = parts.tip;
  if (i < 0 || !data) { tip.hidden = true; parts.canvas.classList.remove("pointing"); return; }
  parts.canvas.classList.add("pointing");
  const note = data.notes[i];
  const snippet = el("p", { class: "map-tip-snippet" }, snippets.get(note.path) ?? "");
  fill(tip, el("strong", { class: "map-tip-title" }, titleOf(i)),
    el("span", { class: "map-tip-meta" }, [clusterLabel(note.cluster), note.folder].filter(Boolean).join(" · ")), snippet);
  tip.dataset.path = note.path;
  tip.hidden = false;
  const box = parts.stage.getBoundingClientRect();
  const w = tip.offsetWidth, h = tip.offsetHeight;
  const x = at.x + 14 + w > box.width ? Math.max(4, at.x - 14 - w) : at.x + 14;
  const y = at.y + 14 + h > box.height ? Math.max(4, at.y - 14 - h) : at.y + 14;
  tip.style.transform = `translate(${Math.round(x)}px, ${Math.round(y)}px)`;
  if (!snippets.has(note.path)) tipTimer = setTimeout(() => loadSnippet(note.path, snippet), 150);
}

async function loadSnippet(path, target) {
  try {
    const { chunks } = await api(`${documentUrl(path)}/chunks`);
    const text = plainText(unheaded((chunks[0] && chunks[0].text) || ""));
    snippets.set(path, text.length > 200 ? `${text.slice(0, 199)}…` : text);
  } catch {
    snippets.set(path, "");
  }
  if (target.isConnected && parts.tip.dataset.path === path) target.textContent = snippets.get(path);
}

// ---- a chosen note -----------------------------------------------------------------------------
function select(i, { centre = true } = {}) {
  selected = i;
  parts.tip.hidden = true;
  if (i < 0) { parts.note.hidden = true; view.setFocus(-1); return; }
  if (centre) view.centreOn(i, 6 * (view.home || 1));
  view.setFocus(i);
  renderNote(i);
}

function selectPath(path, options) {
  const i = byPath.get(path);
  if (i === undefined) { openPassage({ path }); return; }
  select(i, options);
}

function noteButton(path, label, extra = null) {
  return el("button", { type: "button", class: "map-link", title: path, on: { click: () => selectPath(path) } }, label || stem(path), extra);
}

async function renderNote(i) {
  const note = data.notes[i];
  const path = note.path;
  const cluster = clusters.get(note.cluster);
  const swatch = el("span", { class: "map-swatch", "aria-hidden": "true" });
  swatch.style.background = view.palette[view.colourOf[i]] || GREY;
  const neighbours = el("div", { class: "map-section" }, el("p", { class: "muted small" }, "Loading…"));
  const links = el("div", { class: "map-section" }, el("p", { class: "muted small" }, "Loading…"));
  const related = el("div", { class: "map-section" }, el("p", { class: "muted small" }, "Loading…"));
  const modified = note.modified ? new Date(note.modified * 1000).toISOString().slice(0, 10) : null;
  fill(parts.note,
    el("div", { class: "map-note-head" },
      el("div", {}, el("h2", {}, titleOf(i)), el("p", { class: "muted small map-path" }, path)),
      el("button", { type: "button", class: "icon", "aria-label": "Close the note", on: { click: () => select(-1) } }, "✕")),
    el("p", { class: "map-note-facts" }, swatch, el("span", {}, cluster ? cluster.label : clusterLabel(note.cluster)),
      note.role ? el("span", { class: `badge map-role-${note.role}`, title: roleMeaning(note.role) }, note.role) : null,
      el("span", { class: "muted small" }, [count(note.links || 0, "link", "links"), modified].filter(Boolean).join(" · "))),
    (note.tags || []).length ? el("p", { class: "chips" }, ...note.tags.slice(0, 8).map((tag) => el("span", { class: "chip plain" }, `#${tag}`))) : null,
    el("div", { class: "map-note-actions" },
      el("button", { type: "button", on: { click: () => openPassage({ path }) } }, "Open note"),
      el("button", { type: "button", class: "secondary", on: { click: () => ctx.navigate(`#kb/${path}`) } }, "In the knowledge base")),
    el("h3", {}, "Closest in meaning"), neighbours,
    el("h3", {}, "Links"), links,
    el("h3", {}, "Related"), related);
  parts.note.hidden = false;
  if (matchMedia("(max-width: 720px)").matches) parts.note.scrollTop = 0;
  const q = encodeURIComponent(path);
  const settle = async (target, request, render) => {
    try {
      const body = await request;
      if (selected === i) fill(target, ...render(body));
    } catch (error) {
      if (selected === i) fill(target, el("p", { class: "notice error small" }, error.message, error.hint ? el("small", {}, error.hint) : null));
    }
  };
  settle(neighbours, api(`/api/map/note?path=${q}&k=10`), (body) => {
    const lines = (body.neighbours || []).filter((n) => n.similarity >= LINE_SIMILARITY && n.close !== false).map((n) => byPath.get(n.path))
      .filter((j) => j !== undefined).map((j) => [i, j, "neighbour"]);
    for (const link of body.missing_links || []) {
      const other = byPath.get(link.source === path ? link.target : link.source);
      if (other !== undefined) lines.push([i, other, "missing"]);
    }
    if (selected === i) view.setFocus(i, lines);
    // The nearest on the map are not always alike: `close` is false for those that are only
    // the nearest (the same line the Related list draws), and they are shown as such.
    const near = body.neighbours || [];
    const lonely = near.length > 0 && near.every((n) => n.close === false);
    const list = near.map((n) => n.close === false
      ? el("li", { class: "map-weak" }, noteButton(n.path, n.title), lonely ? null : el("span", { class: "badge" }, "not close"))
      : el("li", {}, noteButton(n.path, n.title),
        el("span", { class: "muted small" }, ` ${Math.max(0, Math.round(n.similarity * 100))}% alike`),
        el("span", { class: `badge ${n.linked ? "ok" : "warn"}` }, n.linked ? "linked" : "not linked")));
    const missing = (body.missing_links || []).slice(0, 5).map((link) => missingItem(link, true));
    return [lonely ? el("p", { class: "muted small map-nothing-close" }, "No note is close in meaning. The nearest on the map:") : null,
      list.length ? el("ol", { class: "map-list" }, ...list) : el("p", { class: "muted small" }, "No close notes."),
      missing.length ? el("h4", {}, "Missing links") : null, missing.length ? el("ol", { class: "map-missing-list" }, ...missing) : null];
  });
  settle(links, api(`/api/links?path=${q}`), (body) => {
    const out = (body.outgoing || []).filter((l) => l.path).map((l) => el("li", {}, "→ ", noteButton(l.path, l.alias || stem(l.path))));
    const back = (body.backlinks || []).map((l) => el("li", {}, "← ", noteButton(l.path, stem(l.path))));
    const unresolved = body.unresolved ? el("p", { class: "muted small" }, `${count(body.unresolved, "link points", "links point")} at no note`) : null;
    return out.length || back.length ? [el("ul", { class: "map-list" }, ...out.slice(0, 20), ...back.slice(0, 20)), unresolved]
      : [el("p", { class: "muted small" }, "No links in or out."), unresolved];
  });
  settle(related, api(`/api/related?path=${q}&k=8`), (body) => {
    // Every note has nearest notes; `close` says which are really related (linked, or close in
    // meaning), and `nothing_close` that none is: those are shown for what they are.
    const lonely = Boolean(body.nothing_close) && (body.results || []).length > 0;
    const list = (body.results || []).map((r) => el("li", { class: r.close === false ? "map-weak" : null },
      noteButton(r.path, r.title),
      r.linked ? el("span", { class: "badge ok" }, "linked") : null,
      r.close === false && !lonely ? el("span", { class: "badge" }, "not close") : null));
    return [
      lonely ? el("p", { class: "muted small map-nothing-close" }, "Nothing closely related: no links, and no note close in meaning. The nearest:") : null,
      list.length ? el("ol", { class: "map-list" }, ...list) : el("p", { class: "muted small" }, "Nothing related found."),
    ];
  });
}

function roleMeaning(role) {
  return { core: "at the heart of its cluster", member: "inside its cluster", bridge: "between clusters: its nearest notes belong to several",
    island: "few links and few notes close to it" }[role] || role;
}

// ---- missing links ------------------------------------------------------------------------------
function renderMissing(shown = MISSING_SHOWN) {
  const all = data.missing_links || [];
  parts.missingMeta.textContent = all.length
    ? `Pairs of notes close in meaning that never link to each other, closest first: ${count(all.length, "pair", "pairs")}. A passage opens its note.`
    : "No missing links: every pair of notes this close in meaning already links.";
  const more = all.length > shown
    ? el("li", {}, el("button", { type: "button", class: "secondary map-more", on: { click: () => renderMissing(shown + MISSING_MORE) } }, `Show more (${number(all.length - shown)} left)`))
    : null;
  fill(parts.missing, ...all.slice(0, shown).map((link) => missingItem(link, false)), more);
}

// A passage's section heading, unless that is the note's own name.
function section(passage, name) {
  const heading = String(passage?.heading || "").trim();
  return heading && heading !== name ? heading : null;
}

function missingItem(link, compact) {
  const title = (path) => { const i = byPath.get(path); return i === undefined ? stem(path) : titleOf(i); };
  // Two notes of one title (the same page in two folders) are told apart by their paths.
  const name = title(link.source) === title(link.target) ? (path) => path : title;
  const passage = (p, path) => el("button", { type: "button", class: "map-passage", title: `Open ${path}`,
    on: { click: () => openPassage({ path, chunkId: p?.chunk_id ?? null, label: p?.heading || "" }) } },
    el("span", { class: "map-passage-head" }, [name(path), section(p, title(path))].filter(Boolean).join(" › ")),
    el("span", { class: "map-passage-text" }, plainText(unheaded(p && p.text || "")).slice(0, 240)));
  const show = () => {
    const a = byPath.get(link.source), b = byPath.get(link.target);
    if (a === undefined) { openPassage({ path: link.source }); return; }
    select(a);
    if (b !== undefined) view.setFocus(a, [[a, b, "missing"]]);
  };
  return el("li", { class: "map-missing-item", dataset: { source: link.source, target: link.target } },
    el("div", { class: "map-pair" },
      el("span", { class: "map-pair-names" }, el("strong", {}, name(link.source)), el("span", { class: "muted" }, " ↔ "), el("strong", {}, name(link.target))),
      el("span", { class: "badge" }, `${Math.round(link.similarity * 100)}% alike`)),
    passage(link.source_passage, link.source),
    passage(link.target_passage, link.target),
    el("div", { class: "map-missing-actions" },
      compact ? null : el("button", { type: "button", class: "secondary small", on: { click: show } }, "Show on map"),
      el("button", { type: "button", class: "small map-copy", title: `Copy the link to paste into ${link.source}`, on: { click: () => copyLink(link) } }, "Copy ", el("code", {}, link.link))));
}

async function copyLink(link) {
  try {
    if (!navigator.clipboard) throw new Error("no clipboard");
    await navigator.clipboard.writeText(link.link);
  } catch {
    const area = el("textarea", { class: "visually-hidden", "aria-hidden": "true" });
    area.value = link.link;
    document.body.append(area);
    area.select();
    const copied = document.execCommand("copy");
    area.remove();
    if (!copied) { toast(`Could not reach the clipboard: copy ${link.link} by hand`, { kind: "error" }); return; }
  }
  toast(`Copied ${link.link}: paste it into ${link.source}`);
}

// ---- search: light up the hits -------------------------------------------------------------------
async function search() {
  const query = parts.q.value.trim();
  if (!query) { clearSearch(); return; }
  if (!data) return;
  fill(parts.searchMeta, el("span", { class: "muted" }, "Searching…"));
  try {
    const body = await api(`/api/search?${new URLSearchParams({ q: query, view: "notes", k: String(HITS) })}`);
    if (parts.q.value.trim() !== query) return;
    const matching = (body.results || []).filter(answers);
    const found = matching.map((r) => byPath.get(r.path)).filter((i) => i !== undefined);
    hits = found;
    view.setLit(found);
    parts.clear.hidden = false;
    const where = new Map();
    for (const i of found) { const c = data.notes[i].cluster; where.set(c, (where.get(c) || 0) + 1); }
    const groups = [...where.entries()].sort((a, b) => b[1] - a[1]).slice(0, 4);
    fill(parts.searchMeta,
      el("span", {}, found.length
        ? `${count(found.length, "note answers", "notes answer")}${matching.length > found.length ? ` (${matching.length - found.length} not on the map)` : ""}: lit up on the map, the rest dimmed.`
        : "No note on the map answers that."),
      groups.length ? el("span", { class: "muted" }, ` Mostly in ${groups.map(([c, n]) => `${clusterLabel(c)} (${n})`).join(", ")}.`) : null,
      found.length ? el("span", { class: "map-hits" }, ...found.slice(0, 6).map((i) => noteButton(data.notes[i].path, titleOf(i)))) : null);
  } catch (error) {
    fill(parts.searchMeta, el("span", { class: "notice error" }, error.message, error.hint ? el("small", {}, error.hint) : null));
  }
}

// A result answers when its best section's calibrated relevance reaches MATCH (the line below
// which every other surface says nothing matches: search/relevance.py); the meaning list alone
// ranks every note, and lighting them all would say nothing.
function answers(result) {
  const chances = (result.sections || []).map((s) => s.relevance).filter((p) => p !== null && p !== undefined);
  return !chances.length || Math.max(...chances) >= MATCH;
}

function clearSearch() {
  parts.q.value = "";
  hits = null;
  if (view) view.setLit(null);
  parts.clear.hidden = true;
  fill(parts.searchMeta);
}
