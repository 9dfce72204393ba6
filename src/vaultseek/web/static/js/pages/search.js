// Search: the same search as `vaultseek search` (GET /api/search), with its filters and its
// query syntax ("phrase", -word, prefix*, tag:x, …: the line under the count says what was
// read). It answers with notes: each file once, under its title, with its best sections; a
// section (or the title, for the best one) opens its passage in the side panel with the
// searched words marked, and those searched for a query word no note holds. The query is
// part of the address (#search/<query>), so a search can be bookmarked or reloaded.

import { api, el, highlightTerms, inlineMarkdown, openPassage, plainText, plural, recall, remember } from "../ui.js";

export const title = "Search";

const KINDS = ["note", "pdf", "docx", "pptx", "xlsx", "csv", "html", "txt", "json", "yaml", "canvas", "epub", "odt", "image"];
const SYNTAX = [
  ['"exact phrase"', "every result holds it"],
  ["-word", "no result from a note with it"],
  ["prefix*", "words starting with it"],
  ["tag:x  #x", "tagged"],
  ["path:x  file:x", "text in the path, the file name"],
  ["kind:pdf", "a file type"],
  ["after:2w  before:2026-01", "modified"],
  ["[status:done]  [priority>3]", "frontmatter"],
];
// search/relevance.py's NO_MATCH, which the answer's `no_match` stands for.
const NO_MATCH = "nothing in the index matches this well; the closest results are shown";
const parts = {};
let lastQuery = null;

export async function mount(root, ctx) {
  parts.ctx = ctx;
  parts.q = el("input", { type: "search", name: "q", placeholder: "Search your documents and notes", "aria-label": "Search", autocomplete: "off", enterkeyhint: "search" });
  parts.mode = el("select", { name: "mode" }, ...["hybrid", "bm25", "vector"].map((m) => el("option", { value: m }, { hybrid: "words + meaning", bm25: "words only", vector: "meaning only" }[m])));
  parts.kind = el("select", { name: "kind" }, el("option", { value: "" }, "any type"), ...KINDS.map((k) => el("option", { value: k }, k)));
  parts.folder = el("input", { name: "folder", placeholder: "e.g. uploads", autocomplete: "off" });
  parts.tag = el("input", { name: "tag", placeholder: "e.g. law", autocomplete: "off" });
  parts.category = el("input", { name: "category", placeholder: "a knowledge-base category", autocomplete: "off" });
  parts.meta = el("p", { class: "search-meta muted", role: "status", "aria-live": "polite" });
  parts.results = el("ol", { class: "search-results", "aria-label": "Results" });
  const filters = el("details", { class: "search-filters" },
    el("summary", {}, "Filters"),
    el("div", { class: "filter-grid" },
      el("label", { class: "field" }, "Match", parts.mode),
      el("label", { class: "field" }, "Type", parts.kind),
      el("label", { class: "field" }, "Folder", parts.folder),
      el("label", { class: "field" }, "Tag", parts.tag),
      el("label", { class: "field" }, "Category", parts.category)));
  const form = el("form", { class: "search-form", role: "search" },
    el("div", { class: "search-row" }, parts.q, el("button", { type: "submit" }, "Search")), filters);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const query = parts.q.value.trim();
    if (!query) { parts.q.focus(); return; }
    const target = `#search/${encodeURIComponent(query)}`;
    if (location.hash === target) run(query, true); else location.hash = target;
  });
  root.append(el("div", { class: "page-header" }, el("h1", {}, "Search")), form, parts.meta, parts.results);
  const saved = recall("search.filters", {});
  for (const name of ["mode", "kind", "folder", "tag", "category"]) if (saved[name]) parts[name].value = saved[name];
}

export function show(route) {
  const query = route ? route : "";
  if (query) {
    parts.q.value = query;
    run(query, false);
  } else if (!parts.q.value) {
    parts.meta.textContent = "";
    parts.results.replaceChildren(el("li", { class: "empty" }, "Search by words or by meaning. Results open the passage they come from.", syntaxHint()));
  }
  if (!matchMedia("(max-width: 720px)").matches) parts.q.focus({ preventScroll: true });
}

async function run(query, force) {
  const filters = { mode: parts.mode.value, kind: parts.kind.value, folder: parts.folder.value.trim(), tag: parts.tag.value.trim(), category: parts.category.value.trim() };
  const key = JSON.stringify([query, filters]);
  if (!force && key === lastQuery) return;
  lastQuery = key;
  remember("search.filters", filters);
  const params = new URLSearchParams({ q: query, mode: filters.mode, view: "notes", k: "20" });
  if (filters.kind) params.append("kinds", filters.kind);
  if (filters.folder) params.append("folders", filters.folder);
  if (filters.tag) params.append("tags", filters.tag);
  if (filters.category) params.append("categories", filters.category);
  parts.meta.textContent = "Searching…";
  const started = performance.now();
  try {
    const body = await api(`/api/search?${params}`);
    const took = Math.round(performance.now() - started);
    // The "nothing matches" notice is shown above the notes, not among the timings.
    const notices = (body.notices || []).filter((notice) => !(body.no_match && notice === NO_MATCH)).join("; ");
    const steps = [
      body.expansion ? `expanded by ${body.expansion.model} in ${body.expansion.cached ? "no time (cached)" : `${Math.round(body.expansion.ms)} ms`}` : "",
      body.reranking ? `the best ${body.reranking.candidates} reranked by ${body.reranking.reranker} in ${Math.round(body.reranking.ms)} ms` : "",
    ].filter(Boolean).join(", ");
    const summary = `${plural(body.results.length, "note", "notes")} in ${took} ms${steps ? ` (${steps})` : ""}${notices ? " — " + notices : ""}`;
    parts.meta.replaceChildren(summary, ...(body.parsed ? [el("span", { class: "search-parsed" }, understood(body.parsed))] : []));
    if (!body.results.length) {
      parts.results.replaceChildren(el("li", { class: "empty" }, "Nothing found. Try other words, or fewer filters."));
      return;
    }
    // The words searched, and what the search took for the ones no note holds (a corrected
    // typo, another form of the word, the vault's word of like meaning): all are marked.
    const added = Object.values(body.alternatives || {}).flat().map((word) => word.replace(/\*$/, ""));
    const words = [body.parsed ? body.parsed.text : query, ...added].join(" ");
    const unmatched = body.no_match
      ? [el("li", { class: "notice warn search-no-match", role: "status" },
          "Nothing in your notes answers this closely.",
          el("small", {}, "These are the nearest notes; try other words, or check the spelling."))]
      : [];
    parts.results.replaceChildren(...unmatched, ...body.results.map((note) => noteResult(note, words)));
  } catch (error) {
    parts.meta.textContent = "";
    parts.results.replaceChildren(el("li", { class: "notice error", role: "alert" }, error.message, el("small", {}, error.hint)));
  }
}

// What the query's operators asked for, in words (the response's `parsed`).
function understood(parsed) {
  const said = [`Searched: ${parsed.text}`];
  for (const phrase of parsed.required) said.push(`must contain "${phrase}"`);
  if (parsed.excluded.length) said.push(`excluding notes with ${parsed.excluded.map((e) => `"${e}"`).join(", ")}`);
  if (parsed.fields.length) said.push(`only ${parsed.fields.join(" ")}`);
  for (const [prefix, words] of Object.entries(parsed.prefixes)) said.push(words.length ? `${prefix} as ${words.join(", ")}` : `no word starts with ${prefix.slice(0, -1)}`);
  return said.join(" · ");
}

function syntaxHint() {
  return el("dl", { class: "search-syntax", "aria-label": "Query syntax" },
    SYNTAX.map(([example, meaning]) => [el("dt", {}, el("code", {}, example)), el("dd", {}, meaning)]));
}

function noteResult(note, query) {
  const name = note.path.split("/").pop();
  const stem = name.includes(".") ? name.slice(0, name.lastIndexOf(".")) : name;
  const best = note.sections[0];
  const open = () => openPassage({ path: note.path, chunkId: best.chunk_id, label: best.label, highlight: query });
  return el("li", { class: "note-result" },
    el("div", { class: "note-head" },
      el("button", { type: "button", class: "note-title", on: { click: open } }, note.title || stem),
      el("span", { class: "result-folder muted" }, note.path)),
    el("ol", { class: "note-sections", "aria-label": `Sections of ${note.title || name}` },
      ...note.sections.map((section) => el("li", {}, sectionResult(section, query)))));
}

// How well a section answers the query, in words: from its calibrated relevance (the
// probability that it answers, search/relevance.py), never the fused score, whose scale means
// nothing to a reader. The numbers stay in the line's tooltip.
function matchOf(relevance) {
  if (relevance == null) return null;
  if (relevance >= 0.8) return { kind: "strong", text: "Strong match" };
  if (relevance >= 0.5) return { kind: "likely", text: "Likely match" };
  return { kind: "weak", text: "Weak match" };
}

function sectionResult(r, query) {
  const snippet = el("p", { class: "result-snippet" }, inlineMarkdown(plainText(r.snippet)));
  highlightTerms(snippet, query);
  const match = matchOf(r.relevance);
  const how = [];
  if (r.bm25_rank != null) how.push("has your words");
  if (r.vec_rank != null || r.deep_rank != null) how.push("close in meaning");
  const numbers = [`score ${Number(r.score).toFixed(3)}`];
  if (r.relevance != null) numbers.push(`relevance ${Number(r.relevance).toFixed(2)}`);
  if (r.bm25_rank != null) numbers.push(`words #${r.bm25_rank}`);
  if (r.vec_rank != null) numbers.push(`meaning #${r.vec_rank}`);
  if (r.deep_rank != null) numbers.push(`deep #${r.deep_rank}`);
  return el("button", { type: "button", class: "result", on: { click: () => openPassage({ path: r.path, chunkId: r.chunk_id, label: r.label, highlight: query }) } },
    r.label ? el("span", { class: "result-head" }, el("span", { class: "badge" }, r.label)) : null,
    snippet,
    el("span", { class: "result-why muted", title: numbers.join(" · ") },
      match ? el("span", { class: `match match-${match.kind}` }, match.text) : null,
      how.length ? `${match ? " · " : ""}${how.join(", ")}` : null));
}
