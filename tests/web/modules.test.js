// The browser client's modules as files: every name a module imports from another is one
// that module exports. The page loads them with no build step, so a renamed or dropped
// export would stop the whole page at load; this finds it without a browser.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import test from "node:test";

const WEB = new URL("../../clients/web/", import.meta.url);
const files = readdirSync(WEB).filter((name) => name.endsWith(".js"));
const sources = new Map(files.map((name) => [name, readFileSync(new URL(name, WEB), "utf-8")]));

/** The names ``source`` exports: declarations and ``export { … }`` lists. */
function exportsOf(source) {
  const names = new Set();
  for (const m of source.matchAll(/^export (?:async )?(?:function|const|let|class) ([\w$]+)/gm)) names.add(m[1]);
  for (const m of source.matchAll(/^export \{([^}]*)\}/gm)) {
    for (const part of m[1].split(",")) if (part.trim()) names.add(part.trim().split(/\s+as\s+/).pop());
  }
  return names;
}

/** [name, module] for every ``import { … } from "./module.js"`` of ``source``. */
function importsOf(source) {
  const found = [];
  for (const m of source.matchAll(/^import \{([^}]*)\} from "\.\/([\w.]+)";/gm)) {
    for (const part of m[1].split(",")) if (part.trim()) found.push([part.trim().split(/\s+as\s+/)[0], m[2]]);
  }
  return found;
}

test("the client has its modules", () => {
  for (const name of ["app.js", "store.js", "lobby.js", "room.js", "race.js", "results.js", "spectate.js"]) {
    assert.ok(sources.has(name), name);
  }
});

test("every imported name is exported by its module", () => {
  const missing = [];
  let count = 0;
  for (const [file, source] of sources) {
    for (const [name, module] of importsOf(source)) {
      count += 1;
      if (!sources.has(module)) missing.push(`${file}: no module ${module}`);
      else if (!exportsOf(sources.get(module)).has(name)) missing.push(`${file}: ${module} does not export ${name}`);
    }
  }
  assert.ok(count > 100, `only ${count} imports read: the pattern no longer matches the code`);
  assert.deepEqual(missing, []);
});

test("the check itself tells an export from a missing one", () => {
  const source = 'export function a() {}\nexport const $ = 1;\nexport { b } from "./x.js";\nexport { c as d };\n';
  assert.deepEqual([...exportsOf(source)].sort(), ["$", "a", "b", "d"]);
  assert.deepEqual(importsOf('import { a, b as c } from "./m.js";\n'), [["a", "m.js"], ["b", "m.js"]]);
});
