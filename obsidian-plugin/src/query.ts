// What a user types in Obsidian's search habits, as vaultseek's query syntax (docs/search.md,
// "Query syntax"). vaultseek reads `path:`, `file:`, `tag:`, `#tag`, `kind:`, `after:`,
// `before:`, `"phrases"`, `-exclusions`, `prefix*` and `[key:value]` itself; this adds the
// spellings Obsidian's own search box uses:
//
//   tag:#x                 → tag:x
//   content:x, line:(a b), section:x, block:x, match-case:x, ignore-case:x
//                          → their words as text (vaultseek searches every section)
//   modified:>2w, modified:>=2026-01  → after:…;   modified:<2026-03 → before:…
//   ext:pdf                → kind:pdf
//
// and picks out the words to mark in the note a hit opens.

export interface ReadQuery {
  /** The query as vaultseek reads it. */
  query: string;
  /** Words and phrases to mark in an opened note (no operators, no exclusions). */
  marks: string[];
}

const UNWRAP = /\b(?:content|line|section|block|match-case|ignore-case):(\([^)]*\)|"[^"]*"|\S+)/g;
const MODIFIED = /\bmodified:(>=?|<=?)?("[^"]*"|\S+)/g;

export function readQuery(typed: string): ReadQuery {
  let query = typed.replace(/\btag:#/g, "tag:");
  query = query.replace(UNWRAP, (_all, value: string) => (value.startsWith("(") ? value.slice(1, -1) : value));
  query = query.replace(MODIFIED, (_all, op: string | undefined, value: string) => (op?.startsWith("<") ? `before:${value}` : `after:${value}`));
  query = query.replace(/\bext:(\S+)/g, "kind:$1");
  query = query.replace(/\s+/g, " ").trim();
  return { query, marks: markedWords(query) };
}

const OPERATOR = /^(?:tag|path|file|kind|after|before):/;

/** The words of a vaultseek query worth marking: quoted phrases whole, free words without a
 * trailing `*`; operators, `#tags`, `[conditions]` and exclusions out. */
export function markedWords(query: string): string[] {
  const marks: string[] = [];
  const rest = query.replace(/(^|\s)(-?)"([^"]+)"/g, (_all, lead: string, minus: string, phrase: string) => {
    if (!minus) marks.push(phrase);
    return lead;
  });
  for (const word of rest.replace(/\[[^\]]*\]/g, " ").split(/\s+/)) {
    if (!word || word.startsWith("-") || word.startsWith("#") || OPERATOR.test(word) || word.includes('"')) continue;
    const bare = word.replace(/\*+$/, "").replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");
    if (bare.length >= 2) marks.push(bare);
  }
  return [...new Set(marks)];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Where `marks` occur in `text` (case folded; a word also matches as the start of a longer one:
 * `starter` marks `starters`), as [from, to] ranges in order, at most `limit`. */
export function markRanges(text: string, marks: string[], limit = 200): [number, number][] {
  if (marks.length === 0) return [];
  const pattern = new RegExp(marks.map(escapeRegExp).sort((a, b) => b.length - a.length).join("|"), "giu");
  const ranges: [number, number][] = [];
  for (const found of text.matchAll(pattern)) {
    if (found.index === undefined || found[0].length === 0) continue;
    ranges.push([found.index, found.index + found[0].length]);
    if (ranges.length >= limit) break;
  }
  return ranges;
}

/** `text` cut into plain and marked runs, for rendering a snippet with the query's words marked. */
export function markRuns(text: string, marks: string[]): { text: string; marked: boolean }[] {
  const runs: { text: string; marked: boolean }[] = [];
  let at = 0;
  for (const [from, to] of markRanges(text, marks)) {
    if (from > at) runs.push({ text: text.slice(at, from), marked: false });
    runs.push({ text: text.slice(from, to), marked: true });
    at = to;
  }
  if (at < text.length) runs.push({ text: text.slice(at), marked: false });
  return runs;
}
