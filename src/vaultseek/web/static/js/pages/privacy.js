// Privacy: what the app keeps on this machine, what it sends to the model server (and to a
// transcription server or an embedding server, if one is set), and the server process's live
// network connections, checked on demand.

import { api, el, plural } from "../ui.js";
import { renderMarkdown } from "../markdown.js";

export const title = "Privacy";

const parts = {};

export async function mount(root) {
  parts.body = el("div", { class: "privacy", "aria-busy": "true" }, el("p", { class: "muted" }, "Checking…"));
  parts.refresh = el("button", { type: "button", class: "secondary", on: { click: load } }, "Check again");
  parts.checked = el("span", { class: "muted small", role: "status", "aria-live": "polite" });
  root.append(
    el("div", { class: "page-header" }, el("h1", {}, "Privacy"), el("div", { class: "privacy-actions" }, parts.checked, parts.refresh)),
    parts.body);
}

export function show() { load(); }

function card(heading, ...children) {
  return el("section", { class: "card" }, el("h2", {}, heading), ...children);
}

function connectionsTable(network) {
  const rows = network.connections.map((c) => el("tr", {},
    el("td", { class: c.kind === "other" ? "other" : null }, c.kind),
    el("td", {}, (c.local || []).join(":")),
    el("td", {}, (c.remote || []).join(":")),
    el("td", {}, c.state)));
  return el("div", { class: "table-wrap" }, el("table", { class: "connections" },
    el("caption", { class: "visually-hidden" }, "Live network connections of the server process"),
    el("thead", {}, el("tr", {}, ...["Kind", "Local", "Remote", "State"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, rows)));
}

async function load() {
  parts.refresh.disabled = true;
  parts.body.setAttribute("aria-busy", "true");
  try {
    const p = await api("/api/privacy");
    const network = p.network || { supported: false, connections: [] };
    const verdict = !network.supported
      ? el("p", { class: "notice net-verdict" }, "The live connection check needs Linux (/proc); it cannot run here.")
      : network.ok
        ? el("p", { class: "notice ok net-verdict net-ok" }, "Only browsers on this machine and the model server are connected.")
        : el("p", { class: "notice error net-verdict net-other", role: "alert" }, "Connections to other hosts were found (marked red below).");
    const media = p.media || null;
    const speech = media?.transcription || null;
    parts.body.replaceChildren(...[
      card("On this machine",
        el("dl", { class: "facts" },
          el("dt", {}, "Knowledge base"), el("dd", {}, `${plural(p.documents, "document", "documents")}, ${plural(p.notes, "note", "notes")}, ${plural(p.chunks, "passage", "passages")}`),
          el("dt", {}, "Telemetry"), el("dd", {}, p.telemetry)),
        el("ul", {},
          el("li", {}, "The index, your conversations and study progress are files beside the index, readable by your user only."),
          el("li", {}, "Passwords, API keys and other credentials are removed from notes before they are indexed, and from your questions before they are saved or sent."),
          el("li", {}, "The page's code and libraries come from this server; nothing is loaded from the internet."))),
      card("Sent to the model server",
        el("dl", { class: "facts" },
          el("dt", {}, "Server"), el("dd", {}, p.llm.url),
          el("dt", {}, "Kind"), el("dd", {}, p.llm.backend === "ollama" ? "Ollama" : "OpenAI-compatible"),
          el("dt", {}, "Model"), el("dd", {}, p.llm.model)),
        el("ul", {},
          el("li", {}, "Your question (after credentials are removed) and the last few turns of the conversation."),
          el("li", {}, "The passages of your documents that passed the relevance threshold, numbered for citation."),
          media ? el("li", {}, `Images: ${media.images}.`) : null,
          media ? el("li", {}, `Attached files: ${media.files}.`) : null)),
      p.deep?.url ? card("Sent to the embedding server",
        el("dl", { class: "facts" },
          el("dt", {}, "Server"), el("dd", {}, p.deep.url),
          el("dt", {}, "Model"), el("dd", {}, p.deep.model)),
        el("p", {}, `${p.deep.where.charAt(0).toUpperCase()}${p.deep.where.slice(1)}.`)) : null,
      media ? card("Voice input",
        el("p", {}, `Audio: ${media.audio}.`),
        speech ? el("dl", { class: "facts" },
          el("dt", {}, "Transcribed"), el("dd", {}, speech.where || "—"),
          speech.engine ? el("dt", {}, "Engine") : null, speech.engine ? el("dd", {}, speech.engine) : null,
          speech.url ? el("dt", {}, "Server") : null, speech.url ? el("dd", {}, speech.url) : null,
          speech.model ? el("dt", {}, "Model") : null, speech.model ? el("dd", {}, speech.model) : null) : null,
        speech?.hint ? el("div", { class: "muted small" }, renderMarkdown(speech.hint)) : null) : null,
      el("section", { class: "card wide" }, el("h2", {}, "Live network connections"), verdict, connectionsTable(network)),
    ].filter(Boolean));  // replaceChildren would show a card left out as the text "null"
    parts.checked.textContent = `Checked at ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    parts.body.replaceChildren(el("p", { class: "notice error", role: "alert" }, error.message, el("small", {}, error.hint)));
  } finally {
    parts.refresh.disabled = false;
    parts.body.setAttribute("aria-busy", "false");
  }
}
