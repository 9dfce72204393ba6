// Search as you type: a keyboard-first modal like Obsidian's quick switcher. Each note found is
// a row (title, path, the section it ranks by, the snippet with the query's words marked) and
// its other matching sections follow as indented rows; Enter opens the note at that heading or
// page, Mod+Enter in a new tab, Shift+Enter inserts a link to it. What the search changed (a
// typo corrected, a word no note uses searched as the vault's nearest word) is a line above the
// results, which Enter passes over to the first note, and the words it searched are marked too.

import { App, MarkdownView, SuggestModal } from "obsidian";
import { NoteHit, SearchAnswer, Section, VaultseekClient } from "./client";
import { openTarget, linkTo, RenameLog, findFile } from "./navigate";
import { Problem, ProblemError } from "./problem";
import { markRuns, readQuery } from "./query";
import { Debounced } from "./timing";
import { renderProblem, renderRuns } from "./render";

export type Row =
  | { kind: "section"; hit: NoteHit; section: Section; first: boolean; marks: string[]; gone: boolean }
  | { kind: "problem"; problem: Problem }
  | { kind: "notice"; text: string };

export const RESULTS = 12;

/** The typed text to rows, debounced; no DOM here (the tests and the benchmark drive it). */
export class SearchSession {
  readonly debounced: Debounced<string, Row[]>;

  constructor(private readonly client: VaultseekClient, private readonly exists: (path: string) => boolean, debounceMs: number) {
    this.debounced = new Debounced((typed: string) => this.search(typed), debounceMs);
  }

  rows(typed: string): Promise<Row[]> {
    if (!typed.trim()) {
      this.debounced.cancel();
      return Promise.resolve([]);
    }
    return this.debounced.call(typed);
  }

  async search(typed: string): Promise<Row[]> {
    const { query, marks } = readQuery(typed);
    if (!query) return [];
    let answer: SearchAnswer;
    try {
      answer = await this.client.search(query, RESULTS);
    } catch (error) {
      if (error instanceof ProblemError) {
        if (error.problem.kind === "bad-query" || error.problem.kind === "slow") return [{ kind: "problem", problem: error.problem }];
        // Down, wrong token: said as such. An empty answer from an empty index says why.
        return [{ kind: "problem", problem: error.problem }];
      }
      throw error;
    }
    return rowsOf(answer, marks, this.exists);
  }
}

/** The server's notice that nothing matches closely; the modal says it in its own words. */
const NO_MATCH = "nothing in the index matches this well; the closest results are shown";

export function rowsOf(answer: SearchAnswer, typedMarks: string[], exists: (path: string) => boolean): Row[] {
  const added = Object.values(answer.alternatives ?? {}).flat().map((word) => word.replace(/\*$/, ""));
  const marks = [...new Set([...typedMarks, ...added])];
  const rows: Row[] = [];
  for (const hit of answer.results) {
    const gone = !exists(hit.path);
    hit.sections.forEach((section, n) => rows.push({ kind: "section", hit, section, first: n === 0, marks, gone }));
  }
  const notices = answer.notices.filter(Boolean);
  if (rows.length === 0) return [{ kind: "notice", text: notices[0] ?? "No note matches." }];
  const told = notices.filter((notice) => notice !== NO_MATCH).map((text): Row => ({ kind: "notice", text }));
  if (answer.no_match) told.push({ kind: "notice", text: "Nothing answers this closely; these are the nearest notes." });
  return [...told, ...rows];
}

export class SearchModal extends SuggestModal<Row> {
  private readonly session: SearchSession;
  private how: "open" | "tab" | "link" = "open";
  /** The rows on screen: a line above the notes passes Enter on to the first of them. */
  private shown: Row[] = [];

  constructor(
    app: App,
    private readonly client: VaultseekClient,
    private readonly renames: RenameLog,
    debounceMs: number,
    private readonly onProblem: (problem: Problem) => void,
  ) {
    super(app);
    this.session = new SearchSession(client, (path) => findFile(app, renames, path) !== null, debounceMs);
    this.limit = 60;
    this.emptyStateText = "Type to search your vault with vaultseek.";
    this.setPlaceholder("Search with vaultseek… (path: tag: #tag kind: after: before: \"phrase\" -word)");
    this.setInstructions([
      { command: "↑↓", purpose: "to move" },
      { command: "↵", purpose: "to open at the section" },
      { command: "mod ↵", purpose: "in a new tab" },
      { command: "shift ↵", purpose: "to insert a link" },
      { command: "esc", purpose: "to close" },
    ]);
    this.scope.register(["Mod"], "Enter", (event) => {
      this.chooseSelected(event, "tab");
      return false;
    });
    this.scope.register(["Shift"], "Enter", (event) => {
      this.chooseSelected(event, "link");
      return false;
    });
  }

  private chooseSelected(event: KeyboardEvent, how: "tab" | "link"): void {
    this.how = how;
    this.selectActiveSuggestion(event); // Obsidian closes the modal and calls onChooseSuggestion
  }

  async getSuggestions(typed: string): Promise<Row[]> {
    this.shown = await this.session.rows(typed);
    return this.shown;
  }

  renderSuggestion(row: Row, el: HTMLElement): void {
    el.addClass("vaultseek-row");
    if (row.kind === "problem") {
      renderProblem(el, row.problem);
      return;
    }
    if (row.kind === "notice") {
      el.addClass("vaultseek-notice");
      el.setText(row.text);
      return;
    }
    const { hit, section, first } = row;
    el.toggleClass("vaultseek-subrow", !first);
    el.toggleClass("vaultseek-gone", row.gone);
    if (first) {
      const head = el.createDiv({ cls: "vaultseek-row-head" });
      head.createSpan({ cls: "vaultseek-title", text: hit.title || hit.path });
      if (hit.relevance >= 0.05) {
        head.createSpan({ cls: "vaultseek-relevance", text: `${Math.round(hit.relevance * 100)}%`, attr: { title: "how likely this answers the query" } });
      }
      el.createDiv({ cls: "vaultseek-path", text: row.gone ? `${hit.path} — renamed or deleted since indexing` : hit.path });
    }
    const where = section.label || section.section;
    if (where) el.createDiv({ cls: "vaultseek-section", text: `› ${where}` });
    renderRuns(el.createDiv({ cls: "vaultseek-snippet" }), markRuns(section.snippet, row.marks));
  }

  onChooseSuggestion(row: Row): void {
    const how = this.how;
    this.how = "open";
    void this.choose(row, how);
  }

  private async choose(chosen: Row, how: "open" | "tab" | "link"): Promise<void> {
    // The first row is selected as the list appears; when it is a line saying what the search
    // changed, Enter still opens (or links) the first note, as it does without the line.
    const row = chosen.kind === "notice" ? this.shown.find((r) => r.kind === "section") ?? chosen : chosen;
    if (row.kind === "problem") {
      this.onProblem(row.problem);
      return;
    }
    if (row.kind !== "section") return;
    if (how === "link") {
      const view = this.app.workspace.getActiveViewOfType(MarkdownView);
      const source = view?.file?.path ?? "";
      const link = linkTo(this.app, this.renames, row.hit.path, source);
      if (view && link) view.editor.replaceSelection(link);
      return;
    }
    await openTarget(this.app, this.renames, { path: row.hit.path, section: row.section.section, page: row.section.location?.page ?? null }, row.marks, how === "tab");
  }
}
