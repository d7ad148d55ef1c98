// Lint rules of the project. Type-aware rules (no floating promises) everywhere; the workflow
// folder additionally may import only @temporalio/workflow, src/shared and types, because
// workflow code runs in Temporal's deterministic sandbox, as Temporal's own samples enforce.
import tseslint from "typescript-eslint";
import { builtinModules } from "node:module";

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

export default tseslint.config(
  // Example scripts are written against rewind:tools, which only a toolset's declarations define.
  { ignores: ["node_modules/**", ".rewind/**", "bench/results/**", "coverage/**", "examples/**/script.ts"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { arguments: false } }],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" },
      ],
    },
  },
  {
    files: ["src/workflows/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: "Workflow code runs in Temporal's deterministic sandbox: no Node built-ins.",
          })),
          patterns: [
            {
              regex: "^(?!@temporalio/workflow$|\\.\\/|\\.\\.\\/shared\\/).*",
              message:
                "Workflow code may import only @temporalio/workflow, src/shared/ and other workflow files (types may come from anywhere with `import type`).",
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    files: ["src/shared/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(?!\\.\\/).*",
              message: "src/shared/ is imported by workflows and every layer: it imports only itself (and types).",
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
);
