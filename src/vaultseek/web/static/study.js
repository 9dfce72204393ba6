// The study hub page: generate, list, take quizzes, review flashcards (FSRS), read workshops,
// explore mind maps (a small SVG renderer: pan, zoom, collapse, click for the source), dashboard.
"use strict";

const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "on") for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
};
const svg = (tag, attrs = {}) => {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
};

async function api(path, options = {}) {
  const init = { ...options, headers: { "Content-Type": "application/json" } };
  if (options.json !== undefined) init.body = JSON.stringify(options.json);
  const response = await fetch(path, init);
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = data.error || {};
    throw new Error((error.message || response.statusText) + (error.hint ? ` (${error.hint})` : ""));
  }
  return data;
}

const list = (text) => text.split(",").map((s) => s.trim()).filter(Boolean);

function show(view) {
  for (const section of document.querySelectorAll(".view")) section.hidden = section.id !== `view-${view}`;
}

// -- hub ------------------------------------------------------------------------------------
async function loadMaterials() {
  const { materials } = await api("/api/study/materials");
  $("materials").replaceChildren(...materials.map((m) => el("li", { "data-id": m.id },
    el("a", { href: `#material/${m.id}`, text: `${m.title}` }),
    el("span", { class: "muted", text: ` · ${m.kind} · ${m.size}` }),
    el("button", { type: "button", text: "Rename", on: { click: async () => {
      const title = prompt("New title", m.title);
      if (title) { await api(`/api/study/materials/${m.id}`, { method: "PATCH", json: { title } }); loadMaterials(); }
    } } }),
    el("button", { type: "button", text: "Delete", on: { click: async () => {
      if (confirm(`Delete “${m.title}”?`)) { await api(`/api/study/materials/${m.id}`, { method: "DELETE" }); loadMaterials(); }
    } } }),
    el("a", { class: "export", href: `/api/study/materials/${m.id}/export?format=md`, text: "Markdown" }),
    ...(m.kind === "flashcards" ? [el("a", { class: "export", href: `/api/study/materials/${m.id}/export?format=csv`, text: "Anki CSV" })] : []),
  )));
}

$("generate").addEventListener("submit", async (event) => {
  event.preventDefault();
  const scope = {};
  for (const name of ["categories", "folders", "tags"]) {
    const values = list($(`gen-${name}`).value);
    if (values.length) scope[name] = values;
  }
  const body = { kind: $("gen-kind").value, count: Number($("gen-count").value), scope, topic: $("gen-topic").value };
  $("gen-status").textContent = "Generating… (the model is writing)";
  $("gen-submit").disabled = true;
  try {
    const material = await api("/api/study/materials", { method: "POST", json: body });
    $("gen-status").textContent = `Made “${material.title}”.`;
    location.hash = `#material/${material.id}`;
  } catch (error) {
    $("gen-status").textContent = `Could not generate: ${error.message}`;
  } finally {
    $("gen-submit").disabled = false;
  }
});

// -- one piece of material -------------------------------------------------------------------
async function openMaterial(id) {
  show("material");
  const m = await api(`/api/study/materials/${id}?open=1`);
  $("material-title").textContent = m.title;
  $("material-problems").textContent = m.problems.length ? `Pipeline notes: ${m.problems.join("; ")}` : "";
  const body = $("material-body");
  body.replaceChildren();
  ({ quiz: renderQuiz, flashcards: renderDeck, workshop: renderWorkshop, mindmap: renderMindmap })[m.kind](m, body);
}

function sourceLine(source) {
  return source && source.path ? `Source [${source.number}]: ${source.path}${source.label ? " · " + source.label : ""}` : "";
}

function renderQuiz(m, body) {
  const started = new Date().toISOString();
  const form = el("form", { id: "quiz-form" });
  m.content.questions.forEach((q, n) => {
    form.append(el("fieldset", { class: "question", "data-n": n }, el("legend", { text: `${n + 1}. ${q.question}` }),
      ...q.options.map((option, i) => el("label", {}, el("input", { type: "radio", name: `q${n}`, value: i }), ` ${option}`)),
      el("p", { class: "feedback" })));
  });
  form.append(el("button", { type: "submit", id: "quiz-submit", text: "Submit answers" }), el("p", { id: "quiz-score", role: "status" }));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const answers = m.content.questions.map((_q, n) => {
      const picked = form.querySelector(`input[name=q${n}]:checked`);
      return picked ? Number(picked.value) : null;
    });
    const result = await api(`/api/study/materials/${m.id}/attempts`, { method: "POST", json: { answers, started_at: started } });
    result.results.forEach((r, n) => {
      const feedback = form.querySelector(`fieldset[data-n="${n}"] .feedback`);
      feedback.className = `feedback ${r.correct ? "result-right" : "result-wrong"}`;
      const right = m.content.questions[n].options[r.correct_index];
      feedback.textContent = `${r.correct ? "Right" : "Wrong — the answer is " + right}. ${r.explanation} ${sourceLine(r.source)}`;
    });
    $("quiz-score").textContent = `Score: ${result.score} / ${result.total}`;
  });
  body.append(form);
  if (m.attempts.length) body.append(el("p", { class: "muted", text: `Earlier attempts: ${m.attempts.map((a) => `${a.score}/${a.total}`).join(", ")}` }));
}

async function renderDeck(m, body) {
  const { cards } = await api(`/api/study/materials/${m.id}/due`);
  const box = el("div", { id: "deck" });
  body.append(box);
  const next = (i) => {
    if (i >= cards.length) { box.replaceChildren(el("p", { text: `Nothing due now. ${m.cards.length} cards in this deck.` })); return; }
    const card = cards[i];
    const face = el("div", { class: "flashcard", text: card.front });
    const buttons = el("p");
    const flip = el("button", { type: "button", text: "Show answer", on: { click: () => {
      face.textContent = `${card.front}\n\n${card.back}`;
      flip.remove();
      for (const rating of ["again", "hard", "good", "easy"]) {
        buttons.append(el("button", { type: "button", text: rating, on: { click: async () => {
          const r = await api(`/api/study/cards/${card.id}/reviews`, { method: "POST", json: { rating } });
          box.dataset.lastDue = r.due;
          next(i + 1);
        } } }));
      }
    } } });
    buttons.append(flip);
    box.replaceChildren(el("p", { class: "muted", text: `Card ${i + 1} of ${cards.length} due` }), face, buttons);
  };
  next(0);
}

function renderWorkshop(m, body) {
  const lesson = el("div", { class: "lesson", id: "lesson" });
  body.append(el("p", { text: m.content.summary }), el("ol", { class: "lessons" }, ...m.content.lessons.map((title, n) =>
    el("li", {}, el("a", { href: "#", text: title, on: { click: async (event) => {
      event.preventDefault();
      lesson.textContent = "Writing this lesson…";
      try {
        lesson.textContent = (await api(`/api/study/materials/${m.id}/lessons/${n + 1}`)).markdown;
      } catch (error) { lesson.textContent = error.message; }
    } } })))), lesson);
}

// -- mind map: a tiny tree renderer --------------------------------------------------------
function renderMindmap(m, body) {
  const sources = Object.fromEntries(m.sources.map((s) => [s.number, s]));
  const root = { label: m.content.topic, children: m.content.branches.map((b) => ({ ...b, children: b.children.map((c) => ({ ...c })) })) };
  const panel = el("p", { id: "mindmap-source", class: "muted", text: "Click a node to see its source; click a branch to fold it." });
  const canvas = svg("svg", { class: "mindmap", id: "mindmap" });
  const layer = svg("g");
  canvas.append(layer);
  body.append(canvas, panel);
  let view = { x: 20, y: 20, k: 1 };
  const apply = () => layer.setAttribute("transform", `translate(${view.x},${view.y}) scale(${view.k})`);
  const draw = () => {
    layer.replaceChildren();
    let row = 0;
    const place = (node, depth) => {
      node.x = depth * 220;
      const kids = node.collapsed ? [] : node.children || [];
      if (!kids.length) { node.y = row++ * 34; }
      else { kids.forEach((kid) => place(kid, depth + 1)); node.y = (kids[0].y + kids[kids.length - 1].y) / 2; }
    };
    place(root, 0);
    const paint = (node) => {
      for (const kid of node.collapsed ? [] : node.children || []) {
        layer.append(svg("path", { d: `M${node.x + 180},${node.y + 12} C${node.x + 200},${node.y + 12} ${kid.x - 20},${kid.y + 12} ${kid.x},${kid.y + 12}` }));
        paint(kid);
      }
      const group = svg("g", { class: `${node.children ? "branch" : "leaf"}${node.collapsed ? " collapsed" : ""}`, transform: `translate(${node.x},${node.y})` });
      group.append(svg("rect", { width: 180, height: 24, rx: 5 }));
      const text = svg("text", { x: 8, y: 16 });
      text.textContent = node.label.length > 26 ? node.label.slice(0, 25) + "…" : node.label;
      group.append(text);
      group.addEventListener("click", (event) => {
        event.stopPropagation();
        const source = sources[node.source];
        panel.textContent = source ? `${node.label} — [${source.number}] ${source.path}${source.label ? " · " + source.label : ""}: ${source.snippet}` : node.label;
        if (node.children && node !== root) { node.collapsed = !node.collapsed; draw(); }
      });
      layer.append(group);
    };
    paint(root);
    apply();
  };
  let drag = null;
  canvas.addEventListener("pointerdown", (e) => { drag = { x: e.clientX - view.x, y: e.clientY - view.y }; });
  canvas.addEventListener("pointermove", (e) => { if (drag) { view.x = e.clientX - drag.x; view.y = e.clientY - drag.y; apply(); } });
  canvas.addEventListener("pointerup", () => { drag = null; });
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    view.k = Math.min(3, Math.max(0.3, view.k * (e.deltaY < 0 ? 1.1 : 0.9)));
    apply();
  }, { passive: false });
  draw();
}

// -- dashboard --------------------------------------------------------------------------------
async function loadDashboard() {
  show("dashboard");
  const d = await api("/api/study/dashboard");
  $("dash-figures").replaceChildren(
    el("div", { id: "dash-minutes", text: `${d.study_minutes} min studied` }),
    el("div", { id: "dash-sessions", text: `${d.sessions} sessions` }),
    el("div", { id: "dash-streak", text: `streak ${d.streak.current} (longest ${d.streak.longest})` }),
    el("div", { id: "dash-quizzes", text: `${d.totals.quizzes} quizzes` }),
    el("div", { id: "dash-reviews", text: `${d.totals.reviews} reviews` }));
  $("dash-heatmap").replaceChildren(...d.heatmap.map((day) => el("span", {
    class: day.count ? `l${Math.min(3, Math.ceil(day.count / 3))}` : "", title: `${day.date}: ${day.count}` })));
  $("dash-badges").replaceChildren(...d.badges.map((b) => el("li", { class: b.earned ? "earned" : "", title: b.description, "data-badge": b.id, text: b.name })));
}

function route() {
  const hash = location.hash.slice(1) || "hub";
  if (hash.startsWith("material/")) openMaterial(hash.slice(9)).catch((e) => { $("material-title").textContent = e.message; });
  else if (hash === "dashboard") loadDashboard();
  else { show("hub"); loadMaterials(); }
}
window.addEventListener("hashchange", route);
route();
