/**
 * The declarations folder's public surface: what the API and the type-check step import to turn
 * a pinned toolset into the `rewind:tools` declarations.
 */
export { formatJsDoc, isIdentifierName, jsonSchemaToTs, propertyKey } from "./json-schema-to-ts.ts";
export type { JsonSchemaToTsOptions, TypeStyle } from "./json-schema-to-ts.ts";
export { argsAreOptional, isBindingName, renderDts } from "./render-dts.ts";
export { BUILTIN_EXPORTS } from "../shared/index.ts";
export type { ObservedResult, RenderOptions } from "./render-dts.ts";
export { renderPrompt, summarize } from "./render-prompt.ts";
export { compactLine, renderCompactPrompt } from "./render-compact.ts";
export { SCRIPT_GUIDE, withScriptGuide } from "./script-guide.ts";
export { compileScript, MAX_SCRIPT_BYTES } from "./compile-script.ts";
export { createTypeChecker, type TypeChecker, type Diagnostic, type ScriptInspection } from "./type-check.ts";
export {
  createTypeCheckPool,
  TypeCheckAbandonedError,
  TypeCheckQueueFullError,
  type ScriptChecker,
  type TypeCheckPool,
  type TypeCheckPoolOptions,
} from "./type-check-pool.ts";
export { checkedTypeText } from "./type-text.ts";
export { findCallSites, type CallSite } from "./call-sites.ts";
