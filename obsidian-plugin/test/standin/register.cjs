// `node --require ./test/standin/register.cjs`: `require("obsidian")` gives the stand-in.
"use strict";
const Module = require("node:module");
const path = require("node:path");
const standin = path.join(__dirname, "obsidian.cjs");
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === "obsidian" ? standin : resolve.call(this, request, ...rest);
};
