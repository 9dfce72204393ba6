// How the plugin reaches vaultseek: Node's `http` module on the desktop (a loopback request
// from the plugin carries no browser Origin, which vaultseek refuses), `fetch` where Node is
// absent (the test page that mounts the views). Both stream the body as it arrives.

export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface SendOptions {
  body?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Called with each piece of the body as it arrives (streamed answers). */
  onChunk?: (text: string) => void;
}

/** The request never got an answer: nothing listens (`refused`), it took too long, or it was stopped. */
export class TransportError extends Error {
  constructor(readonly reason: "refused" | "timeout" | "aborted" | "failed", message: string) {
    super(message);
  }
}

export interface Transport {
  send(method: string, url: string, headers: Record<string, string>, options?: SendOptions): Promise<Reply>;
}

type NodeHttp = typeof import("http");

/** Node's http, a new loopback connection per request (`agent: false`): a loopback connect costs
 * well under a millisecond, and no idle socket outlives a restart of `vaultseek serve`. */
export class NodeTransport implements Transport {
  constructor(private readonly http: NodeHttp) {}

  send(method: string, url: string, headers: Record<string, string>, options: SendOptions = {}): Promise<Reply> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (error: TransportError) => {
        if (!settled) {
          settled = true;
          reject(error);
        }
      };
      let request: import("http").ClientRequest;
      try {
        request = this.http.request(url, { method, headers, agent: false }, (response) => {
          response.setEncoding("utf8");
          let body = "";
          response.on("data", (piece: string) => {
            body += piece;
            options.onChunk?.(piece);
          });
          response.on("end", () => {
            if (settled) return;
            settled = true;
            const flat: Record<string, string> = {};
            for (const [name, value] of Object.entries(response.headers)) {
              if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value;
            }
            resolve({ status: response.statusCode ?? 0, headers: flat, body });
          });
          response.on("error", () => fail(new TransportError("failed", "the connection broke mid-answer")));
        });
      } catch (error) {
        fail(new TransportError("failed", `cannot ask ${url}: ${(error as Error).message}`));
        return;
      }
      request.on("error", (error: NodeJS.ErrnoException) => {
        const refused = ["ECONNREFUSED", "ECONNRESET", "EHOSTUNREACH", "ENOTFOUND", "EADDRNOTAVAIL"];
        fail(new TransportError(refused.includes(error.code ?? "") ? "refused" : "failed", error.message));
      });
      if (options.timeoutMs) {
        request.setTimeout(options.timeoutMs, () => {
          fail(new TransportError("timeout", `no answer within ${options.timeoutMs} ms`));
          request.destroy();
        });
      }
      options.signal?.addEventListener("abort", () => {
        fail(new TransportError("aborted", "stopped"));
        request.destroy();
      });
      if (options.body !== undefined) request.write(options.body);
      request.end();
    });
  }
}

export class FetchTransport implements Transport {
  async send(method: string, url: string, headers: Record<string, string>, options: SendOptions = {}): Promise<Reply> {
    const controller = new AbortController();
    options.signal?.addEventListener("abort", () => controller.abort());
    const timer = options.timeoutMs ? setTimeout(() => controller.abort("timeout"), options.timeoutMs) : undefined;
    try {
      const response = await fetch(url, { method, headers, body: options.body, signal: controller.signal });
      const reader = response.body?.getReader();
      const decoder = new TextDecoder();
      let body = "";
      while (reader) {
        const { done, value } = await reader.read();
        if (done) break;
        const piece = decoder.decode(value, { stream: true });
        body += piece;
        options.onChunk?.(piece);
      }
      const flat: Record<string, string> = {};
      response.headers.forEach((value, name) => (flat[name] = value));
      return { status: response.status, headers: flat, body };
    } catch (error) {
      if (options.signal?.aborted) throw new TransportError("aborted", "stopped");
      if (controller.signal.aborted) throw new TransportError("timeout", `no answer within ${options.timeoutMs} ms`);
      throw new TransportError("refused", (error as Error).message);
    } finally {
      if (timer) clearTimeout(timer);
    }
  }
}

/** Node's http where the plugin runs in Obsidian's desktop app, else fetch. */
export function defaultTransport(): Transport {
  try {
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const http = require("http") as NodeHttp;
    if (http && typeof http.request === "function") return new NodeTransport(http);
  } catch {
    // no Node here: fetch
  }
  return new FetchTransport();
}
