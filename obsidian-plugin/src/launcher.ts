// Starting `vaultseek serve` for the user, only when the settings allow it: the vault this
// Obsidian window has open, on the settings' port, with the settings' token passed in the
// environment (never written to a file in the vault).

export interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The command line that serves `vaultPath` where the settings expect it. */
export function launchOf(serveCommand: string, serverUrl: string, token: string, vaultPath: string): Launch {
  const url = new URL(serverUrl);
  const words = serveCommand.trim().split(/\s+/).filter(Boolean);
  const command = words[0] ?? "vaultseek";
  const args = [...words.slice(1), "serve", "--vault", vaultPath, "--host", url.hostname.replace(/^\[|\]$/g, ""), "--port", url.port || "8765"];
  return { command, args, env: token.trim() ? { VAULTSEEK_SERVE_TOKEN: token.trim() } : {} };
}

type ChildProcess = typeof import("child_process");

/** Start it, detached from Obsidian (it keeps serving other clients). Returns an error message
 * or null. */
export function startServer(launch: Launch): Promise<string | null> {
  let spawn: ChildProcess["spawn"];
  try {
    spawn = (require("child_process") as ChildProcess).spawn;
  } catch {
    return Promise.resolve("this Obsidian cannot start programs (mobile?)");
  }
  return new Promise((resolve) => {
    const child = spawn(launch.command, launch.args, { detached: true, stdio: "ignore", env: { ...process.env, ...launch.env } });
    child.once("error", (error: NodeJS.ErrnoException) =>
      resolve(error.code === "ENOENT" ? `\`${launch.command}\` was not found: install vaultseek, or give its full path in the settings` : error.message),
    );
    child.once("spawn", () => {
      child.unref();
      resolve(null);
    });
  });
}
