// ESLint for the browser client (clients/web) and its unit tests (tests/web). .ci/run runs
// it from the repository's root, so the paths here are relative to that:
//   .ci/npm/node_modules/.bin/eslint --config .ci/npm/eslint.config.js
// The config sits beside the pinned install (package.json, package-lock.json) because it
// imports from it: Node resolves a config's imports from the config's own folder.

import js from "@eslint/js";
import globals from "globals";

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
    rules: {
      eqeqeq: ["error", "always"],
      "no-var": "error",
      "prefer-const": "error",
    },
  },
];
