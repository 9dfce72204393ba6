// The plugin's logic, run from the shipped bundle against the stand-in `obsidian` module.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const net = require("node:net");
const http = require("node:http");
const { Plugin, internals: I, obsidian } = require("./bundle.cjs");

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function deadUrl() {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(`http://127.0.0.1:${port}`));
    });
  });
}

/** A transport that answers from a table and records what was asked. */
function fakeTransport(answers) {
  const asked = [];
  return {
    asked,
    async send(method, url, headers, options = {}) {
      asked.push({ method, url, headers, body: options.body });
      const path = new URL(url).pathname;
      const answer = answers[path];
      if (answer === undefined) return { status: 404, headers: {}, body: JSON.stringify({ error: { code: "not_found", message: "Not Found" } }) };
      if (answer instanceof Error) throw answer;
      const reply = typeof answer === "function" ? answer(url, options) : answer;
      return { status: reply.status ?? 200, headers: {}, body: typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body) };
    },
  };
}

function clientWith(answers, settings = {}) {
  const transport = fakeTransport(answers);
  const client = new I.VaultseekClient(() => ({ serverUrl: "http://127.0.0.1:8765", token: "t0ken-t0ken-t0ken", autoStart: false, ...settings }), transport, () => "/home/me/vault");
  return { client, transport };
}

test("Obsidian's search habits become vaultseek's query syntax", () => {
  assert.equal(I.readQuery("tag:#work sync").query, "tag:work sync");
  assert.equal(I.readQuery('content:"refresh token" rotation').query, '"refresh token" rotation');
  assert.equal(I.readQuery("line:(starter flour) section:baking").query, "starter flour baking");
  assert.equal(I.readQuery("modified:>2w notes").query, "after:2w notes");
  assert.equal(I.readQuery("modified:<2026-01 notes").query, "before:2026-01 notes");
  assert.equal(I.readQuery("ext:pdf lease").query, "kind:pdf lease");
  assert.equal(I.readQuery("path:projects/ #alpha kind:pdf after:30d plan").query, "path:projects/ #alpha kind:pdf after:30d plan");
});

test("the words marked in an opened note leave operators and exclusions out", () => {
  assert.deepEqual(I.readQuery('"refresh token" rotation -android tag:security #auth path:x termin* [status:done]').marks, ["refresh token", "rotation", "termin"]);
  assert.deepEqual(I.markRanges("Rotation: rotate the ROTATION keys", ["rotation"]), [[0, 8], [21, 29]]);
  assert.deepEqual(I.markRuns("feed the starter", ["starter"]), [{ text: "feed the ", marked: false }, { text: "starter", marked: true }]);
  assert.deepEqual(I.markRuns("a.b(c)", ["b("]), [{ text: "a.", marked: false }, { text: "b(", marked: true }, { text: "c)", marked: false }]);
});

test("a burst of keystrokes is one search, and every caller gets its answer", async () => {
  const runs = [];
  const debounced = new I.Debounced(async (q) => { runs.push(q); return `rows for ${q}`; }, 30);
  const answers = await Promise.all(["s", "st", "sta", "star"].map((q) => debounced.call(q)));
  assert.deepEqual(runs, ["star"]);
  assert.deepEqual(answers, Array(4).fill("rows for star"));
});

test("an answer to an older query is never shown after a newer one was sent", async () => {
  const release = {};
  const debounced = new I.Debounced((q) => new Promise((resolve) => (release[q] = () => resolve(`rows for ${q}`))), 5);
  const old = debounced.call("sta");
  await sleep(20); // "sta" is asked
  const fresh = debounced.call("start");
  await sleep(20); // "start" is asked
  release.sta(); // the older answer arrives first
  await sleep(5);
  release.start();
  assert.equal(await old, "rows for start");
  assert.equal(await fresh, "rows for start");
});

test("error replies become problems a person can act on", () => {
  const reply = (status, error) => ({ status, headers: {}, body: JSON.stringify({ error }) });
  assert.equal(I.problemOf(reply(401, { code: "unauthorised" })).kind, "token");
  assert.match(I.problemOf(reply(401, {})).hint, /--token-file/);
  assert.equal(I.problemOf(reply(429, { hint: "wait" })).title, "Too many wrong tokens");
  const bad = I.problemOf(reply(400, { code: "bad_query", message: "unknown kind 'zzz'", hint: "kinds are: note, pdf" }));
  assert.deepEqual([bad.kind, bad.message, bad.hint], ["bad-query", "unknown kind 'zzz'", "kinds are: note, pdf"]);
  assert.equal(I.problemOf(reply(404, { message: "no note x.md" })).kind, "not-indexed");
  assert.equal(I.problemOf({ status: 502, headers: {}, body: "<html>bad gateway</html>" }).kind, "server");
});

test("the client sends the token and reads the search", async () => {
  const { client, transport } = clientWith({ "/api/search": { body: { query: "x", results: [], notices: [], no_match: false, parsed: null } } });
  await client.search("tag:work plan", 12);
  assert.equal(transport.asked[0].headers.Authorization, "Bearer t0ken-t0ken-t0ken");
  assert.equal(new URL(transport.asked[0].url).searchParams.get("q"), "tag:work plan");
});

test("a server that is down is said with the command that starts it", async () => {
  const client = new I.VaultseekClient(() => ({ serverUrl: "http://127.0.0.1:9911", token: "", autoStart: false }), new I.NodeTransport(http), () => "/home/me/My Vault");
  const url = await deadUrl();
  const down = new I.VaultseekClient(() => ({ serverUrl: url, token: "", autoStart: false }), new I.NodeTransport(http), () => "/home/me/My Vault");
  await assert.rejects(down.search("x", 5), (error) => {
    assert.equal(error.problem.kind, "down");
    assert.match(error.problem.hint, /vaultseek serve --vault "\/home\/me\/My Vault" --port \d+ --token-file/);
    return true;
  });
  void client;
});

test("an older vaultseek without /api/index/state still gives the status bar its counts", async () => {
  const { client } = clientWith({ "/api/status": { body: { index: { vault: "/v", files: 3, chunks: 9, last_indexed: null, indexing_error: null } } } });
  const state = await client.indexState();
  assert.deepEqual([state.files, state.indexing, state.deep], [3, false, null]);
});

test("an empty index is its own state", async () => {
  const { client } = clientWith({ "/api/index/state": { body: { vault: "/v", files: 0, chunks: 0, last_indexed: null, indexing: false, indexing_error: null, deep: null } } });
  await assert.rejects(client.readyState(), (error) => error.problem.kind === "no-index");
});

test("the map's missing links are optional: absent route → null", async () => {
  const { client } = clientWith({});
  assert.equal(await client.missingLinks("a.md"), null);
  assert.deepEqual(I.readMissingLinks({ missing_links: [{ a: "a.md", b: "b.md", passage: "both on tokens" }, { path: "c.md", title: "C" }, "d.md", { a: "a.md" }] }, "a.md"), [
    { path: "b.md", title: null, why: "both on tokens" },
    { path: "c.md", title: "C", why: null },
    { path: "d.md", title: null, why: null },
  ]);
  assert.deepEqual(I.readMissingLinks({ clusters: [] }, "a.md"), []);
});

test("the map's missing links as vaultseek answers them: the other note and its passage", () => {
  const answer = { path: "a.md", missing_links: [
    { source: "a.md", target: "b.md", similarity: 0.8, link: "[[b]]",
      source_passage: { chunk_id: 1, heading: "A", text: "here" }, target_passage: { chunk_id: 2, heading: "B", text: "there" } },
  ] };
  assert.deepEqual(I.readMissingLinks(answer, "a.md"), [{ path: "b.md", title: null, why: "there" }]);
});

test("a stream cut anywhere is read line by line", () => {
  const seen = [];
  const reader = new I.LineReader((envelope) => seen.push(envelope));
  const text = '{"type":"text","data":{"text":"Three"}}\n{"type":"text","data":{"text":" months [1]."}}\n{"type":"done","data":{}}';
  for (let at = 0; at < text.length; at += 7) reader.push(text.slice(at, at + 7));
  reader.finish();
  assert.deepEqual(seen.map((e) => e.type), ["text", "text", "done"]);
});

test("chat envelopes build a turn with clickable citations", () => {
  const turn = { question: "q", answer: "", citations: [], problem: null, done: false, stopped: false };
  I.applyEnvelope(turn, { type: "metadata", data: { citations: [{ n: 1, path: "law/tenancy.md", section: "Notice period", page: null, label: "Notice period", snippet: "three months" }] } });
  I.applyEnvelope(turn, { type: "text", data: { text: "Three months [1], not [7]." } });
  const ids = I.applyEnvelope(turn, { type: "done", data: { conversation_id: "c1", stopped: false } });
  assert.equal(ids.conversationId, "c1");
  const runs = I.citationRuns(turn.answer, turn.citations);
  assert.equal(runs.length, 3);
  assert.equal(runs[1].path, "law/tenancy.md");
  assert.equal(runs[2], ", not [7].");
  I.applyEnvelope(turn, { type: "error", data: { message: "the LLM server refused", hint: "start Ollama" } });
  assert.equal(turn.problem.hint, "start Ollama");
});

test("the status bar says freshness, deep progress, or what is wrong", () => {
  const now = Date.parse("2026-12-05T10:00:00Z");
  const state = { vault: "/v", files: 1200, chunks: 5400, last_indexed: "2026-12-05T09:55:00Z", indexing: false, indexing_error: null, deep: { state: "running", chunks: 5400, embedded: 2430 } };
  assert.equal(I.statusText(state, null, now).text, "vaultseek: indexed 5 min ago · deep 45%");
  assert.equal(I.statusText({ ...state, deep: { ...state.deep, state: "complete", embedded: 5400 } }, null, now).text, "vaultseek: indexed 5 min ago");
  assert.equal(I.statusText({ ...state, indexing: true, deep: null }, null, now).text, "vaultseek: indexing…");
  const down = I.serverDown("http://127.0.0.1:8765", "/v", false);
  assert.equal(I.statusText(null, down, now).text, "vaultseek: not running");
  assert.match(I.statusText(null, down, now).tooltip, /vaultseek serve --vault "\/v" --token-file/);
  assert.equal(I.statusText(state, null, now, "/v/").text, "vaultseek: indexed 5 min ago · deep 45%");
  const other = I.statusText(state, null, now, "/home/me/Notes");
  assert.equal(other.text, "vaultseek: serves another vault");
  assert.match(other.tooltip, /serves \/v, not this vault \(\/home\/me\/Notes\)/);
  assert.ok(I.sameFolder("C:\\Users\\Me\\Vault", "c:/users/me/vault/"));
});

test("the server the plugin starts serves this vault where the settings expect it", () => {
  const launch = I.launchOf("/opt/vs/bin/vaultseek", "http://127.0.0.1:8790", " secret-token-123 ", "/home/me/vault");
  assert.equal(launch.command, "/opt/vs/bin/vaultseek");
  assert.deepEqual(launch.args, ["serve", "--vault", "/home/me/vault", "--host", "127.0.0.1", "--port", "8790"]);
  assert.deepEqual(launch.env, { VAULTSEEK_SERVE_TOKEN: "secret-token-123" });
  assert.deepEqual(I.launchOf("python -m vaultseek", "http://localhost:8765", "", "/v").args.slice(0, 3), ["-m", "vaultseek", "serve"]);
});

test("starting the server: a missing program is said, a present one is started and let go", async () => {
  assert.match(await I.startServer({ command: "/nonexistent/bin/vaultseek", args: ["serve"], env: {} }), /`\/nonexistent\/bin\/vaultseek` was not found: install vaultseek, or give its full path in the settings/);
  const marker = require("node:path").join(require("node:os").tmpdir(), `vs-started-${process.pid}`);
  const script = `require("fs").writeFileSync(${JSON.stringify(marker)}, process.env.VAULTSEEK_SERVE_TOKEN)`;
  assert.equal(await I.startServer({ command: process.execPath, args: ["-e", script], env: { VAULTSEEK_SERVE_TOKEN: "tok-123" } }), null);
  for (let i = 0; i < 100 && !require("node:fs").existsSync(marker); i++) await sleep(20);
  assert.equal(require("node:fs").readFileSync(marker, "utf8"), "tok-123"); // the token in its environment
  require("node:fs").rmSync(marker);
});

test("stored settings of the wrong type fall back to the defaults", () => {
  const settings = I.readSettings({ serverUrl: 42, token: "abc", debounceMs: 99999, autoStart: "yes" });
  assert.deepEqual(settings, { ...I.DEFAULT_SETTINGS, token: "abc", debounceMs: 1000 });
  assert.deepEqual(I.readSettings(null), I.DEFAULT_SETTINGS);
});

test("search rows: a note's sections follow it, a renamed note is marked", () => {
  const answer = { results: [{ path: "a.md", title: "A", relevance: 0.8, sections: [{ section: "One", snippet: "x" }, { section: "Two", snippet: "y" }] }, { path: "gone.md", title: "Gone", relevance: 0.5, sections: [{ section: null, snippet: "z" }] }], notices: [], no_match: false };
  const rows = I.rowsOf(answer, ["x"], (path) => path !== "gone.md");
  assert.deepEqual(rows.map((r) => [r.hit.path, r.first, r.gone]), [["a.md", true, false], ["a.md", false, false], ["gone.md", true, true]]);
  assert.equal(I.rowsOf({ results: [], notices: ['no chunk contains "zz"'], no_match: true }, [], () => true)[0].text, 'no chunk contains "zz"');
});

test("search rows: what the search changed is said above the notes, and the words it searched are marked", () => {
  const hit = { path: "a.md", title: "A", relevance: 0.8, sections: [{ section: "One", snippet: "Rotate the signing keys" }] };
  const corrected = 'searched for "signing rotate": no chunk has "rotaet"';
  const noMatch = "nothing in the index matches this well; the closest results are shown";
  const rows = I.rowsOf({ results: [hit], notices: [corrected, noMatch], no_match: true, alternatives: { rotaet: ["rotate"], komprimieren: ["komprimi*"] } }, ["signing", "rotaet"], () => true);
  assert.deepEqual(rows.map((r) => r.kind), ["notice", "notice", "section"]);
  assert.equal(rows[0].text, corrected); // the server's notice, as it said it
  assert.match(rows[1].text, /^Nothing answers this closely/); // said once, in the modal's words
  assert.deepEqual(rows[2].marks, ["signing", "rotaet", "rotate", "komprimi"]);
  assert.deepEqual(I.markRuns(hit.sections[0].snippet, rows[2].marks).filter((run) => run.marked).map((run) => run.text), ["Rotate", "signing"]);
  // an older vaultseek sends no alternatives: the typed words alone
  assert.deepEqual(I.rowsOf({ results: [hit], notices: [], no_match: false }, ["signing"], () => true)[0].marks, ["signing"]);
});

test("a search whose server is down shows the problem as its one row", async () => {
  const session = new I.SearchSession(new I.VaultseekClient(() => ({ serverUrl: "http://127.0.0.1:1", token: "", autoStart: false }), fakeTransport({ "/api/search": new (class extends Error {})() }), () => null), () => true, 0);
  await assert.rejects(session.rows("x")); // a non-transport failure is not hidden
  const { client } = clientWith({ "/api/search": { status: 401, body: { error: { code: "unauthorised" } } } });
  const rows = await new I.SearchSession(client, () => true, 0).rows("plan");
  assert.equal(rows[0].kind, "problem");
  assert.equal(rows[0].problem.kind, "token");
});

function appWith(files) {
  return new obsidian.App({ files, basePath: "/home/me/vault" });
}

test("a hit opens its note at the heading, with the query's words marked", async () => {
  const text = "# Bread\n\n## Feeding the starter\n\nFeed the starter daily.\n";
  const app = appWith({ "cooking/bread.md": text, "docs/lease.pdf": "" });
  assert.equal(await I.openTarget(app, new I.RenameLog(), { path: "cooking/bread.md", section: "Bread > Feeding the starter" }, ["starter"]), true);
  const opened = app.opened.at(-1);
  assert.equal(opened.path, "cooking/bread.md");
  assert.equal(opened.eState.subpath, "#Feeding the starter");
  assert.deepEqual(opened.eState.match.matches.map(([a, b]) => text.slice(a, b)), ["starter", "starter"]);
  assert.equal(app.workspace.activeLeaf.view.editor.getCursor().line, 2);
  await I.openTarget(app, new I.RenameLog(), { path: "docs/lease.pdf", section: null, page: 3 }, []);
  assert.equal(app.opened.at(-1).linktext, "docs/lease.pdf#page=3");
});

test("a note renamed while its results are shown is followed; a deleted one is said", async () => {
  const app = appWith({ "a.md": "# A\n", "b.md": "# B\n" });
  const renames = new I.RenameLog();
  app.vault.on("rename", (file, old) => renames.record(old, file.path));
  await app.vault.rename(app.vault.getAbstractFileByPath("a.md"), "notes/a.md");
  await app.vault.rename(app.vault.getAbstractFileByPath("notes/a.md"), "notes/alpha.md");
  assert.equal(await I.openTarget(app, renames, { path: "a.md" }, []), true);
  assert.equal(app.opened.at(-1).path, "notes/alpha.md");
  await app.vault.delete(app.vault.getAbstractFileByPath("b.md"));
  const before = app.opened.length;
  assert.equal(await I.openTarget(app, renames, { path: "b.md" }, []), false);
  assert.equal(app.opened.length, before);
  assert.match(obsidian.Notice.shown.at(-1), /b\.md was renamed or deleted since these results were shown/);
});

/** The Related pane, open beside `active`, drawn from the server's `answer` to /api/related. */
async function relatedPane(files, active, answer) {
  const app = appWith(files);
  const { client } = clientWith({ "/api/related": { body: answer } });
  await app.workspace.getLeaf(false).openFile(app.vault.getAbstractFileByPath(active));
  const leaf = new obsidian.WorkspaceLeaf(app, null);
  app.viewFactories["vaultseek-related"] = (l) => new I.RelatedView(l, client, new I.RenameLog());
  await leaf.setViewState({ type: "vaultseek-related" });
  return { app, view: leaf.view };
}

/** The elements under `el` (itself included) that have class `cls`, in document order. */
function withClass(el, cls) {
  return [...(el.classes.has(cls) ? [el] : []), ...el.children.flatMap((child) => withClass(child, cls))];
}

/** What the pane shows: the line above the list, and each entry's path, reason, weakness and button. */
function shown(view) {
  const root = view.contentEl;
  const lines = root.children.filter((el) => el.classes.has("vaultseek-nothing-close")).map((el) => el.textContent);
  const list = root.children.find((el) => el.classes.has("vaultseek-list"));
  const entries = list.children.map((entry) => ({
    path: withClass(entry, "vaultseek-path")[0].textContent,
    why: withClass(entry, "vaultseek-why")[0]?.textContent ?? "",
    weak: entry.classes.has("vaultseek-weak"),
    button: entry.children.some((el) => el.tag === "button" && el.textContent === "Link"),
  }));
  const lineFirst = lines.length === 0 || root.children.findIndex((el) => el.classes.has("vaultseek-nothing-close")) < root.children.indexOf(list);
  return { lines, entries, lineFirst };
}

const KUBECTL = { path: "ops/kubectl.md", title: "kubectl", linked: null, shared: [], similarity: 0.48, close: false };
const HELM = { path: "ops/helm.md", title: "helm", linked: null, shared: [], similarity: 0.44, close: false };
const NOTHING_CLOSE_NOTICE = "nothing in the vault is closely related to this note: no links, and no note close in meaning; the nearest notes are shown";

test("the related pane lists why, and one click inserts a link at the cursor", async () => {
  const { app, view } = await relatedPane({ "sourdough.md": "# Sourdough\nFeed it.", "Bread.md": "# Bread\n" }, "sourdough.md",
    { path: "sourdough.md", results: [{ path: "Bread.md", title: "Bread", linked: null, shared: ["food"], similarity: 0.52 }] });
  assert.equal(view.state.path, "sourdough.md");
  assert.equal(view.state.missing, null); // no map on this server: the section is left out
  assert.equal(I.reasonOf(view.state.related[0]), "shares food · 52% alike");
  assert.equal(I.reasonOf({ linked: "from", shared: [], similarity: -0.01 }), "links here · little in common");
  assert.equal(view.insertLink("Bread.md"), true);
  assert.equal(app.workspace.activeLeaf.view.editor.getValue(), "# Sourdough\nFeed it.[[Bread]]");
});

test("a list where nothing is close says so above it, and its notes are drawn weaker, still linkable", async () => {
  const files = { "brot.md": "# Roggenbrot\n", "ops/kubectl.md": "# kubectl\n", "ops/helm.md": "# helm\n" };
  const { app, view } = await relatedPane(files, "brot.md",
    { path: "brot.md", results: [KUBECTL, HELM], notices: [NOTHING_CLOSE_NOTICE], nothing_close: true });
  assert.equal(view.state.nothingClose, true);
  assert.deepEqual(shown(view), {
    lines: ["Nothing closely related: no links, and no note close in meaning. The nearest notes:"],
    entries: [
      { path: "ops/kubectl.md", why: "not close in meaning", weak: true, button: true },
      { path: "ops/helm.md", why: "not close in meaning", weak: true, button: true },
    ],
    lineFirst: true,
  });
  assert.equal(view.insertLink("ops/kubectl.md"), true);
  assert.equal(app.workspace.activeLeaf.view.editor.getValue(), "# Roggenbrot\n[[kubectl]]");
});

test("in a list with close notes, only the one that is not close is marked", async () => {
  const files = { "brot.md": "# Roggenbrot\n", "sauerteig.md": "", "mehl.md": "", "ofen.md": "", "ops/kubectl.md": "" };
  const { view } = await relatedPane(files, "brot.md", { path: "brot.md", nothing_close: false, results: [
    { path: "sauerteig.md", title: "Sauerteig", linked: "from", shared: [], similarity: 0.41, close: true },
    { path: "mehl.md", title: "Mehl", linked: null, shared: [], similarity: 0.74, close: true },
    KUBECTL,
    { path: "ofen.md", title: "Ofen", linked: null, shared: [], similarity: 0.6, close: null },
  ] });
  assert.deepEqual(shown(view), {
    lines: [],
    entries: [
      { path: "sauerteig.md", why: "links here · 41% alike", weak: false, button: true },
      { path: "mehl.md", why: "74% alike", weak: false, button: true },
      { path: "ops/kubectl.md", why: "not close in meaning", weak: true, button: true },
      { path: "ofen.md", why: "60% alike", weak: false, button: true },
    ],
    lineFirst: true,
  });
  // A link is a reason of its own, kept even where the meaning is far.
  assert.equal(I.reasonOf({ ...KUBECTL, linked: "to" }), "linked from this note · not close in meaning");
});

test("an older vaultseek (no close, no nothing_close) is shown as before", async () => {
  const files = { "brot.md": "# Roggenbrot\n", "ops/kubectl.md": "" };
  const { close: _close, ...old } = KUBECTL;
  const { view } = await relatedPane(files, "brot.md", { path: "brot.md", results: [old] });
  assert.equal(view.state.related[0].close, null);
  assert.equal(view.state.nothingClose, false);
  assert.deepEqual(shown(view), { lines: [], entries: [{ path: "ops/kubectl.md", why: "48% alike", weak: false, button: true }], lineFirst: true });
  // An empty list is the empty message, whatever nothing_close says.
  const empty = await relatedPane(files, "brot.md", { path: "brot.md", results: [], nothing_close: true });
  assert.deepEqual(shown(empty.view).lines, []);
  assert.equal(withClass(empty.view.contentEl, "vaultseek-empty")[0].textContent, "Nothing related yet: no links, and no note close in meaning.");
});

test("the related pane says a note is not indexed instead of failing", async () => {
  const app = appWith({ "new.md": "# New\n" });
  const { client } = clientWith({ "/api/related": { status: 404, body: { error: { code: "not_found", message: "no note new.md in the index", hint: "index the vault" } } } });
  const state = await I.loadRelated(client, "new.md");
  assert.equal(state.problem.kind, "not-indexed");
  assert.equal(state.problem.message, "no note new.md in the index");
  void app;
});

test("the plugin loads without asking the server, then shows the server's state", async () => {
  const app = appWith({ "a.md": "# A\n" });
  app.data = { serverUrl: await deadUrl() };
  const plugin = new Plugin(app, { id: "vaultseek", version: "0.1.0" });
  await plugin.onload();
  try {
    await checkLoaded(app);
  } finally {
    plugin.unload();
  }
});

async function checkLoaded(app) {
  assert.deepEqual(Object.keys(app.commands).sort(), ["ask", "reindex", "related-notes", "search"]);
  const status = app.statusBarEl.children[0];
  assert.equal(status.textContent, "vaultseek: …");
  app.workspace.ready();
  for (let i = 0; i < 100 && status.textContent === "vaultseek: …"; i++) await sleep(20);
  assert.equal(status.textContent, "vaultseek: not running");
  assert.match(status.attrs.title, /vaultseek serve --vault "\/home\/me\/vault"/);
}
