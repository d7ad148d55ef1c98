/**
 * JSON Schema validation of tool arguments and results, and whether a tool's schema can be used at
 * all (dialect, refs). ajv stays behind ajv-compiler.ts (lint-enforced): nothing else names it.
 */
export type { SchemaProblem, SchemaProblemReason } from "./ajv-compiler.ts";
export { SCHEMA_DIALECTS, type SchemaDialect } from "./schema-dialect.ts";
export { validateAgainstSchema, schemaProblem } from "./schema-validator.ts";
