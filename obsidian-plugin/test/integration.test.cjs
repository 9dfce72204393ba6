// The plugin's client and views against a real `vaultseek serve` the pytest test started
// (tests/test_obsidian_plugin.py): VAULTSEEK_URL, VAULTSEEK_TOKEN, VAULTSEEK_VAULT, and
// VAULTSEEK_EMPTY_URL (a server on a vault with no notes). Without them this file fails: it is
// only run by that test.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const http = require("node:http");
const net = require("node:net");
const { Plugin, internals: I, obsidian } = require("./bundle.cjs");

const URL_ = process.env.VAULTSEEK_URL;
const TOKEN = process.env.VAULTSEEK_TOKEN;
const VAULT = process.env.VAULTSEEK_VAULT;
const EMPTY = process.env.VAULTSEEK_EMPTY_URL;
if (!URL_ || !TOKEN || !VAULT || !EMPTY) throw new Error("run by tests/test_obsidian_plugin.py, which starts the servers");

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const client = (settings = {}) => new I.VaultseekClient(() => ({ serverUrl: URL_, token: TOKEN, autoStart: false, ...settings }), new I.NodeTransport(http), () => VAULT);

test("search as you type: Obsidian's filters, the right note, its section and marks", async () => {
  const session = new I.SearchSession(client(), () => true, 20);
  const typed = "tag:#law notice period";
  const bursts = [...typed].map((_c, n) => session.rows(typed.slice(0, n + 1)));
  const rows = await bursts.at(-1);
  assert.deepEqual(await Promise.all(bursts), Array(bursts.length).fill(rows)); // one search for the burst
  assert.equal(rows[0].kind, "section");
  assert.equal(rows[0].hit.path, "law/tenancy.md");
  assert.equal(rows[0].section.section, "Notice period");
  assert.deepEqual(rows[0].marks, ["notice", "period"]);
  assert.ok(rows.every((row) => row.kind !== "section" || row.hit.path.startsWith("law/")));
  const bad = await session.search("kind:zzz lease");
  assert.equal(bad[0].kind, "problem");
  assert.equal(bad[0].problem.kind, "bad-query");
  assert.match(bad[0].problem.message, /zzz/);
});

test("a mistyped word: the modal says what was searched, and marks the word searched for it", async () => {
  const rows = await new I.SearchSession(client(), () => true, 0).search("tenancy notice perod");
  assert.equal(rows[0].kind, "notice");
  assert.match(rows[0].text, /no chunk has "perod"/);
  const first = rows.find((row) => row.kind === "section");
  assert.equal(first.hit.path, "law/tenancy.md");
  assert.ok(first.marks.includes("period"), JSON.stringify(first.marks));
  assert.ok(I.markRuns(first.section.snippet, first.marks).some((run) => run.marked && run.text.toLowerCase() === "period"));
});

test("related notes and the map's missing links (absent on this server) for the active note", async () => {
  const found = await I.loadRelated(client(), "cooking/bread.md");
  assert.equal(found.problem, null);
  assert.ok(found.related.some((note) => note.path === "cooking/starter.md" && note.linked), JSON.stringify(found.related));
  const unknown = await I.loadRelated(client(), "cooking/never-written.md");
  assert.equal(unknown.problem.kind, "not-indexed");
});

test("the status bar's state, and a re-index that picks up a new note", async () => {
  const c = client();
  const before = await c.readyState();
  assert.equal(before.vault, VAULT);
  assert.equal(before.indexing, false);
  require("node:fs").writeFileSync(`${VAULT}/cooking/rye.md`, "# Rye\n\nRye bread is dense and sour.\n");
  const after = await c.reindex(true);
  assert.equal(after.files, before.files + 1);
  assert.match(I.statusText(after, null, Date.now()).text, /^vaultseek: indexed just now$/);
  const rows = await new I.SearchSession(c, () => true, 0).search("rye bread dense");
  assert.equal(rows[0].hit.path, "cooking/rye.md");
});

test("a wrong token is said as such, with where the right one is", async () => {
  const rows = await new I.SearchSession(client({ token: "not-the-token-at-all" }), () => true, 0).search("notice");
  assert.equal(rows[0].problem.kind, "token");
  assert.match(rows[0].problem.hint, /--token-file/);
  await assert.rejects(client({ token: "" }).indexState(), (error) => error.problem.kind === "token");
});

test("an empty index is its own state", async () => {
  await assert.rejects(client({ serverUrl: EMPTY }).readyState(), (error) => error.problem.kind === "no-index");
});

test("a server that is down: every surface says how to start it", async () => {
  const dead = await new Promise((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => { const { port } = probe.address(); probe.close(() => resolve(`http://127.0.0.1:${port}`)); });
  });
  const rows = await new I.SearchSession(client({ serverUrl: dead }), () => true, 0).search("notice");
  assert.equal(rows[0].problem.kind, "down");
  assert.match(rows[0].problem.hint, /vaultseek serve --vault ".*" --port \d+ --token-file/);
  const related = await I.loadRelated(client({ serverUrl: dead }), "law/tenancy.md");
  assert.equal(related.problem.kind, "down");
});

test("the plugin, loaded in the stand-in app, shows the real server's state in its status bar", async () => {
  const app = new obsidian.App({ files: { "law/tenancy.md": "# Tenancy\n" }, basePath: VAULT });
  app.data = { serverUrl: URL_, token: TOKEN };
  const plugin = new Plugin(app, { id: "vaultseek", version: "0.1.0" });
  await plugin.onload();
  try {
    app.workspace.ready();
    const status = app.statusBarEl.children[0];
    for (let i = 0; i < 200 && status.textContent === "vaultseek: …"; i++) await sleep(20);
    assert.match(status.textContent, /^vaultseek: indexed (just now|\d+ min ago)$/);
    assert.match(status.attrs.title, /files, \d+ sections in /);
  } finally {
    plugin.unload();
  }
});

test("a server on another vault is said in the status bar, with how to serve this one", async () => {
  const app = new obsidian.App({ files: {}, basePath: "/somewhere/else/Notes" });
  app.data = { serverUrl: URL_, token: TOKEN };
  const plugin = new Plugin(app, { id: "vaultseek", version: "0.1.0" });
  await plugin.onload();
  try {
    app.workspace.ready();
    const status = app.statusBarEl.children[0];
    for (let i = 0; i < 200 && status.textContent === "vaultseek: …"; i++) await sleep(20);
    assert.equal(status.textContent, "vaultseek: serves another vault");
    assert.match(status.attrs.title, /vaultseek serve --vault "\/somewhere\/else\/Notes"/);
  } finally {
    plugin.unload();
  }
});

test("the chat streams an answer whose [n] markers open the cited notes", async () => {
  const seen = [];
  await client().chat({ question: "What is the notice period for a tenancy?", conversation_id: null }, (envelope) => seen.push(envelope));
  const turn = { question: "q", answer: "", citations: [], problem: null, done: false, stopped: false };
  let conversation = null;
  for (const envelope of seen) conversation = I.applyEnvelope(turn, envelope).conversationId ?? conversation;
  assert.equal(turn.problem, null, JSON.stringify(seen).slice(0, 500));
  assert.ok(seen.filter((e) => e.type === "text").length > 1, "streamed in pieces");
  assert.equal(typeof conversation, "string");
  const cited = I.citationRuns(turn.answer, turn.citations).filter((run) => typeof run !== "string");
  assert.ok(cited.length >= 1, turn.answer);
  assert.equal(cited[0].path, "law/tenancy.md");
});
