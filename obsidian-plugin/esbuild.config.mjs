// Builds src/main.ts into main.js (CommonJS, as Obsidian loads plugins), then copies main.js,
// manifest.json and styles.css into the Python package, which ships them
// (`vaultseek obsidian install`). `npm run build` reproduces the shipped files byte for byte.
import esbuild from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";

// `node esbuild.config.mjs check`: build in memory and fail if the shipped main.js differs.
const mode = process.argv[2];
const production = mode === "production" || mode === "check";
const shipped = "../src/vaultseek/obsidian/plugin";

const options = {
  entryPoints: ["src/main.ts"],
  bundle: true,
  external: ["obsidian", "electron", "@codemirror/*", "@lezer/*", "node:*", "http", "child_process"],
  format: "cjs",
  target: "es2020",
  platform: "browser",
  logLevel: "info",
  sourcemap: production ? false : "inline",
  treeShaking: true,
  legalComments: "none",
  outfile: "main.js",
};

if (mode === "check") {
  const built = await esbuild.build({ ...options, write: false, logLevel: "silent" });
  const { readFileSync } = await import("node:fs");
  const fresh = built.outputFiles[0].text;
  const shippedText = readFileSync(`${shipped}/main.js`, "utf8");
  if (fresh !== shippedText) {
    console.error(`${shipped}/main.js is not what src/ builds: run npm run build`);
    process.exit(1);
  }
  console.log("the shipped main.js is what src/ builds");
  process.exit(0);
}

const context = await esbuild.context(options);

if (production) {
  await context.rebuild();
  await context.dispose();
  mkdirSync(shipped, { recursive: true });
  for (const name of ["main.js", "manifest.json", "styles.css"]) copyFileSync(name, `${shipped}/${name}`);
} else {
  await context.watch();
}
