// Mounts the shipped plugin's views in a page, with the stand-in `obsidian` module, so a browser
// can render them (tests/test_obsidian_views.py). The plugin asks vaultseek through this page's
// own origin (/vs/…), which the test's server passes on to a real `vaultseek serve`.
"use strict";

async function loadCommonJs(url, requireFn) {
  const source = await (await fetch(url)).text();
  const module = { exports: {} };
  new Function("module", "exports", "require", source)(module, module.exports, requireFn);
  return module.exports;
}

window.harness = (async () => {
  const obsidian = await loadCommonJs("/standin/obsidian.cjs", () => { throw new Error("no require in the stand-in"); });
  const bundle = await loadCommonJs("/plugin/main.js", (name) => {
    if (name === "obsidian") return obsidian;
    throw new Error(`Cannot find module '${name}'`); // no Node here: the plugin uses fetch
  });
  const workspaceEl = document.getElementById("workspace");

  async function start({ files, token, serverUrl, active, basePath }) {
    const app = new obsidian.App({ files, basePath: basePath || "/vault" });
    app.statusBarEl = document.getElementById("status-bar");
    app.rootEl = null;
    app.rightEl = workspaceEl;
    app.data = { serverUrl: serverUrl || `${location.origin}/vs`, token: token || "" };
    const plugin = new bundle.default(app, { id: "vaultseek", version: "0.1.0" });
    await plugin.onload();
    if (active) {
      const note = workspaceEl.createDiv({ cls: "note-pane" });
      note.setText(files[active]);
      await app.workspace.getLeaf(false).openFile(app.vault.getAbstractFileByPath(active));
      app.opened.length = 0;
    }
    app.workspace.ready();
    return { app, plugin, obsidian, internals: bundle.internals };
  }

  return { start, obsidian, internals: bundle.internals };
})();
