// ESLint for the browser client (clients/web) and its unit tests (tests/web). .ci/run runs
// it from the repository's root, so the paths here are relative to that:
//   .ci/npm/node_modules/.bin/eslint --config .ci/npm/eslint.config.js
// The config sits beside the pinned install (package.json, package-lock.json) because it
// imports from it: Node resolves a config's imports from the config's own folder.

import js from "@eslint/js";
import globals from "globals";

/** Selectors for a write to ``name`` (``name.x = …``, ``name.x += …``, ``name.x++``,
 * ``Object.assign(name, …)``, ``name.x.set(…)`` and the like), also as a property
 * (``this.app.name.x = …``). */
function writesTo(name) {
  const message = `${name} is changed by store.js's updates only`;
  const target = `:matches([object.name='${name}'], [object.property.name='${name}'])`;
  return [
    `AssignmentExpression > MemberExpression.left${target}`,
    `UpdateExpression > MemberExpression.argument${target}`,
    `CallExpression[callee.object.name='Object'][callee.property.name='assign'][arguments.0.name='${name}']`,
    `CallExpression > MemberExpression.callee[property.name=/^(set|delete|clear|push|pop|shift|unshift|splice)$/] > MemberExpression.object${target}`,
  ].map((selector) => ({ selector, message }));
}

export default [
  js.configs.recommended,
  {
    files: ["clients/web/**/*.js"],
    languageOptions: { ecmaVersion: 2024, sourceType: "module", globals: globals.browser },
  },
  {
    files: ["tests/web/**/*.js"],
    languageOptions: { ecmaVersion: 2024, sourceType: "module", globals: globals.node },
  },
  {
    // the room's state is written by store.js's named updates only: screens read it
    files: ["clients/web/**/*.js"],
    ignores: ["clients/web/store.js"],
    rules: { "no-restricted-syntax": ["error", ...writesTo("state")] },
  },
  {
    rules: {
      eqeqeq: ["error", "always"],
      "no-var": "error",
      "prefer-const": "error",
    },
  },
];
