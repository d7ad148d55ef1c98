/** The sandbox's public surface: one step of a script, with warm sessions and limits. */
export { createSandbox, type Sandbox, type SandboxOptions } from "./sandbox.ts";
export { validateAgainstSchema, schemaProblem } from "../schemas/schema-validator.ts";
export type { SchemaProblem, SchemaProblemReason } from "../schemas/ajv-compiler.ts";
export { SCHEMA_DIALECTS, type SchemaDialect } from "../schemas/schema-dialect.ts";
export { isExportableName, RESERVED_EXPORTS } from "./module-sources.ts";
