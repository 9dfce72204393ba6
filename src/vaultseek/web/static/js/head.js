// The page's one classic script, run in <head> before anything is drawn. It applies the
// remembered theme (so the page never flashes the other one; the header's toggle in shell.js
// changes it), and it asks for the modules of the section the page opens on (the hash's, or
// the one remembered from the last visit, as shell.js chooses) as module preloads, so they
// load beside the shell's own modules instead of after them. MODULES follows shell.js's ROUTES
// and each page's imports.
(function () {
  var MARKDOWN = ["markdown.js", "../vendor/marked.esm.js", "../vendor/purify.es.js"];
  var MODULES = {
    chat: ["pages/chat.js", "attachments.js"].concat(MARKDOWN),
    kb: ["pages/library.js"],
    search: ["pages/search.js"],
    map: ["pages/map.js", "mapview.js"],
    hub: ["pages/hub.js"].concat(MARKDOWN),
    dashboard: ["pages/dashboard.js"],
    privacy: ["pages/privacy.js"].concat(MARKDOWN),
  };
  function recall(key) {
    try { return JSON.parse(localStorage.getItem("vaultseek." + key) || "null"); } catch (e) { return null; }
  }
  function section(text) {
    try { text = decodeURIComponent(String(text || "").replace(/^#/, "")); } catch (e) { return null; }
    var name = text.split("/")[0];
    return Object.prototype.hasOwnProperty.call(MODULES, name) ? name : null;
  }
  var theme = recall("theme");
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
  var opening = section(location.hash) || section(recall("section")) || "chat";
  var here = document.currentScript && document.currentScript.src;
  if (!here) return;
  MODULES[opening].forEach(function (path) {
    var link = document.createElement("link");
    link.rel = "modulepreload";
    link.href = new URL(path, here).href;
    document.head.appendChild(link);
  });
})();
