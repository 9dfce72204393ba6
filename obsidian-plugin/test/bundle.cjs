// The bundle the tests exercise: the shipped main.js (src/vaultseek/obsidian/plugin/), or the
// one VAULTSEEK_PLUGIN_MAIN names.
"use strict";
const path = require("node:path");
const main = process.env.VAULTSEEK_PLUGIN_MAIN || path.join(__dirname, "..", "..", "src", "vaultseek", "obsidian", "plugin", "main.js");
const bundle = require(main);
module.exports = { Plugin: bundle.default, internals: bundle.internals, obsidian: require("obsidian"), main };
