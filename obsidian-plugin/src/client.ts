// The vaultseek HTTP API as the plugin uses it (docs/http-api.md): search, related notes, the
// map's missing links, the index's state, a re-index, and the chat's stream. Every failure
// leaves as a ProblemError whose Problem the views show.

import { Problem, ProblemError, noIndex, serverDown, wrongToken } from "./problem";
import { Reply, Transport, TransportError } from "./transport";

export interface Section {
  path: string;
  section: string | null;
  label: string | null;
  snippet: string;
  relevance: number;
  location: { page?: number; slide?: number } | null;
  chunk_id: number;
}

export interface NoteHit {
  path: string;
  title: string;
  relevance: number;
  sections: Section[];
}

export interface SearchAnswer {
  query: string;
  results: NoteHit[];
  notices: string[];
  no_match: boolean;
  parsed: { text: string; fields: string[] } | null;
  /** Each query word no note holds and what was searched for it: a typo's correction, the
   * start its other forms share ("komprimi*"), the vault's word of like meaning (absent from
   * an older vaultseek). */
  alternatives?: Record<string, string[]>;
}

export interface RelatedNote {
  path: string;
  title: string;
  linked: "to" | "from" | "both" | null;
  shared: string[];
  similarity: number | null;
  /** true: related by links, or close in meaning by the line of the model that compared them;
   * false: neither, only one of the nearest; null or absent: no calibrated model could tell
   * (an older vaultseek, an uncalibrated model). */
  close?: boolean | null;
}

export interface RelatedAnswer {
  path: string;
  results: RelatedNote[];
  notices: string[];
  /** There are results and none is close (false from an older vaultseek, which cannot tell). */
  nothing_close: boolean;
}

export interface MissingLink {
  path: string;
  title: string | null;
  why: string | null;
}

export interface DeepProgress {
  state: string;
  chunks: number;
  embedded: number;
  eta_seconds: number | null;
  problem: string | null;
  reason: string | null;
}

export interface IndexState {
  vault: string;
  files: number;
  chunks: number;
  last_indexed: string | null;
  indexing: boolean;
  indexing_error: string | null;
  deep: DeepProgress | null;
}

export interface Citation {
  n: number;
  path: string;
  section: string | null;
  page: number | null;
  label: string | null;
  snippet: string;
}

export interface Envelope {
  type: "metadata" | "thinking" | "text" | "error" | "done" | string;
  data: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface ClientSettings {
  serverUrl: string;
  token: string;
  autoStart: boolean;
}

const QUICK_MS = 15_000;

/** Newline-delimited JSON read piece by piece: whole lines out, the rest kept. */
export class LineReader {
  private rest = "";

  constructor(private readonly onLine: (value: Envelope) => void) {}

  push(piece: string): void {
    this.rest += piece;
    let end: number;
    while ((end = this.rest.indexOf("\n")) >= 0) {
      const line = this.rest.slice(0, end).trim();
      this.rest = this.rest.slice(end + 1);
      if (line) this.emit(line);
    }
  }

  finish(): void {
    const line = this.rest.trim();
    this.rest = "";
    if (line) this.emit(line);
  }

  private emit(line: string): void {
    try {
      this.onLine(JSON.parse(line) as Envelope);
    } catch {
      // a line cut short by a dropped connection: the done/error envelope says what happened
    }
  }
}

export class VaultseekClient {
  constructor(
    private readonly settings: () => ClientSettings,
    private readonly transport: Transport,
    private readonly vaultPath: () => string | null = () => null,
  ) {}

  private url(path: string): string {
    return this.settings().serverUrl.replace(/\/+$/, "") + path;
  }

  private headers(json: boolean): Record<string, string> {
    const headers: Record<string, string> = { Accept: "application/json" };
    const token = this.settings().token.trim();
    if (token) headers.Authorization = `Bearer ${token}`;
    if (json) headers["Content-Type"] = "application/json";
    return headers;
  }

  /** One request; a refused connection, a timeout and an error status become ProblemErrors. */
  async call(method: string, path: string, body?: unknown, options: { signal?: AbortSignal; timeoutMs?: number; onChunk?: (t: string) => void } = {}): Promise<Reply> {
    let reply: Reply;
    try {
      reply = await this.transport.send(method, this.url(path), this.headers(body !== undefined), {
        body: body === undefined ? undefined : JSON.stringify(body),
        timeoutMs: options.timeoutMs ?? QUICK_MS,
        signal: options.signal,
        onChunk: options.onChunk,
      });
    } catch (error) {
      if (error instanceof TransportError) {
        if (error.reason === "aborted") throw error;
        if (error.reason === "timeout") {
          throw new ProblemError({ kind: "slow", title: "vaultseek is slow to answer", message: error.message, hint: "It may be indexing a large vault; try again in a moment." });
        }
        const settings = this.settings();
        throw new ProblemError(serverDown(settings.serverUrl, this.vaultPath(), settings.autoStart));
      }
      throw error;
    }
    if (reply.status >= 400) throw new ProblemError(problemOf(reply));
    return reply;
  }

  async json<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const reply = await this.call(method, path, body, { signal });
    try {
      return JSON.parse(reply.body) as T;
    } catch {
      throw new ProblemError({ kind: "server", title: "Not a vaultseek answer", message: `${this.settings().serverUrl} answered something that is not vaultseek's JSON.`, hint: "Check the server URL in the settings." });
    }
  }

  search(query: string, k: number, signal?: AbortSignal): Promise<SearchAnswer> {
    return this.json<SearchAnswer>("GET", `/api/search?q=${encodeURIComponent(query)}&k=${k}`, undefined, signal);
  }

  /** The notes related to `path`; an older vaultseek's answer (no `close`, no `nothing_close`)
   * reads as one that cannot tell. */
  async related(path: string, k = 12): Promise<RelatedAnswer> {
    const answer = await this.json<Partial<RelatedAnswer> | null>("GET", `/api/related?path=${encodeURIComponent(path)}&k=${k}`);
    const results = (Array.isArray(answer?.results) ? answer.results : []).map((note) => ({ ...note, close: typeof note.close === "boolean" ? note.close : null }));
    const notices = Array.isArray(answer?.notices) ? answer.notices.filter((n) => typeof n === "string") : [];
    return { path: answer?.path ?? path, results, notices, nothing_close: answer?.nothing_close === true && results.length > 0 };
  }

  /** The map's missing links for a note; null when the server has no map (an older vaultseek). */
  async missingLinks(path: string): Promise<MissingLink[] | null> {
    let answer: unknown;
    try {
      answer = await this.json<unknown>("GET", `/api/map/note?path=${encodeURIComponent(path)}`);
    } catch (error) {
      if (error instanceof ProblemError && (error.problem.kind === "not-indexed" || error.problem.kind === "server")) return null;
      throw error;
    }
    return readMissingLinks(answer, path);
  }

  async indexState(): Promise<IndexState> {
    try {
      return await this.json<IndexState>("GET", "/api/index/state");
    } catch (error) {
      if (!(error instanceof ProblemError) || error.problem.kind !== "not-indexed") throw error;
    }
    // An older vaultseek without /api/index/state: its /api/status has the counts.
    const status = await this.json<{ index: IndexState }>("GET", "/api/status");
    return { ...status.index, indexing: false, deep: null };
  }

  /** The index state, or the empty-index problem when there is nothing in it. */
  async readyState(): Promise<IndexState> {
    const state = await this.indexState();
    if (state.files === 0 && !state.indexing) throw new ProblemError(noIndex(state.vault));
    return state;
  }

  async reindex(wait: boolean): Promise<IndexState | null> {
    const reply = await this.call("POST", "/api/index/sync", { wait }, { timeoutMs: wait ? 90_000 : QUICK_MS });
    return wait ? (JSON.parse(reply.body) as IndexState) : null;
  }

  /** Ask the chat; each envelope is handed over as it arrives. Resolves when the stream ends. */
  async chat(request: { question: string; conversation_id: string | null }, onEnvelope: (e: Envelope) => void, signal?: AbortSignal): Promise<void> {
    const lines = new LineReader(onEnvelope);
    await this.call("POST", "/api/chat", request, { signal, timeoutMs: 600_000, onChunk: (piece) => lines.push(piece) });
    lines.finish();
  }

  stopChat(conversationId: string): Promise<unknown> {
    return this.json("POST", `/api/chat/${encodeURIComponent(conversationId)}/stop`);
  }
}

/** An error reply as a Problem: the server's own message and hint where it gave them. */
export function problemOf(reply: Reply): Problem {
  let error: { code?: string; message?: string; hint?: string | null } = {};
  try {
    error = (JSON.parse(reply.body) as { error?: typeof error }).error ?? {};
  } catch {
    // not JSON: said below by status alone
  }
  if (reply.status === 401 || reply.status === 429) return wrongToken(reply.status, error.hint ?? null);
  if (reply.status === 403 && error.code === "forbidden_host") {
    return { kind: "server", title: "vaultseek refused this address", message: error.message ?? "forbidden host", hint: "Use http://127.0.0.1:PORT or http://localhost:PORT as the server URL." };
  }
  if (reply.status === 404) {
    return { kind: "not-indexed", title: "Not in the index", message: error.message ?? "vaultseek does not know this note.", hint: error.hint ?? "A new or renamed note is found after the next index run." };
  }
  if (reply.status === 400) {
    return { kind: "bad-query", title: "vaultseek cannot read this query", message: error.message ?? "a bad query", hint: error.hint ?? "" };
  }
  return { kind: "server", title: `vaultseek answered ${reply.status}`, message: error.message ?? "the server failed", hint: error.hint ?? "See the terminal where vaultseek serve runs." };
}

function text(value: unknown): string | null {
  return typeof value === "string" && value ? value : null;
}

/** The map's missing links for ``note``, read loosely: a list under ``missing_links`` whose items
 * name the other note as ``path``/``other``/``target`` or as one end of a pair. */
export function readMissingLinks(answer: unknown, note: string): MissingLink[] {
  const list = (answer as { missing_links?: unknown } | null)?.missing_links;
  if (!Array.isArray(list)) return [];
  const found: MissingLink[] = [];
  for (const item of list) {
    if (typeof item === "string") {
      if (item !== note) found.push({ path: item, title: null, why: null });
      continue;
    }
    if (!item || typeof item !== "object") continue;
    const record = item as Record<string, unknown>;
    const ends = ["other", "path", "target", "b", "a", "source"].map((key) => text(record[key]));
    const other = ends.find((end) => end !== null && end !== note);
    if (!other) continue;
    // vaultseek's answer: the passage of the other note that makes the two close.
    const passage = (record.target === other ? record.target_passage : record.source_passage) as Record<string, unknown> | null | undefined;
    const why = text(passage?.text) ?? text(record.passage) ?? text(record.snippet) ?? text(record.why) ?? null;
    found.push({ path: other, title: text(record.title) ?? text(record.other_title), why });
  }
  return found;
}
