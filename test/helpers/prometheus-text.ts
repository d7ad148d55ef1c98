/**
 * A strict reader of Prometheus' text exposition format (version 0.0.4), for tests that scrape
 * Rewind: it throws on anything a Prometheus server would refuse or misread — a malformed line,
 * name, label or value, a family declared twice or split in two, a sample before its TYPE of
 * another family, histogram buckets that are not cumulative or whose `+Inf` bucket is not the
 * count — and gives back the samples to assert on.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** Family name → its declared TYPE. */
  types: Map<string, string>;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
const SUFFIXES = ["_bucket", "_sum", "_count", "_total", "_created", "_gcount", "_gsum"];

function parseValue(raw: string, line: string): number {
  if (raw === "+Inf" || raw === "Inf") return Number.POSITIVE_INFINITY;
  if (raw === "-Inf") return Number.NEGATIVE_INFINITY;
  if (raw === "NaN") return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw)) throw new Error(`not a number "${raw}" in: ${line}`);
  return Number(raw);
}

/** Reads `{a="x",b="y"}` starting at `text[0] === "{"`; answers the labels and what follows. */
function parseLabels(text: string, line: string): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let i = 1;
  for (;;) {
    while (text[i] === " ") i++;
    if (text[i] === "}") return { labels, rest: text.slice(i + 1) };
    const nameMatch = /^[^=\s]+/.exec(text.slice(i));
    const name = nameMatch?.[0] ?? "";
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name "${name}" in: ${line}`);
    if (name in labels) throw new Error(`label ${name} twice in: ${line}`);
    i += name.length;
    if (text[i] !== "=" || text[i + 1] !== '"') throw new Error(`label ${name} has no quoted value in: ${line}`);
    i += 2;
    let value = "";
    for (;;) {
      const c = text[i];
      if (c === undefined) throw new Error(`unterminated label value in: ${line}`);
      if (c === '"') break;
      if (c === "\\") {
        const next = text[i + 1];
        if (next === "n") value += "\n";
        else if (next === "\\" || next === '"') value += next;
        else throw new Error(`bad escape \\${String(next)} in: ${line}`);
        i += 2;
      } else {
        value += c;
        i += 1;
      }
    }
    labels[name] = value;
    i += 1;
    if (text[i] === ",") i += 1;
    else if (text[i] !== "}") throw new Error(`expected , or } after label ${name} in: ${line}`);
  }
}

function familyOf(name: string, types: Map<string, string>): string {
  if (types.has(name)) return name;
  for (const suffix of SUFFIXES) {
    if (name.endsWith(suffix) && types.has(name.slice(0, -suffix.length))) return name.slice(0, -suffix.length);
  }
  return name;
}

function checkHistograms(samples: Sample[], types: Map<string, string>): void {
  const series = new Map<string, { buckets: { le: number; value: number }[]; count?: number }>();
  for (const sample of samples) {
    const family = familyOf(sample.name, types);
    if (types.get(family) !== "histogram") continue;
    const { le, ...rest } = sample.labels;
    const key = `${family}${JSON.stringify(Object.entries(rest).sort())}`;
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (sample.name === `${family}_bucket`) {
      if (le === undefined) throw new Error(`${sample.name} without le`);
      entry.buckets.push({ le: parseValue(le, sample.name), value: sample.value });
    } else if (sample.name === `${family}_count`) {
      entry.count = sample.value;
    }
  }
  for (const [key, { buckets, count }] of series) {
    const sorted = [...buckets].sort((a, b) => a.le - b.le);
    for (let i = 1; i < sorted.length; i++) {
      if ((sorted[i]?.value ?? 0) < (sorted[i - 1]?.value ?? 0)) throw new Error(`${key}: buckets are not cumulative`);
    }
    const inf = sorted.at(-1);
    if (!inf || inf.le !== Number.POSITIVE_INFINITY) throw new Error(`${key}: no +Inf bucket`);
    if (count !== inf.value) throw new Error(`${key}: _count ${String(count)} is not the +Inf bucket ${inf.value}`);
  }
}

/** Parses a scrape, throwing on the first thing a Prometheus server would not take. */
export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const helped = new Set<string>();
  const samples: Sample[] = [];
  const finished = new Set<string>();
  let current: string | undefined;
  const enter = (family: string, line: string) => {
    if (family === current) return;
    if (finished.has(family)) throw new Error(`family ${family} is split in two at: ${line}`);
    if (current !== undefined) finished.add(current);
    current = family;
  };
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    if (line.startsWith("#")) {
      const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!meta) continue; // a plain comment
      const [, kind, name = "", rest = ""] = meta;
      if (!NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
      enter(name, line);
      if (kind === "TYPE") {
        if (types.has(name)) throw new Error(`TYPE of ${name} twice`);
        if (samples.some((s) => familyOf(s.name, new Map([[name, rest]])) === name))
          throw new Error(`TYPE of ${name} after its samples`);
        if (!TYPES.has(rest)) throw new Error(`unknown type "${rest}" in: ${line}`);
        types.set(name, rest);
      } else {
        if (helped.has(name)) throw new Error(`HELP of ${name} twice`);
        helped.add(name);
      }
      continue;
    }
    const nameMatch = /^[^{\s]+/.exec(line);
    const name = nameMatch?.[0] ?? "";
    if (!NAME.test(name)) throw new Error(`bad metric name "${name}" in: ${line}`);
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith("{")) ({ labels, rest } = parseLabels(rest, line));
    const fields = rest.trim().split(/\s+/);
    if (!rest.startsWith(" ") || fields.length < 1 || fields.length > 2)
      throw new Error(`expected a value (and a timestamp) in: ${line}`);
    const value = parseValue(fields[0] ?? "", line);
    if (fields[1] !== undefined && !/^-?\d+$/.test(fields[1])) throw new Error(`bad timestamp in: ${line}`);
    enter(familyOf(name, types), line);
    samples.push({ name, labels, value });
  }
  checkHistograms(samples, types);
  return { samples, types };
}

/** Samples of `name` whose labels include `labels`. */
export function samplesOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return exposition.samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
}

/** The sum of the samples of `name` whose labels include `labels` (0 when there are none). */
export function valueOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  return samplesOf(exposition, name, labels).reduce((sum, s) => sum + s.value, 0);
}
