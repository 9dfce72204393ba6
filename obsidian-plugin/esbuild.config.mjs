// Builds src/main.ts into main.js (CommonJS, as Obsidian loads plugins), then copies main.js,
// manifest.json and styles.css into the Python package, which ships them
// (`vaultseek obsidian install`). `npm run build` reproduces the shipped files byte for byte.
import esbuild from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";

const production = process.argv[2] === "production";
const shipped = "../src/vaultseek/obsidian/plugin";

const context = await esbuild.context({
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
});

if (production) {
  await context.rebuild();
  await context.dispose();
  mkdirSync(shipped, { recursive: true });
  for (const name of ["main.js", "manifest.json", "styles.css"]) copyFileSync(name, `${shipped}/${name}`);
} else {
  await context.watch();
}
