// Small pieces of DOM the views share: a problem (title, what happened, what to do) and a
// snippet with marked words. Text only ever goes in as text, never as HTML.

import { Problem } from "./problem";

export function renderProblem(el: HTMLElement, problem: Problem): HTMLElement {
  const box = el.createDiv({ cls: `vaultseek-problem vaultseek-problem-${problem.kind}` });
  box.createDiv({ cls: "vaultseek-problem-title", text: problem.title });
  box.createDiv({ cls: "vaultseek-problem-message", text: problem.message });
  if (problem.hint) renderHint(box.createDiv({ cls: "vaultseek-problem-hint" }), problem.hint);
  return box;
}

/** A hint with its `commands` in code spans, so they read (and copy) as commands. */
export function renderHint(el: HTMLElement, hint: string): void {
  hint.split(/(`[^`]+`|vaultseek serve[^—]*?(?= —|$))/).forEach((part) => {
    if (!part) return;
    if (part.startsWith("`")) el.createEl("code", { text: part.slice(1, -1) });
    else if (part.startsWith("vaultseek serve")) el.createEl("code", { text: part.trim() });
    else el.appendText(part);
  });
}

export function renderRuns(el: HTMLElement, runs: { text: string; marked: boolean }[]): void {
  for (const run of runs) {
    if (run.marked) el.createEl("mark", { text: run.text });
    else el.appendText(run.text);
  }
}
