// "Ask your vault": the study app's chat in a side panel. The answer streams in; its [n]
// markers and the source list under it open the cited note at the cited section or page.

import { ItemView, WorkspaceLeaf } from "obsidian";
import { Citation, Envelope, VaultseekClient } from "./client";
import { openTarget, RenameLog } from "./navigate";
import { Problem, ProblemError } from "./problem";
import { renderProblem } from "./render";
import { TransportError } from "./transport";

export const CHAT_VIEW = "vaultseek-chat";

export interface Turn {
  question: string;
  answer: string;
  citations: Citation[];
  problem: Problem | null;
  done: boolean;
  stopped: boolean;
}

/** One turn of the conversation, built from the stream's envelopes. */
export function applyEnvelope(turn: Turn, envelope: Envelope): { conversationId?: string } {
  const data = envelope.data ?? {};
  if (envelope.type === "metadata" && Array.isArray(data.citations)) turn.citations = data.citations as Citation[];
  else if (envelope.type === "text" && typeof data.text === "string") turn.answer += data.text;
  else if (envelope.type === "error") {
    turn.problem = { kind: "server", title: "The chat could not answer", message: String(data.message ?? "the model failed"), hint: String(data.hint ?? "") };
  } else if (envelope.type === "done") {
    turn.done = true;
    turn.stopped = Boolean(data.stopped);
    if (typeof data.conversation_id === "string") return { conversationId: data.conversation_id };
  }
  return {};
}

/** The answer's text cut at its [n] citation markers. */
export function citationRuns(answer: string, citations: Citation[]): (string | Citation)[] {
  const byNumber = new Map(citations.map((c) => [c.n, c]));
  const runs: (string | Citation)[] = [];
  let at = 0;
  for (const found of answer.matchAll(/\[(\d{1,3})\]/g)) {
    const citation = byNumber.get(Number(found[1]));
    if (!citation || found.index === undefined) continue;
    if (found.index > at) runs.push(answer.slice(at, found.index));
    runs.push(citation);
    at = found.index + found[0].length;
  }
  if (at < answer.length) runs.push(answer.slice(at));
  return runs;
}

export class ChatView extends ItemView {
  turns: Turn[] = [];
  conversationId: string | null = null;
  private running: AbortController | null = null;
  private input!: HTMLTextAreaElement;
  private log!: HTMLElement;
  private askButton!: HTMLButtonElement;

  constructor(leaf: WorkspaceLeaf, private readonly client: VaultseekClient, private readonly renames: RenameLog) {
    super(leaf);
  }

  getViewType(): string {
    return CHAT_VIEW;
  }

  getDisplayText(): string {
    return "Ask your vault";
  }

  getIcon(): string {
    return "message-circle";
  }

  async onOpen(): Promise<void> {
    const root = this.contentEl;
    root.empty();
    root.addClass("vaultseek-chat");
    const head = root.createDiv({ cls: "vaultseek-pane-head" });
    head.createDiv({ cls: "vaultseek-pane-title", text: "Ask your vault" });
    const fresh = head.createEl("button", { cls: "vaultseek-small-button", text: "New chat" });
    fresh.addEventListener("click", () => this.reset());
    this.log = root.createDiv({ cls: "vaultseek-chat-log" });
    const form = root.createDiv({ cls: "vaultseek-chat-form" });
    this.input = form.createEl("textarea", { cls: "vaultseek-chat-input", attr: { rows: "3", placeholder: "Ask a question about your notes… (Enter sends, Shift+Enter a new line)" } });
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        void this.ask(this.input.value);
      }
    });
    this.askButton = form.createEl("button", { cls: "mod-cta vaultseek-ask", text: "Ask" });
    this.askButton.addEventListener("click", () => (this.running ? this.stop() : void this.ask(this.input.value)));
    this.renderLog();
  }

  async onClose(): Promise<void> {
    this.running?.abort();
  }

  reset(): void {
    this.running?.abort();
    this.turns = [];
    this.conversationId = null;
    this.renderLog();
  }

  stop(): void {
    if (this.conversationId) void this.client.stopChat(this.conversationId).catch(() => undefined);
    this.running?.abort();
  }

  async ask(question: string): Promise<void> {
    question = question.trim();
    if (!question || this.running) return;
    this.input.value = "";
    const turn: Turn = { question, answer: "", citations: [], problem: null, done: false, stopped: false };
    this.turns.push(turn);
    this.running = new AbortController();
    this.askButton.setText("Stop");
    this.renderLog();
    try {
      await this.client.chat({ question, conversation_id: this.conversationId }, (envelope) => {
        const { conversationId } = applyEnvelope(turn, envelope);
        if (conversationId) this.conversationId = conversationId;
        this.renderLog();
      }, this.running.signal);
    } catch (error) {
      if (error instanceof ProblemError) turn.problem = error.problem;
      else if (error instanceof TransportError && error.reason === "aborted") turn.stopped = true;
      else turn.problem = { kind: "server", title: "The chat failed", message: String((error as Error).message ?? error), hint: "Try again; if it persists, see the terminal where vaultseek serve runs." };
    } finally {
      turn.done = true;
      this.running = null;
      this.askButton.setText("Ask");
      this.renderLog();
    }
  }

  renderLog(): void {
    const log = this.log;
    if (!log) return;
    log.empty();
    if (this.turns.length === 0) {
      log.createDiv({ cls: "vaultseek-empty", text: "Answers come from your notes, with the passages they cite. Click a source to open it." });
    }
    for (const turn of this.turns) {
      log.createDiv({ cls: "vaultseek-question", text: turn.question });
      const answer = log.createDiv({ cls: "vaultseek-answer" });
      for (const run of citationRuns(turn.answer, turn.citations)) {
        if (typeof run === "string") answer.appendText(run);
        else this.citationButton(answer, run, `[${run.n}]`, "vaultseek-cite");
      }
      if (!turn.done && !turn.answer) answer.createSpan({ cls: "vaultseek-empty", text: turn.citations.length ? "Writing…" : "Finding passages…" });
      if (turn.stopped) answer.createSpan({ cls: "vaultseek-stopped", text: " (stopped)" });
      if (turn.problem) renderProblem(log, turn.problem);
      if (turn.citations.length > 0) {
        const sources = log.createDiv({ cls: "vaultseek-sources" });
        for (const citation of turn.citations) {
          const where = citation.label || citation.section || "";
          this.citationButton(sources, citation, `[${citation.n}] ${this.renames.current(citation.path)}${where ? " › " + where : ""}`, "vaultseek-source");
        }
      }
    }
    log.scrollTop = log.scrollHeight;
  }

  private citationButton(parent: HTMLElement, citation: Citation, label: string, cls: string): void {
    const button = parent.createEl("button", { cls, text: label, attr: { title: citation.snippet ?? "" } });
    button.addEventListener("click", () => void openTarget(this.app, this.renames, { path: citation.path, section: citation.section, page: citation.page }, []));
  }
}
