// The status bar: how fresh the index is and how far the deep tier has got, or what is wrong.

import { IndexState } from "./client";
import { Problem } from "./problem";

export function ago(iso: string | null, now: number): string {
  if (!iso) return "never indexed";
  const seconds = Math.max(0, (now - Date.parse(iso)) / 1000);
  if (Number.isNaN(seconds)) return "indexed";
  if (seconds < 60) return "indexed just now";
  if (seconds < 3600) return `indexed ${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `indexed ${Math.floor(seconds / 3600)} h ago`;
  return `indexed ${Math.floor(seconds / 86400)} d ago`;
}

/** The deep tier in a few words: "deep 45%", "deep paused", or nothing when complete or off. */
export function deepText(state: IndexState): string | null {
  const deep = state.deep;
  if (!deep || deep.state === "complete") return null;
  if (deep.state === "unavailable") return "deep tier unavailable";
  const share = deep.chunks > 0 ? Math.floor((100 * deep.embedded) / deep.chunks) : 0;
  if (deep.state === "paused") return `deep ${share}% (paused)`;
  if (deep.state === "waiting") return `deep ${share}% (waiting)`;
  return `deep ${share}%`;
}

export function statusText(state: IndexState | null, problem: Problem | null, now: number): { text: string; tooltip: string } {
  if (problem) {
    const short: Record<string, string> = { down: "not running", token: "wrong token", "no-index": "index empty", slow: "slow to answer" };
    return { text: `vaultseek: ${short[problem.kind] ?? "error"}`, tooltip: `${problem.title}. ${problem.message} ${problem.hint}`.trim() };
  }
  if (!state) return { text: "vaultseek: …", tooltip: "Asking vaultseek…" };
  const parts = [state.indexing ? "indexing…" : ago(state.last_indexed, now)];
  const deep = deepText(state);
  if (deep) parts.push(deep);
  const notes = `${state.files.toLocaleString("en")} files, ${state.chunks.toLocaleString("en")} sections`;
  const error = state.indexing_error ? `\nThe last index run failed: ${state.indexing_error}` : "";
  return { text: `vaultseek: ${parts.join(" · ")}`, tooltip: `${notes} in ${state.vault}.${error}\nClick to re-index.` };
}
