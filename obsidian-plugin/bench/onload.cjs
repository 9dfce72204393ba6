// What the plugin costs Obsidian's start-up: require main.js fresh (read, parse, run its top
// level) and run its onload with the stand-in app, against an empty plugin done the same way,
// alternating, in one process. Prints JSON: milliseconds per run for each.
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { main } = require("../test/bundle.cjs");
const obsidian = require("obsidian");

const runs = Number(process.argv[2] || 200);
const empty = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "vs-empty-plugin-")), "main.js");
fs.writeFileSync(empty, '"use strict";\nconst { Plugin } = require("obsidian");\nclass EmptyPlugin extends Plugin { async onload() {} }\nmodule.exports = { default: EmptyPlugin };\n');

async function loadOnce(file) {
  delete require.cache[require.resolve(file)];
  const app = new obsidian.App({ files: { "a.md": "# A\n" }, basePath: "/vault" });
  const started = process.hrtime.bigint();
  const Plugin = require(file).default;
  const plugin = new Plugin(app, { id: "x", version: "0" });
  await plugin.onload();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  plugin.unload();
  return ms;
}

(async () => {
  const result = { plugin: [], empty: [] };
  for (let n = 0; n < runs; n++) {
    result.plugin.push(await loadOnce(main));
    result.empty.push(await loadOnce(empty));
  }
  fs.rmSync(path.dirname(empty), { recursive: true, force: true });
  process.stdout.write(JSON.stringify(result));
})();
