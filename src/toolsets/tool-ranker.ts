/**
 * Ranks the tools of a large toolset against a few words, without a model, so a harness can show
 * a model the handful of tools a task needs instead of a thousand. It is BM25F: each tool is
 * three fields (its name, its group, its description), a word found in the name counts more than
 * one found in the description, and a word most tools share (`list`, `get`) counts for little.
 * Words are split where tool names split them (snake_case, camelCase, kebab-case, dots) and cut to
 * a crude stem, so `listIssues`, `list_issues` and "lists the issues" meet.
 */

export interface RankedTool {
  group: string;
  name: string;
  description?: string | undefined;
}

export interface ToolRanker {
  /** Indexes of the best tools, best first, only those sharing a word with the query; ties keep toolset order. */
  rank(query: string, limit: number): { index: number; score: number }[];
}

type Field = "name" | "group" | "description";

/** How much a word in each field counts, and how much a long field dilutes it (BM25's b). */
const FIELDS: Record<Field, { weight: number; b: number }> = {
  name: { weight: 3, b: 0.3 },
  group: { weight: 1.5, b: 0 },
  description: { weight: 1, b: 0.75 },
};
/** BM25's saturation: the tenth mention of a word adds far less than the first. */
const K1 = 1.2;
/** Only the start of a description is indexed: a manual pasted into one must not make it match everything. */
const MAX_DESCRIPTION = 2_000;

const STOP_WORDS = new Set(
  (
    "a an and are as at be by can do does for from has have how i if in into is it its me my not of on or our " +
    "please so some than that the their them then there these this those to us was we what when where which " +
    "who will with you your"
  ).split(" "),
);

/** Lower-case words of `text`, split at case changes and punctuation, stop words out, stemmed. */
export function tokenize(text: string): string[] {
  return text
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2")
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== "" && !STOP_WORDS.has(word))
    .map(stem);
}

/** A crude suffix stripper: plurals, -ing, -ed and a final e, so word forms of one verb or noun meet. */
export function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith("ies")) w = `${w.slice(0, -3)}y`;
  else if (w.length > 3 && w.endsWith("s") && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith("ing")) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith("ed")) w = w.slice(0, -2);
  if (w.length > 4 && w.endsWith("e")) w = w.slice(0, -1);
  return w;
}

interface Indexed {
  /** Per field: how often each word occurs, and how many words the field has. */
  fields: Record<Field, { counts: Map<string, number>; length: number }>;
}

function countWords(text: string): { counts: Map<string, number>; length: number } {
  const words = tokenize(text);
  const counts = new Map<string, number>();
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
  return { counts, length: words.length };
}

export function createToolRanker(tools: readonly RankedTool[]): ToolRanker {
  const docs: Indexed[] = tools.map((tool) => ({
    fields: {
      name: countWords(tool.name),
      group: countWords(tool.group),
      description: countWords((tool.description ?? "").slice(0, MAX_DESCRIPTION)),
    },
  }));
  const average = {} as Record<Field, number>;
  for (const field of Object.keys(FIELDS) as Field[]) {
    const total = docs.reduce((sum, doc) => sum + doc.fields[field].length, 0);
    average[field] = docs.length > 0 ? Math.max(total / docs.length, 1) : 1;
  }
  const documentFrequency = new Map<string, number>();
  for (const doc of docs) {
    const words = new Set(Object.values(doc.fields).flatMap((f) => [...f.counts.keys()]));
    for (const word of words) documentFrequency.set(word, (documentFrequency.get(word) ?? 0) + 1);
  }
  const idf = (word: string): number => {
    const df = documentFrequency.get(word) ?? 0;
    return Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
  };

  function score(doc: Indexed, words: string[]): number {
    let total = 0;
    for (const word of words) {
      let tf = 0;
      for (const field of Object.keys(FIELDS) as Field[]) {
        const { counts, length } = doc.fields[field];
        const count = counts.get(word);
        if (!count) continue;
        const { weight, b } = FIELDS[field];
        tf += (weight * count) / (1 - b + (b * length) / average[field]);
      }
      if (tf > 0) total += (idf(word) * tf) / (K1 + tf);
    }
    return total;
  }

  return {
    rank(query, limit) {
      const words = [...new Set(tokenize(query))].filter((word) => documentFrequency.has(word));
      if (words.length === 0) return [];
      return docs
        .map((doc, index) => ({ index, score: score(doc, words) }))
        .filter((hit) => hit.score > 0)
        .sort((a, b) => b.score - a.score || a.index - b.index)
        .slice(0, limit);
    },
  };
}
