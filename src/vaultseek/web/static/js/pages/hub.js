// The study hub page: generate material from your documents (with live progress and a Cancel
// button), list it, and study it — quizzes graded by the server, flashcards scheduled by FSRS,
// workshops whose lessons are written when opened, mind maps (a small SVG renderer: drag to
// pan, wheel or buttons to zoom, click a branch to fold it, a node to see its source).
// Routes: "#hub" (generate + list) and "#hub/material/<id>" (one piece of material).
import { api, el, openPassage, plural, readNdjson, recall, remember, toast } from "../ui.js";
import { renderMarkdown } from "../markdown.js";

export const title = "Study hub";

const KIND_NAMES = { quiz: "Quiz", flashcards: "Flashcards", workshop: "Workshop", mindmap: "Mind map" };
const SIZE_UNITS = {
  quiz: ["question", "questions"], flashcards: ["card", "cards"],
  workshop: ["lesson", "lessons"], mindmap: ["branch", "branches"],
};
const STAGES = [
  ["retrieving", "Finding passages in your documents"],
  ["writing", "The model is writing"],
  ["checking", "Checking every entry"],
  ["saving", "Saving"],
];
const SVG_NS = "http://www.w3.org/2000/svg";

let root = null;
let parts = {};
let limits = null;
let materials = [];
let currentId = null;
let running = null; // {job, controller} while a generation streams
let firstShow = true;

const postJson = (body) => ({ method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
const list = (text) => text.split(",").map((s) => s.trim()).filter(Boolean);
const sizeText = (kind, n) => plural(n, ...(SIZE_UNITS[kind] || ["item", "items"]));

function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

// -- mounting ---------------------------------------------------------------------------------
export async function mount(container, ctx = {}) {
  root = container;
  root.classList.add("hub");
  parts.demo = el("p", { class: "notice hub-demo", id: "hub-demo", hidden: true,
    text: "Demo mode: no language model runs. The built-in stand-in makes quizzes, cards, lessons and maps out of your notes' own sentences, each citing its passage." });
  parts.list = el("ul", { class: "hub-materials", id: "materials", "aria-label": "Your study material" });
  parts.filter = el("select", { id: "materials-filter", "aria-label": "Show", on: { change: renderList } },
    el("option", { value: "", text: "All kinds" }),
    ...Object.entries(KIND_NAMES).map(([value, text]) => el("option", { value, text })));
  parts.sidebar = el("aside", { class: "hub-sidebar", "aria-labelledby": "hub-materials-title" },
    el("div", { class: "hub-sidebar-head" },
      el("h2", { id: "hub-materials-title", text: "Your material" }),
      el("a", { class: "button secondary hub-new", href: "#hub", text: "+ New", "aria-label": "Generate new material" })),
    parts.filter, parts.list);
  parts.generate = buildForm();
  parts.material = el("section", { class: "hub-material", id: "material", "aria-live": "polite", hidden: "" });
  parts.main = el("div", { class: "hub-main" }, parts.generate, parts.material);
  root.append(el("h1", { class: "hub-sr", text: "Study hub" }), parts.demo, el("div", { class: "hub-layout" }, parts.sidebar, parts.main));
  ctx.onStatus?.((status) => { parts.demo.hidden = status?.llm?.backend !== "demo"; });
  await Promise.all([loadLimits(), loadMaterials()]);
}

export function show(route = "") {
  const match = /^material\/([^/]+)/.exec(route || "");
  if (!match && firstShow) {
    // After a reload the hub opens where you left it: the material you last had open.
    const last = recall("hub.material", null);
    firstShow = false;
    if (last && materials.some((m) => m.id === last)) {
      location.replace(`#hub/material/${encodeURIComponent(last)}`);
      return;
    }
  }
  firstShow = false;
  if (match) openMaterial(decodeURIComponent(match[1]));
  else showForm();
}

export function hide() {}

// -- the generator ----------------------------------------------------------------------------
function field(label, input, hint) {
  return el("label", { class: "hub-field" }, el("span", { text: label }), input,
    ...(hint ? [el("small", { class: "muted", text: hint })] : []));
}

function buildForm() {
  const saved = recall("hub.form", {});
  parts.kind = el("select", { name: "kind", id: "gen-kind", on: { change: () => { applyLimits(true); saveForm(); } } },
    ...Object.entries(KIND_NAMES).map(([value, text]) => el("option", { value, text })));
  parts.kind.value = KIND_NAMES[saved.kind] ? saved.kind : "quiz";
  parts.count = el("input", { name: "count", id: "gen-count", type: "number", inputmode: "numeric", required: "", on: { change: saveForm } });
  parts.countHint = el("small", { class: "muted", id: "gen-count-hint" });
  parts.topic = el("input", { name: "topic", id: "gen-topic", autocomplete: "off", maxlength: "500",
    placeholder: "Optional: what to focus on" });
  parts.scope = {};
  for (const name of ["categories", "folders", "tags"]) {
    parts.scope[name] = el("input", { name, id: `gen-${name}`, autocomplete: "off", placeholder: "All (comma-separated)" });
  }
  parts.submit = el("button", { type: "submit", id: "gen-submit", class: "primary", text: "Generate" });
  parts.progress = el("div", { class: "hub-progress", id: "gen-progress", hidden: "" });
  parts.status = el("p", { id: "gen-status", role: "status", "aria-live": "polite" });
  const form = el("form", { id: "generate", class: "card hub-generate", on: { submit: generate } },
    el("h2", { text: "Generate study material" }),
    el("p", { class: "muted", text: "Made from the passages of your documents that match the scope and topic; every item cites its source." }),
    el("div", { class: "hub-grid" },
      field("Kind", parts.kind),
      el("label", { class: "hub-field" }, el("span", { text: "How many" }), parts.count, parts.countHint),
      field("Topic", parts.topic)),
    el("details", { class: "hub-scope" }, el("summary", { text: "Limit to part of the knowledge base" }),
      el("div", { class: "hub-grid" },
        field("Categories", parts.scope.categories), field("Folders", parts.scope.folders), field("Tags", parts.scope.tags))),
    el("div", { class: "hub-actions" }, parts.submit), parts.progress, parts.status);
  return form;
}

async function loadLimits() {
  try {
    limits = (await api("/api/study/kinds")).kinds;
  } catch (error) {
    limits = null;
    parts.status.textContent = `Could not read the size limits: ${error.message}`;
  }
  applyLimits(false);
}

function applyLimits(reset) {
  const limit = limits && limits[parts.kind.value];
  if (!limit) return;
  const saved = recall("hub.form", {});
  parts.count.min = String(limit.least);
  parts.count.max = String(limit.most);
  const wanted = !reset && saved.kind === parts.kind.value ? Number(saved.count) : limit.default;
  parts.count.value = String(Number.isInteger(wanted) && wanted >= limit.least && wanted <= limit.most ? wanted : limit.default);
  parts.countHint.textContent = `${limit.least}–${limit.most} ${SIZE_UNITS[parts.kind.value][1]}`;
}

function saveForm() {
  remember("hub.form", { kind: parts.kind.value, count: Number(parts.count.value) });
}

function stageRow(key, text) {
  return el("li", { dataset: { stage: key } }, el("span", { class: "hub-stage-mark", "aria-hidden": "true" }), el("span", { class: "hub-stage-text", text }));
}

function startProgress(kind, count) {
  parts.bar = el("progress", { id: "gen-bar", max: String(count), "aria-label": "Generation progress" });
  parts.stages = el("ol", { class: "hub-stages", id: "gen-stages" }, ...STAGES.map(([key, text]) => stageRow(key, text)));
  parts.cancel = el("button", { type: "button", id: "gen-cancel", class: "danger", text: "Cancel", on: { click: cancelGeneration } });
  parts.detail = el("p", { class: "muted hub-progress-detail", id: "gen-detail", text: `Asking for ${sizeText(kind, count)}.` });
  parts.progress.replaceChildren(parts.stages, parts.bar, parts.detail, parts.cancel);
  parts.progress.hidden = false;
}

function markStage(stage, text) {
  const order = STAGES.map(([key]) => key);
  const at = order.indexOf(stage);
  if (at < 0) return;
  for (const row of parts.stages.children) {
    const i = order.indexOf(row.dataset.stage);
    row.className = i < at ? "done" : i === at ? "active" : "";
    if (i === at && text) row.querySelector(".hub-stage-text").textContent = text;
  }
}

function onProgress(item, kind, count) {
  const unit = SIZE_UNITS[kind];
  switch (item.stage) {
    case "started": running.job = item.job; break;
    case "retrieving": markStage("retrieving"); break;
    case "sources":
      markStage("retrieving", `Found ${plural(item.sources, "passage", "passages")} in ${plural(item.paths.length, "document", "documents")}`);
      markStage("writing");
      parts.detail.textContent = `From ${item.paths.join(", ")}`;
      break;
    case "writing":
      markStage("writing", `The model is writing: ${Math.min(item.items, count)} of ${plural(count, ...unit)} begun`);
      parts.bar.value = Math.min(item.items, count);
      parts.detail.textContent = `${item.chars.toLocaleString()} characters received`;
      break;
    case "retrying": markStage("writing", `Unusable outline (${item.reason}); asking once more`); break;
    case "checking": parts.bar.value = count; markStage("checking"); break;
    case "saving": markStage("saving"); break;
    default: break;
  }
}

async function generate(event) {
  event.preventDefault();
  if (running) return;
  const kind = parts.kind.value;
  const count = Number(parts.count.value);
  const limit = limits && limits[kind];
  if (limit && !(Number.isInteger(count) && count >= limit.least && count <= limit.most)) {
    parts.status.textContent = `How many: a whole number from ${limit.least} to ${limit.most}.`;
    parts.count.focus();
    return;
  }
  saveForm();
  const scope = {};
  for (const [name, input] of Object.entries(parts.scope)) {
    const values = list(input.value);
    if (values.length) scope[name] = values;
  }
  const body = { kind, count, scope, topic: parts.topic.value.trim() };
  running = { job: null, controller: new AbortController() };
  parts.submit.disabled = true;
  parts.status.textContent = "";
  startProgress(kind, count);
  let outcome = null;
  try {
    const response = await fetch("/api/study/materials?stream=1", { ...postJson(body), credentials: "same-origin", signal: running.controller.signal });
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      const error = data.error || {};
      throw Object.assign(new Error(error.message || response.statusText), { hint: error.hint });
    }
    await readNdjson(response, (item) => {
      if (["done", "error", "cancelled"].includes(item.stage)) outcome = item;
      else onProgress(item, kind, count);
    });
  } catch (error) {
    outcome = error.name === "AbortError" ? { stage: "cancelled" } : { stage: "error", error: { message: error.message, hint: error.hint } };
  } finally {
    running = null;
    parts.submit.disabled = false;
    parts.progress.hidden = true;
  }
  if (!outcome) outcome = { stage: "error", error: { message: "the connection ended before the material was made" } };
  if (outcome.stage === "done") {
    parts.status.textContent = `Made “${outcome.material.title}”.`;
    await loadMaterials();
    location.hash = `#hub/material/${encodeURIComponent(outcome.material.id)}`;
  } else if (outcome.stage === "cancelled") {
    parts.status.textContent = "Cancelled: the model stopped and nothing was kept.";
  } else {
    const { message, hint } = outcome.error || {};
    parts.status.textContent = `Could not generate: ${message}${hint ? ` — ${hint}` : ""}`;
  }
}

async function cancelGeneration() {
  if (!running) return;
  parts.cancel.disabled = true;
  parts.cancel.textContent = "Cancelling…";
  const job = running.job;
  try {
    if (job) await api(`/api/study/jobs/${encodeURIComponent(job)}/cancel`, postJson({}));
    else running.controller.abort();
  } catch (error) {
    running && running.controller.abort(); // closing the stream stops the job too
  }
}

// -- the list -----------------------------------------------------------------------------------
async function loadMaterials() {
  try {
    materials = (await api("/api/study/materials")).materials;
  } catch (error) {
    parts.list.replaceChildren(el("li", { class: "muted", text: `Could not list your material: ${error.message}` }));
    return;
  }
  renderList();
}

function renderList() {
  const kind = parts.filter.value;
  const shown = materials.filter((m) => !kind || m.kind === kind);
  if (!shown.length) {
    parts.list.replaceChildren(el("li", { class: "muted hub-empty", text: materials.length ? "Nothing of this kind yet." : "Nothing yet: generate a quiz, flashcards, a workshop or a mind map." }));
    return;
  }
  parts.list.replaceChildren(...shown.map((m) => el("li", { dataset: { id: m.id }, class: m.id === currentId ? "current" : "" },
    el("a", { href: `#hub/material/${encodeURIComponent(m.id)}`, "aria-current": m.id === currentId ? "page" : "false" },
      el("span", { class: `hub-kind hub-kind-${m.kind}`, text: KIND_NAMES[m.kind] || m.kind }),
      el("span", { class: "hub-title", text: m.title }),
      el("span", { class: "muted hub-size", text: sizeText(m.kind, m.size) })))));
}

function showForm() {
  currentId = null;
  renderList();
  parts.material.hidden = true;
  parts.generate.hidden = false;
}

// -- one piece of material ------------------------------------------------------------------------
async function openMaterial(id) {
  currentId = id;
  parts.generate.hidden = true;
  parts.material.hidden = false;
  parts.material.replaceChildren(el("p", { class: "muted", text: "Opening…" }));
  renderList();
  let m;
  try {
    m = await api(`/api/study/materials/${encodeURIComponent(id)}?open=1`);
  } catch (error) {
    if (recall("hub.material", null) === id) remember("hub.material", null);
    parts.material.replaceChildren(el("h2", { text: "Cannot open this material" }), el("p", { text: error.message }),
      el("p", {}, el("a", { href: "#hub", text: "Back to the study hub" })));
    return;
  }
  if (currentId !== id) return;
  remember("hub.material", id);
  const body = el("div", { class: "hub-body" });
  parts.material.replaceChildren(materialHeader(m), ...problemsOf(m), body, sourcesOf(m));
  ({ quiz: renderQuiz, flashcards: renderDeck, workshop: renderWorkshop, mindmap: renderMindmap })[m.kind](m, body);
  parts.material.querySelector("h2").focus({ preventScroll: true });
}

function materialHeader(m) {
  const heading = el("h2", { id: "material-title", tabindex: "-1", text: m.title });
  const exports = [el("a", { class: "button secondary", href: `/api/study/materials/${encodeURIComponent(m.id)}/export?format=md`, text: "Export Markdown" })];
  if (m.kind === "flashcards") exports.push(el("a", { class: "button secondary", href: `/api/study/materials/${encodeURIComponent(m.id)}/export?format=csv`, text: "Export Anki CSV" }));
  return el("header", { class: "hub-material-head" },
    el("p", { class: "hub-back" }, el("a", { href: "#hub", text: "← Study hub" })),
    heading,
    el("p", { class: "muted", text: `${KIND_NAMES[m.kind]} · ${sizeText(m.kind, m.size ?? sizeOf(m))} · made ${formatWhen(m.created_at)}${m.model ? ` by ${m.model}` : ""}` }),
    el("div", { class: "hub-actions" },
      el("button", { type: "button", class: "secondary", text: "Rename", on: { click: () => rename(m, heading) } }),
      ...exports,
      el("button", { type: "button", class: "danger", text: "Delete", on: { click: () => removeMaterial(m) } })));
}

function sizeOf(m) {
  if (m.kind === "quiz") return m.content.questions.length;
  if (m.kind === "flashcards") return (m.cards || []).length;
  if (m.kind === "workshop") return m.content.lessons.length;
  return m.content.branches.length;
}

function formatWhen(iso) {
  if (!iso) return "";
  const when = new Date(iso);
  return Number.isNaN(when.getTime()) ? iso : when.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

function problemsOf(m) {
  if (!m.problems || !m.problems.length) return [];
  return [el("details", { class: "hub-problems" }, el("summary", { text: `The generator noted ${plural(m.problems.length, "thing", "things")}` }),
    el("ul", {}, ...m.problems.map((p) => el("li", { text: p }))))];
}

function sourceButton(source) {
  const name = `[${source.number}] ${source.path}${source.label ? ` · ${source.label}` : ""}`;
  return el("button", { type: "button", class: "link hub-source", text: name, title: "Open this passage",
    on: { click: () => openPassage({ path: source.path, chunkId: source.chunk_id, label: source.label, highlight: source.snippet }) } });
}

function sourcesOf(m) {
  return el("details", { class: "hub-sources" }, el("summary", { text: `Made from ${plural(m.sources.length, "passage", "passages")}` }),
    el("ol", {}, ...m.sources.map((s) => el("li", {}, sourceButton(s)))));
}

async function rename(m, heading) {
  const title = window.prompt("New title", m.title);
  if (!title || title.trim() === m.title) return;
  try {
    const renamed = await api(`/api/study/materials/${encodeURIComponent(m.id)}`, { ...postJson({ title }), method: "PATCH" });
    m.title = renamed.title;
    heading.textContent = renamed.title;
    await loadMaterials();
  } catch (error) {
    toast(`Could not rename: ${error.message}`, { kind: "error" });
  }
}

async function removeMaterial(m) {
  if (!window.confirm(`Delete “${m.title}”? Your scores and reviews stay in the dashboard.`)) return;
  try {
    await api(`/api/study/materials/${encodeURIComponent(m.id)}`, { method: "DELETE" });
    if (recall("hub.material", null) === m.id) remember("hub.material", null);
    await loadMaterials();
    location.hash = "#hub";
    toast(`Deleted “${m.title}”.`);
  } catch (error) {
    toast(`Could not delete: ${error.message}`, { kind: "error" });
  }
}

// -- quiz ------------------------------------------------------------------------------------------
function renderQuiz(m, body) {
  const started = new Date().toISOString();
  const bySource = Object.fromEntries(m.sources.map((s) => [s.number, s]));
  const form = el("form", { id: "quiz-form", class: "hub-quiz" });
  m.content.questions.forEach((q, n) => {
    form.append(el("fieldset", { class: "question", dataset: { n: String(n) } },
      el("legend", { text: `${n + 1}. ${q.question}` }),
      ...q.options.map((option, i) => el("label", { class: "hub-option" },
        el("input", { type: "radio", name: `q${n}`, value: String(i) }), el("span", { text: option }))),
      el("div", { class: "feedback", "aria-live": "polite" })));
  });
  const score = el("p", { id: "quiz-score", role: "status" });
  const submit = el("button", { type: "submit", id: "quiz-submit", class: "primary", text: "Submit answers" });
  form.append(el("div", { class: "hub-actions" }, submit), score);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const answers = m.content.questions.map((_q, n) => {
      const picked = form.querySelector(`input[name=q${n}]:checked`);
      return picked ? Number(picked.value) : null;
    });
    submit.disabled = true;
    let result;
    try {
      result = await api(`/api/study/materials/${encodeURIComponent(m.id)}/attempts`, postJson({ answers, started_at: started }));
    } catch (error) {
      submit.disabled = false;
      score.textContent = `Could not grade: ${error.message}`;
      return;
    }
    result.results.forEach((r, n) => {
      const box = form.querySelector(`fieldset[data-n="${n}"]`);
      const feedback = box.querySelector(".feedback");
      box.classList.add(r.correct ? "right" : "wrong");
      const right = m.content.questions[n].options[r.correct_index];
      const source = bySource[r.source && r.source.number];
      feedback.replaceChildren(
        el("strong", { text: r.correct ? "Right." : r.chosen === null ? `Not answered — the answer is “${right}”.` : `Wrong — the answer is “${right}”.` }),
        " ", r.explanation, " ", ...(source ? [sourceButton(source)] : []));
      for (const input of box.querySelectorAll("input")) input.disabled = true;
    });
    score.textContent = `Score: ${result.score} / ${result.total}`;
    submit.replaceWith(el("button", { type: "button", class: "secondary", text: "Take it again", on: { click: () => openMaterial(m.id) } }));
  });
  body.append(form);
  if (m.attempts && m.attempts.length) {
    body.append(el("p", { class: "muted", text: `${m.attempts.length === 1 ? "Earlier attempt" : "Earlier attempts"}: ${m.attempts.map((a) => `${a.score}/${a.total}`).join(", ")}` }));
  }
}

// -- flashcards --------------------------------------------------------------------------------------
async function renderDeck(m, body) {
  const box = el("div", { id: "deck", class: "hub-deck" });
  body.append(box);
  let cards;
  try {
    cards = (await api(`/api/study/materials/${encodeURIComponent(m.id)}/due`)).cards;
  } catch (error) {
    box.textContent = `Could not load the cards: ${error.message}`;
    return;
  }
  const total = (m.cards || []).length;
  const next = (i) => {
    if (i >= cards.length) {
      const upcoming = (m.cards || []).map((c) => c.due).sort()[0];
      box.replaceChildren(el("p", { class: "hub-deck-done", text: `Nothing due now. ${plural(total, "card", "cards")} in this deck.` }),
        ...(upcoming ? [el("p", { class: "muted", text: `The next review is due ${formatWhen(upcoming)}.` })] : []));
      return;
    }
    const card = cards[i];
    const face = el("div", { class: "flashcard", tabindex: "0", "aria-live": "polite" }, el("p", { class: "front", text: card.front }));
    const buttons = el("div", { class: "hub-actions hub-ratings" });
    const flip = el("button", { type: "button", class: "primary", text: "Show answer", on: { click: () => {
      face.append(el("hr"), el("p", { class: "back", text: card.back }));
      flip.remove();
      [["again", "Again"], ["hard", "Hard"], ["good", "Good"], ["easy", "Easy"]].forEach(([rating, label], k) => {
        buttons.append(el("button", { type: "button", class: "secondary", text: label, title: `Key ${k + 1}`, dataset: { rating }, on: { click: async () => {
          for (const b of buttons.querySelectorAll("button")) b.disabled = true;
          try {
            const r = await api(`/api/study/cards/${card.id}/reviews`, postJson({ rating }));
            box.dataset.lastDue = r.due;
            next(i + 1);
          } catch (error) {
            toast(`Could not save the review: ${error.message}`, { kind: "error" });
            for (const b of buttons.querySelectorAll("button")) b.disabled = false;
          }
        } } }));
      });
      buttons.querySelector("button").focus();
    } } });
    buttons.append(flip);
    box.replaceChildren(el("p", { class: "muted", text: `Card ${i + 1} of ${cards.length} due · ${plural(total, "card", "cards")} in the deck` }), face, buttons);
  };
  box.addEventListener("keydown", (event) => {
    const keys = { 1: "again", 2: "hard", 3: "good", 4: "easy" };
    if (event.key === " " && box.querySelector(".primary")) { event.preventDefault(); box.querySelector(".primary").click(); }
    else if (keys[event.key]) box.querySelector(`[data-rating=${keys[event.key]}]`)?.click();
  });
  next(0);
}

// -- workshop ------------------------------------------------------------------------------------------
function renderWorkshop(m, body) {
  const lesson = el("article", { class: "lesson", id: "lesson", "aria-live": "polite" });
  const written = new Set(m.lessons_written || []);
  const items = m.content.lessons.map((name, n) => {
    const link = el("a", { href: "#", text: name, on: { click: async (event) => {
      event.preventDefault();
      for (const a of body.querySelectorAll(".lessons a")) a.removeAttribute("aria-current");
      link.setAttribute("aria-current", "step");
      lesson.replaceChildren(el("p", { class: "muted", text: written.has(n) ? "Opening the lesson…" : "The model is writing this lesson (the first time only)…" }));
      try {
        const data = await api(`/api/study/materials/${encodeURIComponent(m.id)}/lessons/${n + 1}`);
        written.add(n);
        link.parentElement.classList.add("written");
        lesson.replaceChildren(renderMarkdown(data.markdown));
      } catch (error) {
        lesson.replaceChildren(el("p", { class: "error", text: `${error.message}${error.hint ? ` — ${error.hint}` : ""}` }));
      }
    } } });
    return el("li", { class: written.has(n) ? "written" : "" }, link);
  });
  body.append(el("p", { class: "hub-summary", text: m.content.summary }),
    el("div", { class: "hub-workshop" }, el("nav", { "aria-label": "Lessons" }, el("ol", { class: "lessons" }, ...items)), lesson));
  lesson.append(el("p", { class: "muted", text: "Choose a lesson." }));
}

// -- mind map: a small tree renderer ----------------------------------------------------------------------
function renderMindmap(m, body) {
  const sources = Object.fromEntries(m.sources.map((s) => [s.number, s]));
  const tree = { label: m.content.topic, children: m.content.branches.map((b) => ({ ...b, children: b.children.map((c) => ({ ...c })) })) };
  const panel = el("div", { id: "mindmap-source", class: "hub-mindmap-source", "aria-live": "polite" },
    el("p", { class: "muted", text: "Select a node to see its source; select a branch to fold it. Drag to pan." }));
  const canvas = svg("svg", { class: "mindmap", id: "mindmap", role: "group", "aria-label": `Mind map: ${m.content.topic}` });
  const layer = svg("g");
  canvas.append(layer);
  let view = { x: 16, y: 16, k: window.innerWidth < 600 ? 0.7 : 1 };
  const apply = () => layer.setAttribute("transform", `translate(${view.x},${view.y}) scale(${view.k})`);
  const zoom = (factor) => { view.k = Math.min(3, Math.max(0.3, view.k * factor)); apply(); };
  const tools = el("div", { class: "hub-actions hub-mindmap-tools" },
    el("button", { type: "button", class: "secondary", text: "Zoom in", on: { click: () => zoom(1.2) } }),
    el("button", { type: "button", class: "secondary", text: "Zoom out", on: { click: () => zoom(1 / 1.2) } }),
    el("button", { type: "button", class: "secondary", text: "Reset", on: { click: () => { view = { x: 16, y: 16, k: 1 }; apply(); } } }));
  body.append(tools, canvas, panel);
  const choose = (node) => {
    const source = sources[node.source];
    panel.replaceChildren(el("p", {}, el("strong", { text: node.label })),
      ...(source ? [el("p", { text: source.snippet }), sourceButton(source)] : []));
    if (node.children && node !== tree) { node.collapsed = !node.collapsed; draw(); }
  };
  const draw = () => {
    layer.replaceChildren();
    let row = 0;
    const place = (node, depth) => {
      node.x = depth * 220;
      const kids = node.collapsed ? [] : node.children || [];
      if (!kids.length) node.y = row++ * 34;
      else { kids.forEach((kid) => place(kid, depth + 1)); node.y = (kids[0].y + kids[kids.length - 1].y) / 2; }
    };
    place(tree, 0);
    canvas.setAttribute("height", String(Math.max(240, Math.min(640, row * 34 * view.k + 40))));
    const paint = (node) => {
      for (const kid of node.collapsed ? [] : node.children || []) {
        layer.append(svg("path", { d: `M${node.x + 180},${node.y + 12} C${node.x + 200},${node.y + 12} ${kid.x - 20},${kid.y + 12} ${kid.x},${kid.y + 12}` }));
        paint(kid);
      }
      const group = svg("g", { class: `${node.children ? "branch" : "leaf"}${node.collapsed ? " collapsed" : ""}`,
        transform: `translate(${node.x},${node.y})`, tabindex: "0", role: "button",
        "aria-label": node.label + (node.children && node !== tree ? (node.collapsed ? " (folded)" : "") : "") });
      group.append(svg("rect", { width: 180, height: 24, rx: 5 }));
      const text = svg("text", { x: 8, y: 16 });
      text.textContent = node.label.length > 26 ? `${node.label.slice(0, 25)}…` : node.label;
      const full = svg("title");
      full.textContent = node.label;
      group.append(full, text);
      group.addEventListener("click", (event) => { event.stopPropagation(); choose(node); });
      group.addEventListener("keydown", (event) => { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); choose(node); } });
      layer.append(group);
    };
    paint(tree);
    apply();
  };
  let drag = null;
  canvas.addEventListener("pointerdown", (e) => { if (e.target === canvas) drag = { x: e.clientX - view.x, y: e.clientY - view.y }; });
  canvas.addEventListener("pointermove", (e) => { if (drag) { view.x = e.clientX - drag.x; view.y = e.clientY - drag.y; apply(); } });
  canvas.addEventListener("pointerup", () => { drag = null; });
  canvas.addEventListener("pointerleave", () => { drag = null; });
  canvas.addEventListener("wheel", (e) => { e.preventDefault(); zoom(e.deltaY < 0 ? 1.1 : 0.9); }, { passive: false });
  draw();
}
