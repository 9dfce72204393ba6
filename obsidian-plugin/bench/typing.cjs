// Keystroke-to-list latency of the plugin's search box against a running vaultseek
// (benchmarks/obsidian.py starts it): each query is typed a character at a time, `gapMs` apart,
// into the plugin's SearchSession (the shipped bundle, its debounce); the time from the last
// keystroke to the rows being ready is one sample. Prints JSON.
"use strict";
const http = require("node:http");
const { internals: I } = require("../test/bundle.cjs");

const [url, token, queriesJson, debounceList, gapMs] = process.argv.slice(2);
const sets = JSON.parse(queriesJson); // the direct searches' queries, then one set per debounce
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  let requests = 0;
  const transport = new I.NodeTransport(http);
  const counting = { send: (...args) => { requests += 1; return transport.send(...args); } };
  const client = new I.VaultseekClient(() => ({ serverUrl: url, token, autoStart: false }), counting, () => null);
  for (const q of ["warm up", "list files", "network settings"]) await client.search(q, 12); // warm the server
  const result = {};
  // The search alone, no debounce, no typing: what the server and the transport cost.
  const direct = [];
  for (const q of sets[0]) {
    const started = performance.now();
    await client.search(I.readQuery(q).query, 12);
    direct.push(performance.now() - started);
  }
  result.direct = direct;
  const debounces = debounceList.split(",").map(Number);
  for (const [n, debounce] of debounces.entries()) {
    const queries = sets[n + 1];
    const session = new I.SearchSession(client, () => true, debounce);
    const latencies = [];
    requests = 0;
    let keystrokes = 0;
    for (const q of queries) {
      let last = null;
      let lastAt = 0;
      for (let n = 1; n <= q.length; n++) {
        lastAt = performance.now();
        last = session.rows(q.slice(0, n));
        keystrokes += 1;
        if (n < q.length) await sleep(Number(gapMs));
      }
      const rows = await last;
      latencies.push(performance.now() - lastAt);
      if (!rows.length || rows[0].kind === "problem") throw new Error(`no rows for ${q}: ${JSON.stringify(rows[0])}`);
      await sleep(300); // a pause between queries: the in-flight searches of this one finish
    }
    result[debounce] = { latencies, requests, keystrokes };
  }
  process.stdout.write(JSON.stringify(result));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
