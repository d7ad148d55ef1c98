/**
 * Reading the README as a test reads it: a section by its heading, its fenced code blocks, the
 * commands of a transcript (`$ rewind …` and the lines it printed, or `curl …` and the `# …`
 * answer under it), and a check that output carries a transcript's lines in order. A printed
 * line is compared with the README's literally, except where the README could not know the value:
 * `…` (elided), run and toolset ids, loopback ports and durations.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "../helpers/paths.ts";

export function readReadme(): string {
  return readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
}

/** The text under `## heading` up to the next heading of that level. */
export function section(readme: string, heading: string): string {
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`the README has no "## ${heading}" section`);
  const end = readme.indexOf("\n## ", start + 4);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The contents of the fenced blocks of `lang` (`sh`, `text`…), in order. */
export function codeBlocks(text: string, lang: string): string[] {
  const blocks: string[] = [];
  const fence = new RegExp("^```" + lang + "\\n([\\s\\S]*?)^```", "gm");
  for (const match of text.matchAll(fence)) blocks.push(match[1] ?? "");
  return blocks;
}

export interface TranscriptStep {
  command: string;
  /** What the README shows it printing, one entry per line. */
  expected: string[];
}

/** `$ command` lines of a `text` block, each with the lines up to the next command. */
export function transcript(block: string): TranscriptStep[] {
  const steps: TranscriptStep[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("$ ")) steps.push({ command: line.slice(2), expected: [] });
    else steps.at(-1)?.expected.push(line);
  }
  return steps;
}

/** `curl …` commands of an `sh` block (with their `\` continuations) and the `# …` answer under each. */
export function curlSteps(block: string): TranscriptStep[] {
  const steps: TranscriptStep[] = [];
  let open = false;
  for (const line of block.split("\n")) {
    const last = steps.at(-1);
    if (open && last) last.command += `\n${line}`;
    else if (line.startsWith("curl ")) steps.push({ command: line, expected: [] });
    else if (line.startsWith("# ") && last) last.expected.push(line.slice(2));
    open = line.endsWith("\\");
  }
  return steps;
}

const VARYING = /…|127\.0\.0\.1:\d+|run_[0-9A-Z]{26}|ts_[0-9a-f]{64}|\b\d+(?:\.\d+)? m?s\b/g;

function generic(token: string): string {
  if (token === "…") return ".*?";
  if (token.startsWith("127.")) return "127\\.0\\.0\\.1:\\d+";
  if (token.startsWith("run_")) return "run_[0-9A-Z]{26}";
  if (token.startsWith("ts_")) return "ts_[0-9a-f]{64}";
  return "\\d+(?:\\.\\d+)? m?s";
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A piece of a README line as a regular expression's source, its varying tokens generic. */
function sourceOf(expected: string): string {
  let source = "";
  let at = 0;
  for (const match of expected.matchAll(VARYING)) {
    source += escape(expected.slice(at, match.index)) + generic(match[0]);
    at = match.index + match[0].length;
  }
  return source + escape(expected.slice(at));
}

/**
 * `--watch` repeats a call's arguments on the line that says it finished only when it never
 * showed the call starting: whether it did depends on when it polled, so a README line with them
 * also matches the line without them.
 */
const FINISHED_WITH_ARGS = /^(\s*✓ \d+ [\w.-]+)(\(.*?\))(\s.*)$/;

/** A README line as a pattern for the whole of a printed line. */
export function linePattern(expected: string): RegExp {
  const finished = FINISHED_WITH_ARGS.exec(expected);
  if (finished) {
    const [, call = "", args = "", rest = ""] = finished;
    return new RegExp(`^${sourceOf(call)}(?:${sourceOf(args)})?${sourceOf(rest)}$`);
  }
  // And the other way round: a README line without them matches a printed line with them.
  const finishedBare = FINISHED_BARE.exec(expected);
  if (finishedBare) {
    const [, call = "", rest = ""] = finishedBare;
    return new RegExp(`^${sourceOf(call)}(?:\\(.*?\\))?${sourceOf(rest)}$`);
  }
  return new RegExp(`^${sourceOf(expected)}$`);
}

const FINISHED_BARE = /^(\s*[✓✗] \d+ [\w.-]+)(\s.*)$/;

/**
 * A README line announcing a call (`→ 1 tickets.list_tickets({})`) is printed only when `--watch`
 * saw the call start; a call that started and finished between two polls is printed once, as
 * finished with its arguments. Such a line stands for both, and is not used up by the first.
 */
const ANNOUNCED = /^(\s*)→ (\d+ [\w.-]+\(.*\))$/;

function finishedInstead(expected: string): RegExp | undefined {
  const announced = ANNOUNCED.exec(expected);
  if (!announced) return undefined;
  const [, indent = "", call = ""] = announced;
  return new RegExp(`^${escape(indent)}[✓✗] ${sourceOf(call)}\\s`);
}

/**
 * Throws unless `output` has a line matching each of `expected`'s, in the same order (other lines
 * may come between). Blank README lines and lines that are only `…` match anything.
 */
export function assertLinesInOrder(output: string, expected: string[]): void {
  const lines = output.split("\n").map((line) => line.trimEnd());
  let at = 0;
  for (const want of expected.map((line) => line.trimEnd())) {
    if (want === "" || want === "…") continue;
    const pattern = linePattern(want);
    const instead = finishedInstead(want);
    const found = lines.findIndex((line, i) => i >= at && (pattern.test(line) || instead?.test(line) === true));
    if (found < 0) throw new Error(`the output has no line like the README's\n  ${want}\nafter line ${at}:\n${output}`);
    at = instead?.test(lines[found] ?? "") && !pattern.test(lines[found] ?? "") ? found : found + 1;
  }
}
