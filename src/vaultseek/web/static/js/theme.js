// Applies the remembered theme before the page is drawn (a classic script in <head>, so the
// page never flashes the other theme). The toggle in the header (shell.js) changes it.
(function () {
  try {
    var theme = JSON.parse(localStorage.getItem("vaultseek.theme") || "null");
    if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
  } catch (e) { /* no storage: follow the system's setting */ }
})();
