// The Related notes pane: for the active note, the notes vaultseek finds related by links and by
// meaning, and the map's missing links (notes close in meaning that never link to it), each with
// one click to insert a [[link]]. A note vaultseek says is not close (only one of the nearest) is
// said so and drawn weaker; when none is close, a line above the list says that first. It follows
// the active note, and after a save (debounced) asks vaultseek to index the change, then asks again.

import { App, ItemView, MarkdownView, TFile, WorkspaceLeaf } from "obsidian";
import { MissingLink, RelatedNote, VaultseekClient } from "./client";
import { findFile, linkTo, openTarget, RenameLog } from "./navigate";
import { Problem, ProblemError } from "./problem";
import { renderProblem } from "./render";

export const RELATED_VIEW = "vaultseek-related";

export interface RelatedState {
  path: string | null;
  related: RelatedNote[];
  /** The list is only the nearest notes: none of them is close (vaultseek's `nothing_close`). */
  nothingClose: boolean;
  missing: MissingLink[] | null;
  problem: Problem | null;
  loading: boolean;
}

/** The line above a list of which no note is close. */
export const NOTHING_CLOSE = "Nothing closely related: no links, and no note close in meaning. The nearest notes:";

/** Why a related note is listed, in a few words. A note that is not close says so rather than a
 * percentage that reads as a match. */
export function reasonOf(note: RelatedNote): string {
  const parts: string[] = [];
  if (note.linked === "to") parts.push("linked from this note");
  else if (note.linked === "from") parts.push("links here");
  else if (note.linked === "both") parts.push("linked both ways");
  if (note.shared.length > 0) parts.push(`shares ${note.shared.slice(0, 3).join(", ")}`);
  if (note.close === false) parts.push("not close in meaning");
  else if (typeof note.similarity === "number") {
    parts.push(note.similarity >= 0.05 ? `${Math.round(note.similarity * 100)}% alike` : "little in common");
  }
  return parts.join(" · ");
}

export async function loadRelated(client: VaultseekClient, path: string): Promise<RelatedState> {
  try {
    const [answer, missing] = await Promise.all([client.related(path), client.missingLinks(path)]);
    const related = answer.results;
    // The related list already offers a Link button for each of its notes: the map's missing
    // links add the close unlinked notes it does not list.
    const listed = new Set(related.map((note) => note.path));
    return { path, related, nothingClose: answer.nothing_close, missing: missing?.filter((m) => !listed.has(m.path)) ?? null, problem: null, loading: false };
  } catch (error) {
    if (error instanceof ProblemError) return { path, related: [], nothingClose: false, missing: null, problem: error.problem, loading: false };
    throw error;
  }
}

export class RelatedView extends ItemView {
  state: RelatedState = { path: null, related: [], nothingClose: false, missing: null, problem: null, loading: false };
  private asked = 0;

  constructor(leaf: WorkspaceLeaf, private readonly client: VaultseekClient, private readonly renames: RenameLog) {
    super(leaf);
  }

  getViewType(): string {
    return RELATED_VIEW;
  }

  getDisplayText(): string {
    return "Related notes";
  }

  getIcon(): string {
    return "git-fork";
  }

  async onOpen(): Promise<void> {
    this.render();
    await this.show(this.app.workspace.getActiveFile());
  }

  /** Show what is related to `file` (a note, else nothing). */
  async show(file: TFile | null): Promise<void> {
    if (!file || file.extension !== "md") {
      if (this.state.path === null) this.render();
      return;
    }
    const asked = ++this.asked;
    this.state = { ...this.state, path: file.path, loading: true };
    this.render();
    const found = await loadRelated(this.client, file.path);
    if (asked !== this.asked) return; // another note was opened meanwhile
    this.state = found;
    this.render();
  }

  /** A note was renamed: follow it if it is the one shown; relist the renamed entries. */
  renamed(oldPath: string, newPath: string): void {
    if (this.state.path === oldPath) this.state = { ...this.state, path: newPath };
    this.render();
  }

  render(): void {
    const root = this.contentEl;
    root.empty();
    root.addClass("vaultseek-related");
    const { path, related, nothingClose, missing, problem, loading } = this.state;
    const head = root.createDiv({ cls: "vaultseek-pane-head" });
    head.createDiv({ cls: "vaultseek-pane-title", text: "Related notes" });
    if (path) head.createDiv({ cls: "vaultseek-path", text: path });
    if (!path) {
      root.createDiv({ cls: "vaultseek-empty", text: "Open a note to see the notes related to it." });
      return;
    }
    if (loading && related.length === 0 && !problem) root.createDiv({ cls: "vaultseek-empty", text: "Looking…" });
    if (problem) {
      renderProblem(root, problem);
      return;
    }
    if (!loading && related.length === 0) root.createDiv({ cls: "vaultseek-empty", text: "Nothing related yet: no links, and no note close in meaning." });
    if (nothingClose && related.length > 0) root.createDiv({ cls: "vaultseek-nothing-close", text: NOTHING_CLOSE });
    const list = root.createDiv({ cls: "vaultseek-list" });
    for (const note of related) this.renderEntry(list, note.path, note.title, reasonOf(note), note.close === false);
    if (missing && missing.length > 0) {
      root.createDiv({ cls: "vaultseek-subhead", text: "Missing links (close in meaning, never linked)" });
      const more = root.createDiv({ cls: "vaultseek-list" });
      for (const link of missing) this.renderEntry(more, link.path, link.title ?? link.path, link.why ?? "");
    }
  }

  private renderEntry(list: HTMLElement, path: string, title: string, why: string, weak = false): void {
    const current = this.renames.current(path);
    const gone = findFile(this.app, this.renames, path) === null;
    const entry = list.createDiv({ cls: "vaultseek-entry" });
    entry.toggleClass("vaultseek-gone", gone);
    entry.toggleClass("vaultseek-weak", weak);
    const text = entry.createDiv({ cls: "vaultseek-entry-text" });
    const name = text.createEl("a", { cls: "vaultseek-title", text: title || current, href: "#" });
    name.addEventListener("click", (event) => {
      event.preventDefault();
      void openTarget(this.app, this.renames, { path }, [], event.ctrlKey || event.metaKey);
    });
    text.createDiv({ cls: "vaultseek-path", text: gone ? `${current} — renamed or deleted` : current });
    if (why) text.createDiv({ cls: "vaultseek-why", text: why });
    const button = entry.createEl("button", { cls: "vaultseek-link-button", text: "Link", attr: { "aria-label": `Insert a link to ${title || current}` } });
    button.disabled = gone;
    button.addEventListener("click", () => this.insertLink(path));
  }

  /** Insert a [[link]] to `path` at the cursor of the note this pane is about. */
  insertLink(path: string): boolean {
    const view = findEditorOf(this.app, this.state.path);
    if (!view || !this.state.path) return false;
    const link = linkTo(this.app, this.renames, path, this.state.path);
    if (!link) return false;
    view.editor.replaceSelection(link);
    return true;
  }
}

function findEditorOf(app: App, path: string | null): MarkdownView | null {
  const active = app.workspace.getActiveViewOfType(MarkdownView);
  if (active && active.file?.path === path) return active;
  for (const leaf of app.workspace.getLeavesOfType("markdown")) {
    const view = leaf.view;
    if (view instanceof MarkdownView && view.file?.path === path) return view;
  }
  return null;
}
