// Markdown (GFM: tables, code, lists) to elements safe to insert: the vendored renderer (marked)
// turns it into HTML with raw HTML escaped, the vendored sanitiser (DOMPurify) removes anything
// that could run or load, and links open in a new tab. The pages that show Markdown import this
// module; ui.js's side panel loads it when it first shows a passage.

import { Marked } from "../vendor/marked.esm.js";
import DOMPurify from "../vendor/purify.es.js";
import { el } from "./ui.js";

const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

const markdown = new Marked({ gfm: true, breaks: false, async: false });
markdown.use({
  renderer: {
    // Raw HTML in the Markdown is shown as the text it is, never parsed.
    html(token) { return escapeHtml(token.text || token.raw || ""); },
    // Images are not loaded (they could come from anywhere): shown as a link with their alt text.
    image(token) {
      const label = escapeHtml(token.text || token.href || "image");
      return /^https?:/i.test(token.href || "") ? `<a href="${escapeHtml(token.href)}">[image: ${label}]</a>` : `[image: ${label}]`;
    },
  },
});

const SANITISE = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ["style", "img", "svg", "math", "form", "input", "button", "textarea", "select", "option", "iframe", "video", "audio", "source", "picture", "link", "meta", "base"],
  FORBID_ATTR: ["style", "class", "id", "name", "srcset", "action", "formaction"],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#)/i,
  RETURN_DOM_FRAGMENT: true,
};
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    if (node.getAttribute("href")?.startsWith("#")) { node.removeAttribute("href"); return; }
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

// Markdown (GFM: tables, code, lists) → a <div class="markdown"> safe to insert.
export function renderMarkdown(text) {
  const html = markdown.parse(String(text ?? ""));
  const box = el("div", { class: "markdown" });
  box.append(DOMPurify.sanitize(html, SANITISE));
  for (const table of box.querySelectorAll("table")) {
    const wrap = el("div", { class: "table-wrap" });
    table.replaceWith(wrap);
    wrap.append(table);
  }
  return box;
}

