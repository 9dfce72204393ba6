// What went wrong, said for a person: every failure the views show is one of these (a title,
// what happened, what to do), never a stack trace.

export type ProblemKind =
  | "down" // nothing answers at the server URL
  | "token" // the server refused the token (or has one and none was given)
  | "no-index" // the server runs but its index holds nothing yet
  | "not-indexed" // this note is not in the index (new, renamed, excluded)
  | "bad-query" // the query syntax refused what was typed
  | "slow" // no answer in time
  | "server"; // anything else the server said

export interface Problem {
  kind: ProblemKind;
  title: string;
  message: string;
  hint: string;
}

/** A failure the client raises, carrying its {@link Problem}. */
export class ProblemError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.message);
  }
}

export function startCommand(vaultPath: string | null, serverUrl: string): string {
  let port = "";
  try {
    const url = new URL(serverUrl);
    if (url.port && url.port !== "8765") port = ` --port ${url.port}`;
  } catch {
    // a malformed URL is reported by the request itself
  }
  const vault = vaultPath ? ` --vault "${vaultPath}"` : "";
  return `vaultseek serve${vault}${port} --token-file ~/.config/vaultseek/token`;
}

export function serverDown(serverUrl: string, vaultPath: string | null, autoStart: boolean): Problem {
  return {
    kind: "down",
    title: "vaultseek is not running",
    message: `Nothing answers at ${serverUrl}.`,
    hint: autoStart
      ? "The plugin is starting it; this takes a few seconds (a first index takes longer)."
      : `Start it in a terminal: ${startCommand(vaultPath, serverUrl)} — and put the same token in ` +
        "this plugin's settings. Or allow the plugin to start it (Settings → vaultseek).",
  };
}

export function wrongToken(status: number, serverHint: string | null): Problem {
  return {
    kind: "token",
    title: status === 429 ? "Too many wrong tokens" : "vaultseek refused the token",
    message:
      status === 429
        ? "vaultseek is slowing down token guesses; wait a minute."
        : "The server at this URL needs its token, and the one in the settings is not it.",
    hint:
      "Copy the token from the file you gave `vaultseek serve --token-file` into Settings → vaultseek → Token." +
      (serverHint && status === 429 ? ` (${serverHint})` : ""),
  };
}

export function noIndex(vault: string | null): Problem {
  return {
    kind: "no-index",
    title: "The index is empty",
    message: vault ? `vaultseek serves ${vault}, and has indexed no note there yet.` : "vaultseek has indexed no note yet.",
    hint: "If it has just started, it is indexing: wait a moment. Otherwise run the command “vaultseek: Re-index the vault”.",
  };
}

export function describe(problem: Problem): string {
  return `${problem.title}. ${problem.message} ${problem.hint}`;
}
