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

/** Whether two folder paths name the same folder, as written (trailing slashes and, on
 * Windows, case and separators aside). */
export function sameFolder(a: string, b: string): boolean {
  const norm = (p: string) => {
    const slashed = p.replace(/\\/g, "/").replace(/\/+$/, "");
    return /^[A-Za-z]:/.test(slashed) ? slashed.toLowerCase() : slashed;
  };
  return norm(a) === norm(b);
}

export function statusText(state: IndexState | null, problem: Problem | null, now: number, vaultPath: string | null = null): { text: string; tooltip: string } {
  if (problem) {
    const short: Record<string, string> = { down: "not running", token: "wrong token", "no-index": "index empty", slow: "slow to answer" };
    return { text: `vaultseek: ${short[problem.kind] ?? "error"}`, tooltip: `${problem.title}. ${problem.message} ${problem.hint}`.trim() };
  }
  if (!state) return { text: "vaultseek: …", tooltip: "Asking vaultseek…" };
  if (vaultPath && state.vault && !sameFolder(state.vault, vaultPath)) {
    return {
      text: "vaultseek: serves another vault",
      tooltip: `vaultseek serves ${state.vault}, not this vault (${vaultPath}): its results may not open here. ` +
        `Start one for this vault: vaultseek serve --vault "${vaultPath}" (on another port, in the settings' URL).`,
    };
  }
  const parts = [state.indexing ? "indexing…" : ago(state.last_indexed, now)];
  const deep = deepText(state);
  if (deep) parts.push(deep);
  const notes = `${state.files.toLocaleString("en")} files, ${state.chunks.toLocaleString("en")} sections`;
  const error = state.indexing_error ? `\nThe last index run failed: ${state.indexing_error}` : "";
  return { text: `vaultseek: ${parts.join(" · ")}`, tooltip: `${notes} in ${state.vault}.${error}\nClick to re-index.` };
}
