/**
 * The arguments of a revert, as a tool's policy names them: a JSON value in which a string that
 * is exactly `{{args.path}}` or `{{result.path}}` stands for that value of the original call
 * (with its JSON type), and everything else is a literal. No expressions, no interpolation, no
 * code: a path is dot-separated keys or array indices. Shared because registration checks a
 * template and the run workflow fills it in, and both must read it the same way.
 */
import { setOwn } from "./own-keys.ts";

/** Where a placeholder takes its value: the original call's arguments or its result. */
export type PlaceholderSource = "args" | "result";

export interface Placeholder {
  source: PlaceholderSource;
  /** Keys and array indices, in order; empty for the whole value. */
  path: string[];
}

/** The most nesting a template may have, and the most characters of JSON it may take. */
export const MAX_TEMPLATE_DEPTH = 16;
export const MAX_TEMPLATE_CHARS = 16_384;

const PLACEHOLDER = /^\{\{\s*([^{}]*?)\s*\}\}$/;
const SEGMENT = /^[A-Za-z0-9_$-]+$/;

/** A problem of a template, with where it is (`args.chargeId`, `args.items.0`). */
export interface TemplateProblem {
  at: string;
  message: string;
}

/** The placeholder a string is, undefined for a literal, or a problem when it is neither. */
export function parsePlaceholder(text: string): Placeholder | undefined | { problem: string } {
  const match = PLACEHOLDER.exec(text);
  if (!match) {
    return text.includes("{{") || text.includes("}}")
      ? { problem: "a placeholder must be the whole string, exactly {{args.path}} or {{result.path}}" }
      : undefined;
  }
  const [source, ...path] = (match[1] ?? "").split(".");
  if (source !== "args" && source !== "result")
    return { problem: `placeholders refer to args or result, not "${source ?? ""}"` };
  const bad = path.find((segment) => !SEGMENT.test(segment));
  if (bad !== undefined)
    return { problem: `"${bad}" is not a path segment (letters, digits, _, $ and - between dots)` };
  return { source, path };
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const join = (at: string, key: string): string => `${at}.${key}`;

/** Every problem of a template; none means it can be filled in. `at` names its root (`args`). */
export function checkTemplate(template: unknown, at = "args"): TemplateProblem[] {
  const problems: TemplateProblem[] = [];
  const text = JSON.stringify(template);
  if (text === undefined) return [{ at, message: "must be JSON" }];
  if (text.length > MAX_TEMPLATE_CHARS)
    return [{ at, message: `is ${text.length} characters of JSON, more than ${MAX_TEMPLATE_CHARS}` }];
  const walk = (value: unknown, where: string, depth: number): void => {
    if (depth > MAX_TEMPLATE_DEPTH) {
      problems.push({ at: where, message: `nests deeper than ${MAX_TEMPLATE_DEPTH} levels` });
      return;
    }
    if (typeof value === "string") {
      const parsed = parsePlaceholder(value);
      if (parsed && "problem" in parsed) problems.push({ at: where, message: parsed.problem });
      return;
    }
    if (Array.isArray(value)) {
      value.forEach((item, index) => walk(item, join(where, String(index)), depth + 1));
      return;
    }
    if (isPlainObject(value)) {
      for (const [key, item] of Object.entries(value)) {
        if (key.includes("{{") || key.includes("}}"))
          problems.push({ at: join(where, key), message: "keys are literal: a placeholder can only be a value" });
        walk(item, join(where, key), depth + 1);
      }
      return;
    }
    if (typeof value === "number" && !Number.isFinite(value))
      problems.push({ at: where, message: "must be a finite number" });
  };
  walk(template, at, 0);
  return problems;
}

/** Every placeholder of a template with where it stands, for checks against the revert tool's schema. */
export function placeholdersOf(template: unknown): { at: string[]; placeholder: Placeholder }[] {
  const found: { at: string[]; placeholder: Placeholder }[] = [];
  const walk = (value: unknown, at: string[]): void => {
    if (typeof value === "string") {
      const parsed = parsePlaceholder(value);
      if (parsed && !("problem" in parsed)) found.push({ at, placeholder: parsed });
    } else if (Array.isArray(value)) value.forEach((item, index) => walk(item, [...at, String(index)]));
    else if (isPlainObject(value)) for (const [key, item] of Object.entries(value)) walk(item, [...at, key]);
  };
  walk(template, []);
  return found;
}

/** The value at `path` in `value`, own properties and array indices only; missing says where it stopped. */
function lookUp(value: unknown, placeholder: Placeholder): { value: unknown } | { missing: string } {
  let current = value;
  const walked: string[] = [placeholder.source];
  for (const segment of placeholder.path) {
    if (Array.isArray(current) && /^(0|[1-9][0-9]*)$/.test(segment) && Number(segment) < current.length)
      current = current[Number(segment)];
    else if (isPlainObject(current) && Object.hasOwn(current, segment)) current = current[segment];
    else return { missing: `${walked.join(".")} has no "${segment}"` };
    walked.push(segment);
  }
  if (current === undefined) return { missing: `${walked.join(".")} is missing` };
  return { value: current };
}

export type FilledTemplate = { ok: true; value: unknown } | { ok: false; reason: string };

/**
 * Fills a checked template in with the original call's arguments and result. A placeholder whose
 * path is missing fails the whole revert, naming the placeholder and where its path stopped.
 */
export function fillTemplate(template: unknown, sources: { args: unknown; result: unknown }): FilledTemplate {
  let failed: string | undefined;
  const walk = (value: unknown): unknown => {
    if (failed !== undefined) return null;
    if (typeof value === "string") {
      const parsed = parsePlaceholder(value);
      if (parsed === undefined) return value;
      if ("problem" in parsed) {
        failed = `"${value}": ${parsed.problem}`;
        return null;
      }
      const found = lookUp(sources[parsed.source], parsed);
      if ("missing" in found) {
        failed = `${value}: ${found.missing}`;
        return null;
      }
      return found.value;
    }
    if (Array.isArray(value)) return value.map(walk);
    if (isPlainObject(value)) {
      const filled: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        // Defined, not assigned: a literal "__proto__" key stays a key.
        setOwn(filled, key, walk(item));
      }
      return filled;
    }
    return value;
  };
  const value = walk(template);
  return failed === undefined ? { ok: true, value } : { ok: false, reason: failed };
}
