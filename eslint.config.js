// Lint rules of the project. Type-aware rules (no floating promises) everywhere, and the layout's
// rules for src/ (no-restricted-imports, one entry per file group: a later entry replaces an
// earlier one's options, so each group's entry carries every restriction that applies to it):
// - a folder is entered through its index.ts: an import that crosses folders names
//   `<folder>/index.ts` (src/workflows/messages.ts for the workflows' messages, as
//   src/workflows/index.ts is the worker's bundle entry), but for the few exceptions below;
// - workflow code may import only @temporalio/workflow, src/shared and other workflow files
//   (types from anywhere), because it runs in Temporal's deterministic sandbox, as Temporal's own
//   samples enforce;
// - src/shared imports only itself; src/contract only zod and src/shared;
// - the SDK imports only the contract, shared, and the engine folders it runs in-process;
// - ajv is named by src/schemas/ajv-compiler.ts alone;
// - a Temporal client connection is opened by src/temporal/ alone (connectClient), whose close()
//   waits for the SDK's retries under way: one opened elsewhere can outlive its own close().
import tseslint from "typescript-eslint";
import { builtinModules } from "node:module";

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

/** `../` repeated: from a file `depth` folders under src/ back up to src/. */
const up = (depth) => (depth === 0 ? "\\./" : "(?:\\.\\./){" + depth + "}");

/**
 * Imports that cross folders of src/ go through the folder's index.ts. `allowed` names the
 * exceptions (paths from src/, e.g. "dev/free-port.ts"); the workflows' messages entry is always one.
 */
function indexOnly(depth, allowed = []) {
  const exceptions = ["workflows/messages.ts", ...allowed].map((p) => p.replaceAll(".", "\\.") + "$");
  return {
    regex: `^${up(depth)}(?!${exceptions.join("|")})[^./][^/]*/(?!index\\.ts$).*`,
    message:
      "Import another folder of src/ through its index.ts (the workflows' messages through src/workflows/messages.ts).",
  };
}

const AJV = {
  regex: "^ajv(?:$|[-/])",
  message: "ajv stays behind src/schemas/ajv-compiler.ts: import the schemas folder's index instead.",
};

const WORKFLOW_MESSAGE =
  "Workflow code may import only @temporalio/workflow, src/shared/ and other workflow files (types may come from anywhere with `import type`).";

const noNodeBuiltins = nodeBuiltins.map((name) => ({
  name,
  message: "Workflow code runs in Temporal's deterministic sandbox: no Node built-ins.",
}));

const restrict = (patterns, paths = []) => ({ "no-restricted-imports": ["error", { paths, patterns }] });

/** Files of the CLI: its client commands use the SDK's client and local replay without loading the
 * host-tool worker (Temporal's worker, External Storage drivers), which sdk/index.ts also exports. */
const CLI_EXCEPTIONS = ["sdk/api-client.ts", "sdk/replay.ts"];

export default tseslint.config(
  // Example scripts are written against rewind:tools, which only a toolset's declarations define.
  {
    ignores: [
      "node_modules/**",
      ".rewind/**",
      "bench/results/**",
      "coverage/**",
      "examples/**/script.ts",
      "examples/cli/*.ts",
      "packages/*/dist/**",
      "packages/tarballs/**",
    ],
  },
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
      "no-restricted-syntax": [
        "error",
        {
          selector: "MemberExpression[object.name='Connection'][property.name=/^(connect|lazy)$/]",
          message:
            "Open a Temporal client connection with connectClient (src/temporal/index.ts): its close() waits for the retries under way, the SDK's does not.",
        },
      ],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" },
      ],
    },
  },
  // The test of how a failure is told apart needs lazy connections to a port nothing listens on.
  {
    files: ["test/temporal/unreachable.test.ts"],
    rules: { "no-restricted-syntax": "off" },
  },
  { files: ["src/*.ts"], rules: restrict([indexOnly(0), AJV]) },
  { files: ["src/*/*.ts"], rules: restrict([indexOnly(1), AJV]) },
  { files: ["src/*/*/*.ts"], rules: restrict([indexOnly(2), AJV]) },
  // config.ts is loaded by every process, the CLI's client commands included, which load nothing
  // of Temporal's SDK: it reads the envconfig profile without temporal/index.ts's client and runtime.
  { files: ["src/config.ts"], rules: restrict([indexOnly(0, ["temporal/envconfig.ts"]), AJV]) },
  // The SDK's host-tool worker installs this runtime: the port helper, not the dev server's modules.
  { files: ["src/temporal/temporal-runtime.ts"], rules: restrict([indexOnly(1, ["dev/free-port.ts"]), AJV]) },
  { files: ["src/cli/*.ts"], rules: restrict([indexOnly(1, CLI_EXCEPTIONS), AJV]) },
  { files: ["src/cli/*/*.ts"], rules: restrict([indexOnly(2, CLI_EXCEPTIONS), AJV]) },
  { files: ["src/schemas/ajv-compiler.ts"], rules: restrict([indexOnly(1)]) },
  {
    // The bundle entries (index.ts, versioned.ts), the messages entry and the interceptor.
    files: ["src/workflows/*.ts"],
    rules: restrict(
      [
        indexOnly(1),
        {
          regex: "^(?!@temporalio/workflow$|\\./|\\.\\./shared/).*",
          message: WORKFLOW_MESSAGE,
          allowTypeImports: true,
        },
      ],
      noNodeBuiltins,
    ),
  },
  {
    // run/, records/, delivery/: a sibling sub-folder is workflow code too.
    files: ["src/workflows/*/*.ts"],
    rules: restrict(
      [
        indexOnly(2),
        {
          regex: "^(?!@temporalio/workflow$|\\./|\\.\\./(?!\\.\\./)|\\.\\./\\.\\./shared/).*",
          message: WORKFLOW_MESSAGE,
          allowTypeImports: true,
        },
      ],
      noNodeBuiltins,
    ),
  },
  {
    files: ["src/shared/**/*.ts"],
    rules: restrict([
      {
        regex: "^(?!\\.\\/).*",
        message: "src/shared/ is imported by workflows and every layer: it imports only itself (and types).",
        allowTypeImports: true,
      },
    ]),
  },
  {
    files: ["src/contract/**/*.ts"],
    rules: restrict([
      {
        regex: "^(?!zod$|\\./|\\.\\./shared/index\\.ts$).*",
        message:
          "src/contract/ is what the API and its clients share: it imports only zod, itself and src/shared/index.ts.",
      },
    ]),
  },
  {
    files: ["src/sdk/**/*.ts"],
    rules: restrict([
      AJV,
      {
        regex:
          "^\\.\\./(?!(?:contract|shared|sandbox|declarations|schemas|payloads|temporal|mcp)/index\\.ts$|config\\.ts$).*",
        message:
          "The SDK imports only ./, ../contract/ and ../shared/, plus the index files of the engine folders it runs in-process (local replay: sandbox, declarations, schemas; the host-tool worker: payloads, temporal; code mode's MCP client: mcp; and config.ts) — never the server's folders (api, worker, activities, toolsets, storage, credentials, workflows). See src/contract/index.ts.",
      },
    ]),
  },
);
