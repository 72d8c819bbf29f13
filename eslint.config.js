// ESLint with typescript-eslint's recommended rules, over the sources, tests, benchmarks and
// scripts; test/scripts/lint.test.ts runs it in `npm test`, and `npm run lint` alone.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "node_modules/**",
      "src/generated/**",
      "coverage/**",
      "test-artifacts/**",
      "examples/**/state/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
      // converge matches control characters on purpose: terminal-safe text, hostile input.
      "no-control-regex": "off",
    },
  },
);
