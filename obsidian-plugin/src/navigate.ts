// Opening what vaultseek found: a note at its heading (or a PDF at its page), with the query's
// words marked by Obsidian's own search highlight; a note renamed since the results were shown
// is followed to its new name, and a deleted one is said, not opened.

import { App, MarkdownView, Notice, TFile } from "obsidian";
import { markRanges } from "./query";

/** Renames seen since the plugin loaded: an old path leads to the note's current one. */
export class RenameLog {
  private moves = new Map<string, string>();

  record(oldPath: string, newPath: string): void {
    this.moves.set(oldPath, newPath);
    for (const [from, to] of this.moves) if (to === oldPath) this.moves.set(from, newPath);
  }

  current(path: string): string {
    return this.moves.get(path) ?? path;
  }
}

export interface Target {
  path: string;
  section?: string | null;
  page?: number | null;
}

/** The vault file a result names now (following renames), or null when it is gone. */
export function findFile(app: App, renames: RenameLog, path: string): TFile | null {
  const file = app.vault.getAbstractFileByPath(renames.current(path));
  return file instanceof TFile ? file : null;
}

/** The last part of a section's heading path (vaultseek's `section` is `A > B > C` for nested ones). */
export function headingOf(section: string | null | undefined): string | null {
  if (!section) return null;
  const parts = section.split(" > ");
  return parts[parts.length - 1].trim() || null;
}

/** Open a hit. Returns false (after saying why) when its note is gone. */
export async function openTarget(app: App, renames: RenameLog, target: Target, marks: string[], newLeaf = false): Promise<boolean> {
  const file = findFile(app, renames, target.path);
  if (!file) {
    new Notice(`vaultseek: ${target.path} was renamed or deleted since these results were shown; search again.`);
    return false;
  }
  const leaf = app.workspace.getLeaf(newLeaf ? "tab" : false);
  if (file.extension !== "md") {
    const subpath = target.page ? `#page=${target.page}` : "";
    await app.workspace.openLinkText(file.path + subpath, "", newLeaf);
    return true;
  }
  const heading = headingOf(target.section);
  const eState: Record<string, unknown> = {};
  if (heading && app.metadataCache.getFileCache(file)?.headings?.some((h) => h.heading === heading)) {
    eState.subpath = `#${heading}`;
  }
  if (marks.length > 0) {
    const content = await app.vault.cachedRead(file);
    const matches = markRanges(content, marks);
    if (matches.length > 0) eState.match = { content, matches };
  }
  await leaf.openFile(file, { active: true, eState });
  const view = app.workspace.getActiveViewOfType(MarkdownView);
  if (view && eState.subpath) {
    const line = app.metadataCache.getFileCache(file)?.headings?.find((h) => h.heading === heading)?.position.start.line;
    if (line !== undefined) view.editor?.setCursor({ line, ch: 0 });
  }
  return true;
}

/** A `[[link]]` to `path` as the user's link settings write it from `sourcePath`. */
export function linkTo(app: App, renames: RenameLog, path: string, sourcePath: string): string | null {
  const file = findFile(app, renames, path);
  if (!file) return null;
  return app.fileManager.generateMarkdownLink(file, sourcePath);
}
