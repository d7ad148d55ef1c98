/**
 * Which names a group of a toolset may take. A group becomes an export of `rewind:tools` that a
 * script imports by name (`import { github } from "rewind:tools"`), so its name must be a
 * binding a module can export and a script can import, and must not hide what the script or the
 * tools module relies on: the language's globals (`Object`, `JSON`, …), the module's own exports
 * (`sleep`, …) and the http tool's `fetch`. Registration refuses any other name with the rule.
 */

/** Names `rewind:tools` exports besides the groups. */
export const BUILTIN_EXPORTS = [
  "sleep",
  "waitForSignal",
  "webhook",
  "workflows",
  "ToolError",
  "ToolErrorCode",
] as const;

const RESERVED_WORDS = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for " +
    "function if import in instanceof new null return super switch this throw true try typeof var void while with " +
    "yield let static implements interface package private protected public await"
  ).split(" "),
);

/** The script's global names: the language's, the console, and the http tool's `fetch`. */
const GLOBAL_NAMES = new Set(
  (
    "globalThis Infinity NaN undefined eval arguments isFinite isNaN parseFloat parseInt decodeURI " +
    "decodeURIComponent encodeURI encodeURIComponent escape unescape AggregateError Array ArrayBuffer BigInt " +
    "BigInt64Array BigUint64Array Boolean DataView Date Error EvalError FinalizationRegistry Float32Array " +
    "Float64Array Function Int8Array Int16Array Int32Array Map Number Object Promise Proxy RangeError " +
    "ReferenceError RegExp Set SharedArrayBuffer String Symbol SyntaxError TypeError Uint8Array " +
    "Uint8ClampedArray Uint16Array Uint32Array URIError WeakMap WeakRef WeakSet Atomics JSON Math Reflect Intl " +
    "console fetch rewind"
  ).split(" "),
);

/** Whether `name` is a reserved word of JavaScript in a module (strict mode). */
export function isReservedWord(name: string): boolean {
  return RESERVED_WORDS.has(name);
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const MAX_GROUP_NAME = 64;

/** Why `name` can't be a group's name, in a sentence; undefined when it can. */
export function groupNameProblem(name: string): string | undefined {
  const quoted = JSON.stringify(name);
  if (!IDENTIFIER.test(name)) {
    const suggestion = name.replace(/[^A-Za-z0-9_$]+(.)?/g, (_, next: string | undefined) => next?.toUpperCase() ?? "");
    const hint = IDENTIFIER.test(suggestion) ? ` (e.g. ${JSON.stringify(suggestion)})` : "";
    return `group name ${quoted} is not a JavaScript identifier: use letters, digits, _ and $, not starting with a digit${hint}; a group is imported by name from rewind:tools`;
  }
  if (name.length > MAX_GROUP_NAME) return `group name ${quoted} is longer than ${MAX_GROUP_NAME} characters`;
  if (RESERVED_WORDS.has(name))
    return `group name ${quoted} is a reserved word of JavaScript, which a script cannot import`;
  if (name.startsWith("__")) return `group name ${quoted} starts with __, which rewind:tools keeps for itself`;
  if ((BUILTIN_EXPORTS as readonly string[]).includes(name))
    return `group name ${quoted} is a built-in export of rewind:tools (${BUILTIN_EXPORTS.join(", ")})`;
  if (GLOBAL_NAMES.has(name)) return `group name ${quoted} would hide the script's global ${name}`;
  return undefined;
}
