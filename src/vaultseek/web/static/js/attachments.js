// Images, files and voice in the chat composer (the contract: mountAttachments(composer,
// {api, toast}) -> {ids(), clear(), onChange(fn), element}).
//
// Attach with the paperclip button, by dropping files on the composer, or by pasting an image. Each file
// is uploaded at once (POST /api/attachments) and shown as a chip: an image with its thumbnail,
// a document with the number of passages read from it and a button that adds it to the
// knowledge base. Before a question with images is sent, the chosen model is checked
// (GET /api/models): one that cannot see stops the question with a warning.
//
// The microphone button records with MediaRecorder, turns the recording into 16 kHz mono WAV in the page
// (what whisper.cpp's server reads) and posts it to /api/transcribe, which forwards it to the
// transcription server on this machine; the text lands in the question box. The browser's own
// speech recognition is never used: it sends the audio to a cloud service.

const MAX_RECORDING_SECONDS = 120;
const RATE = 16000;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "on") for (const [name, fn] of Object.entries(value)) node.addEventListener(name, fn);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

// Icons drawn as inline SVG (no icon font, and no emoji font needed on the machine).
const ICONS = {
  clip: ["M16.5 6.5 8.6 14.4a1.9 1.9 0 0 0 2.7 2.7l7.9-7.9a3.9 3.9 0 0 0-5.5-5.5l-7.9 7.9a5.9 5.9 0 0 0 8.3 8.3l6.1-6.1"],
  mic: ["M12 3a3 3 0 0 1 3 3v5a3 3 0 0 1-6 0V6a3 3 0 0 1 3-3z", "M5.5 11a6.5 6.5 0 0 0 13 0", "M12 17.5V21", "M8.5 21h7"],
  file: ["M6 3h8l4 4v14H6z", "M14 3v4h4", "M9 12h6", "M9 16h6"],
  image: ["M4 5h16v14H4z", "m4 16 5-5 4 4 2-2 5 5", "M15.5 9.5h.01"],
};
function icon(name) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  for (const [key, value] of Object.entries({ viewBox: "0 0 24 24", width: "20", height: "20", fill: "none", stroke: "currentColor",
    "stroke-width": "1.8", "stroke-linecap": "round", "stroke-linejoin": "round", "aria-hidden": "true", focusable: "false" })) svg.setAttribute(key, value);
  for (const d of ICONS[name]) { const path = document.createElementNS(ns, "path"); path.setAttribute("d", d); svg.append(path); }
  return svg;
}

function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function plural(n, one, many) { return `${n} ${n === 1 ? one : many}`; }

export function mountAttachments(composer, { api, toast = () => {} } = {}) {
  const listeners = [];
  const items = [];  // {key, file, kind, status: "uploading"|"ready"|"failed", record, chip, preview}
  let accepted = { images: [".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp"], documents: [], max_image_bytes: 20 * 1024 * 1024, max_document_bytes: 100 * 1024 * 1024 };
  let models = null;  // [{name, vision}] once known
  let speech = null;  // GET /api/transcribe
  let recorder = null;
  let counter = 0;

  const input = el("input", { type: "file", multiple: true, class: "visually-hidden", tabindex: "-1", "aria-hidden": "true" });
  const attachButton = el("button", { type: "button", class: "icon attach-button", "aria-label": "Attach images or files", title: "Attach images or files (or drop them here, or paste an image)" }, icon("clip"));
  const micButton = el("button", { type: "button", class: "icon mic-button", "aria-label": "Record your question", "aria-pressed": "false", title: "Checking voice input…" }, icon("mic"));
  const tools = el("span", { class: "attach-tools" }, attachButton, micButton, input);
  const chips = el("ul", { class: "attach-chips", "aria-label": "Attached files" });
  const warning = el("p", { class: "notice warn attach-warning", role: "alert", hidden: true });
  const voice = el("p", { class: "attach-voice muted", "aria-live": "polite", hidden: true });
  const element = el("div", { class: "attachments" }, chips, warning, voice);

  // The tools sit in the composer's option bar when it has one (beside the model picker).
  const bar = composer.querySelector(".composer-options");
  if (bar) bar.prepend(tools); else element.prepend(tools);

  const question = () => composer.querySelector("textarea[name=question]");
  const modelSelect = () => composer.querySelector("select.model-select, select[name=model]");
  const changed = () => { render(); for (const fn of listeners) fn(ids()); };

  // ---- what the server takes ------------------------------------------------------------
  api("/api/attachments").then((data) => {
    if (data) accepted = data;
    input.accept = [...accepted.images, ...accepted.documents].join(",");
  }).catch(() => {});
  loadModels();
  api("/api/transcribe").then((data) => { speech = data; renderMic(); })
    .catch(() => { speech = { available: false, hint: "this server cannot transcribe speech" }; renderMic(); });

  async function loadModels() {
    try { models = (await api("/api/models"))?.models || null; } catch { models = null; }
    render();
  }

  function chosenModel() {
    const select = modelSelect();
    return (select && (select.value || select.dataset.current)) || null;
  }

  function canSee(name) {
    if (!models || !name) return null;
    const found = models.find((m) => m.name === name || m.name === `${name}:latest` || `${m.name}:latest` === name);
    return found ? found.vision : null;
  }

  // ---- attaching ------------------------------------------------------------------------
  function kindOf(file) {
    const dot = file.name.lastIndexOf(".");
    const suffix = dot >= 0 ? file.name.slice(dot).toLowerCase() : "";
    if (accepted.images.includes(suffix) || (!suffix && file.type.startsWith("image/"))) return "image";
    if (!accepted.documents.length || accepted.documents.includes(suffix)) return "document";
    return null;
  }

  function add(files) {
    for (const original of files) {
      let file = original;
      if (!file.name || file.name === "image.png") {  // a pasted screenshot has no useful name
        const type = (file.type.split("/")[1] || "png").replace("jpeg", "jpg");
        file = new File([file], `pasted-${new Date().toISOString().slice(0, 19).replace(/[:T]/g, "-")}.${type}`, { type: file.type });
      }
      const kind = kindOf(file);
      const item = { key: ++counter, file, kind: kind || "document", status: "uploading", record: null, error: null, preview: null };
      items.push(item);
      if (!kind) { fail(item, `${file.name} is not a type the chat reads`, "attach an image or a document (PDF, Word, PowerPoint, Excel, CSV, HTML, text)"); continue; }
      const limit = kind === "image" ? accepted.max_image_bytes : accepted.max_document_bytes;
      if (limit && file.size > limit) { fail(item, `${file.name} is larger than the ${size(limit)} limit`, "attach a smaller file"); continue; }
      if (kind === "image") item.preview = URL.createObjectURL(file);
      upload(item);
    }
    changed();
  }

  function fail(item, message, hint) {
    item.status = "failed";
    item.error = { message, hint };
    toast(hint ? `${message} — ${hint}` : message, { kind: "error" });
  }

  async function upload(item) {
    const form = new FormData();
    form.append("file", item.file, item.file.name);
    try {
      item.record = await api("/api/attachments", { method: "POST", body: form });
      item.status = "ready";
    } catch (error) {
      fail(item, error.message || "the upload failed", error.hint);
    }
    changed();
  }

  async function remove(item) {
    const at = items.indexOf(item);
    if (at >= 0) items.splice(at, 1);
    if (item.preview) URL.revokeObjectURL(item.preview);
    if (item.record) api(`/api/attachments/${encodeURIComponent(item.record.id)}`, { method: "DELETE" }).catch(() => {});
    changed();
  }

  // onConflict: null first; "replace" or "keep_both" once the user has chosen (the knowledge
  // base answers 409 for a name it has).
  async function addToLibrary(item, button, onConflict = null) {
    button.disabled = true;
    try {
      const json = onConflict ? { on_conflict: onConflict } : {};
      const filed = await api(`/api/attachments/${encodeURIComponent(item.record.id)}/add-to-library`, { method: "POST", json });
      item.conflict = false;
      if (filed.status === "duplicate") {
        item.filed = filed.duplicate_of;
        toast(`${item.file.name} is in the knowledge base already, as ${filed.duplicate_of}`);
      } else {
        item.filed = filed.path;
        toast(`${item.file.name} was added to the knowledge base as ${filed.path}; it is being indexed`);
      }
    } catch (error) {
      button.disabled = false;
      if (error.status === 409) item.conflict = true;
      else toast(`${error.message}${error.hint ? ` — ${error.hint}` : ""}`, { kind: "error" });
    }
    changed();
  }

  // ---- drawing --------------------------------------------------------------------------
  function chipFor(item) {
    const name = item.file.name;
    const chip = el("li", { class: `attach-chip ${item.kind} ${item.status}`, title: name });
    if (item.preview) chip.append(el("img", { class: "attach-thumb", src: item.preview, alt: "" }));
    else chip.append(el("span", { class: "attach-icon", "aria-hidden": "true" }, icon(item.kind === "image" ? "image" : "file")));
    const label = el("span", { class: "attach-label" }, el("span", { class: "attach-name" }, name));
    let detail = size(item.file.size);
    if (item.status === "uploading") detail = item.kind === "document" ? "reading…" : "uploading…";
    else if (item.status === "failed") detail = item.error.message;
    else if (item.kind === "document") detail = `${plural(item.record.chunks ?? 0, "passage", "passages")} · this chat only`;
    else if (item.record?.width) detail = `${item.record.width}×${item.record.height} · metadata removed`;
    label.append(el("small", { class: "attach-detail" }, detail));
    chip.append(label);
    if (item.status === "ready" && item.kind === "document") {
      if (item.filed) chip.append(el("small", { class: "attach-filed" }, "in the knowledge base"));
      else if (item.conflict) {
        const choice = el("span", { class: "attach-conflict" }, el("small", {}, "A file of this name is there:"));
        for (const [value, text] of [["replace", "Replace it"], ["keep_both", "Keep both"]]) {
          const button = el("button", { type: "button", class: "ghost small attach-library" }, text);
          button.addEventListener("click", () => addToLibrary(item, button, value));
          choice.append(button);
        }
        chip.append(choice);
      } else {
        const button = el("button", { type: "button", class: "ghost small attach-library", title: "Add this file to the knowledge base, for every chat" }, "Add to knowledge base");
        button.addEventListener("click", () => addToLibrary(item, button));
        chip.append(button);
      }
    }
    chip.append(el("button", { type: "button", class: "icon attach-remove", "aria-label": `Remove ${name}`, on: { click: () => remove(item) } }, "✕"));
    return chip;
  }

  function render() {
    chips.replaceChildren(...items.map(chipFor));
    chips.hidden = items.length === 0;
    const images = items.filter((i) => i.kind === "image" && i.status !== "failed");
    const model = chosenModel();
    if (images.length && canSee(model) === false) {
      warning.hidden = false;
      warning.replaceChildren(
        el("strong", {}, `${model} cannot see images.`),
        " Choose a vision model in the model list, or remove the ", images.length === 1 ? "image" : "images", " before asking.");
    } else {
      warning.hidden = true;
      warning.replaceChildren();
    }
    element.hidden = chips.hidden && warning.hidden && voice.hidden;
  }

  function renderMic() {
    const available = speech?.available;
    micButton.setAttribute("aria-disabled", available ? "false" : "true");
    micButton.classList.toggle("unavailable", !available);
    micButton.title = available
      ? `Record your question (transcribed ${speech.engine === "pocketsphinx" ? "inside vaultseek" : "by the speech server on this machine"})`
      : `Voice input is off: ${speech?.hint || "no transcription server is configured"}`;
  }

  function say(text) {
    voice.hidden = !text;
    voice.textContent = text || "";
    render();
  }

  // ---- voice ----------------------------------------------------------------------------
  async function toggleRecording() {
    if (recorder) { recorder.stop(); return; }
    if (!speech?.available) {
      say(`Voice input is off. To turn it on: ${speech?.hint || "configure a transcription server"}.`);
      return;
    }
    if (!navigator.mediaDevices?.getUserMedia || typeof MediaRecorder === "undefined") {
      say("This browser cannot record audio here.");
      return;
    }
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch (error) {
      say(`The microphone could not be opened (${error.name}): allow it for this page and try again.`);
      return;
    }
    const pieces = [];
    const started = Date.now();
    recorder = new MediaRecorder(stream);
    recorder.addEventListener("dataavailable", (event) => { if (event.data.size) pieces.push(event.data); });
    const ticker = setInterval(() => {
      const seconds = Math.round((Date.now() - started) / 1000);
      say(`Recording… ${seconds} s (press the microphone again to stop)`);
      if (seconds >= MAX_RECORDING_SECONDS) recorder?.stop();
    }, 500);
    recorder.addEventListener("stop", async () => {
      clearInterval(ticker);
      for (const track of stream.getTracks()) track.stop();
      const type = recorder.mimeType || "audio/webm";
      recorder = null;
      micButton.setAttribute("aria-pressed", "false");
      micButton.classList.remove("recording");
      await transcribe(new Blob(pieces, { type }));
    });
    recorder.start(250);
    micButton.setAttribute("aria-pressed", "true");
    micButton.classList.add("recording");
    say("Recording… (press the microphone again to stop)");
  }

  async function transcribe(blob) {
    say("Transcribing on this machine…");
    micButton.disabled = true;
    try {
      let body = blob;
      let type = blob.type.split(";")[0] || "audio/webm";
      try {
        body = await toWav(blob);
        type = "audio/wav";
      } catch { /* the server forwards the recording as it is */ }
      const response = await fetch("/api/transcribe", { method: "POST", credentials: "same-origin", headers: { "Content-Type": type }, body });
      const data = await response.json().catch(() => ({}));
      if (!response.ok) {
        const error = data.error || {};
        say(`${error.message || `HTTP ${response.status}`}${error.hint ? ` — ${error.hint}` : ""}`);
        return;
      }
      const text = (data.text || "").trim();
      if (!text) { say("Nothing was heard. Try again, a little closer to the microphone."); return; }
      const box = question();
      if (box) {
        box.value = box.value.trim() ? `${box.value.trimEnd()} ${text}` : text;
        box.dispatchEvent(new Event("input", { bubbles: true }));
        box.focus();
      }
      say("");
    } catch (error) {
      say(`The recording could not be transcribed: ${error.message}`);
    } finally {
      micButton.disabled = false;
    }
  }

  // ---- events ---------------------------------------------------------------------------
  attachButton.addEventListener("click", () => input.click());
  input.addEventListener("change", () => { add([...input.files]); input.value = ""; });
  micButton.addEventListener("click", toggleRecording);
  let depth = 0;
  composer.addEventListener("dragenter", (event) => {
    if (![...(event.dataTransfer?.types || [])].includes("Files")) return;
    depth += 1;
    composer.classList.add("drop-target");
  });
  composer.addEventListener("dragleave", () => { depth = Math.max(0, depth - 1); if (!depth) composer.classList.remove("drop-target"); });
  composer.addEventListener("dragover", (event) => { if ([...(event.dataTransfer?.types || [])].includes("Files")) event.preventDefault(); });
  composer.addEventListener("drop", (event) => {
    depth = 0;
    composer.classList.remove("drop-target");
    const files = [...(event.dataTransfer?.files || [])];
    if (!files.length) return;
    event.preventDefault();
    add(files);
  });
  composer.addEventListener("paste", (event) => {
    const files = [...(event.clipboardData?.files || [])];
    if (!files.length) return;  // text pastes as usual
    event.preventDefault();
    add(files);
  });
  composer.addEventListener("change", (event) => { if (event.target === modelSelect()) render(); });
  // Checked before the chat's own submit handler (capture runs first on the form itself).
  composer.addEventListener("submit", (event) => {
    const block = (message) => { event.preventDefault(); event.stopImmediatePropagation(); toast(message, { kind: "error" }); };
    if (items.some((i) => i.status === "uploading")) { block("Wait a moment: the attachments are still uploading."); return; }
    const images = items.filter((i) => i.kind === "image" && i.status === "ready");
    const model = chosenModel();
    if (images.length && canSee(model) === false) {
      render();
      block(`${model} cannot see images: choose a vision model, or remove the images.`);
    }
  }, { capture: true });

  render();

  function ids() { return items.filter((i) => i.status === "ready").map((i) => i.record.id); }

  return {
    element,
    ids,
    clear() {
      for (const item of items) if (item.preview) URL.revokeObjectURL(item.preview);
      items.length = 0;  // sent: they belong to the conversation now, nothing is deleted
      changed();
    },
    onChange(fn) { listeners.push(fn); },
    refreshModels: loadModels,
  };
}

// ---- audio --------------------------------------------------------------------------------
// A recording (WebM/Opus from MediaRecorder) decoded by the browser and written as 16 kHz mono
// 16-bit PCM WAV.
async function toWav(blob) {
  const Context = window.AudioContext || window.webkitAudioContext;
  const context = new Context();
  let decoded;
  try {
    decoded = await context.decodeAudioData(await blob.arrayBuffer());
  } finally {
    context.close();
  }
  const frames = Math.max(1, Math.ceil(decoded.duration * RATE));
  const offline = new OfflineAudioContext(1, frames, RATE);
  const source = offline.createBufferSource();
  source.buffer = decoded;
  source.connect(offline.destination);
  source.start();
  const rendered = await offline.startRendering();
  const samples = rendered.getChannelData(0);
  const buffer = new ArrayBuffer(44 + samples.length * 2);
  const view = new DataView(buffer);
  const text = (at, value) => { for (let i = 0; i < value.length; i++) view.setUint8(at + i, value.charCodeAt(i)); };
  text(0, "RIFF"); view.setUint32(4, 36 + samples.length * 2, true); text(8, "WAVE");
  text(12, "fmt "); view.setUint32(16, 16, true); view.setUint16(20, 1, true); view.setUint16(22, 1, true);
  view.setUint32(24, RATE, true); view.setUint32(28, RATE * 2, true); view.setUint16(32, 2, true); view.setUint16(34, 16, true);
  text(36, "data"); view.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, samples[i]));
    view.setInt16(44 + i * 2, s < 0 ? s * 0x8000 : s * 0x7fff, true);
  }
  return new Blob([buffer], { type: "audio/wav" });
}
