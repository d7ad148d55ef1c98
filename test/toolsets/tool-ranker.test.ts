/**
 * The tool ranker as its specification: how words are split and stemmed, that the right tool
 * ranks first among a thousand look-alikes for queries typed as a person or a model would, that a
 * word in a name counts more than one in a description, and what it answers for nothing.
 */
import { describe, expect, it } from "vitest";
import { createToolRanker, stem, tokenize, type RankedTool } from "../../src/toolsets/tool-ranker.ts";
import { gatewayTools, NEEDLE_QUERIES, NEEDLES } from "../helpers/large-toolset.ts";

const tools: RankedTool[] = [...gatewayTools(), ...NEEDLES];
const ranker = createToolRanker(tools);
const top = (query: string, limit = 5) =>
  ranker
    .rank(query, limit)
    .map(({ index, score }) => ({ name: `${tools[index]?.group}.${tools[index]?.name}`, score }));

describe("tokenize", () => {
  it("splits snake_case, camelCase, kebab-case, dots and acronyms, lower-cased", () => {
    expect(tokenize("github.list_issues")).toEqual(["github", "list", "issu"]);
    expect(tokenize("listIssues")).toEqual(["list", "issu"]);
    expect(tokenize("add-reaction")).toEqual(["add", "reaction"]);
    expect(tokenize("parseHTTPResponse v2")).toEqual(["pars", "http", "respons", "v2"]);
  });

  it("drops stop words and meets word forms of one stem", () => {
    expect(tokenize("Lists the issues of a repository")).toEqual(["list", "issu", "repository"]);
    expect(["created", "creates", "create", "creating"].map(stem)).toEqual(["creat", "creat", "creat", "creat"]);
    expect(["queries", "query"].map(stem)).toEqual(["query", "query"]);
    expect(["status", "address", "analysis"].map(stem)).toEqual(["status", "address", "analysis"]);
  });
});

describe("ranking a thousand look-alike tools", () => {
  it.each(NEEDLE_QUERIES)("%s → %s first", (query, expected) => {
    const hits = top(query);
    expect(hits[0]?.name, JSON.stringify(hits)).toBe(expected);
    expect(hits[0]?.score ?? 0).toBeGreaterThan(hits[1]?.score ?? 0);
  });

  it("counts a word in a tool's name more than the same word in a description", () => {
    const pair = createToolRanker([
      { group: "a", name: "misc", description: "Does many things, among them an export." },
      { group: "b", name: "export", description: "Does many things, among them one." },
    ]);
    expect(pair.rank("export", 2).map((hit) => hit.index)).toEqual([1, 0]);
  });

  it("answers at most `limit`, best first, only tools sharing a word, ties in toolset order", () => {
    const hits = ranker.rank("invoice", 50);
    expect(hits).toHaveLength(10);
    for (const [i, hit] of hits.entries()) {
      expect(tools[hit.index]?.name).toMatch(/invoice/);
      if (i > 0) expect(hit.score).toBeLessThanOrEqual(hits[i - 1]?.score ?? 0);
    }
    const twins = createToolRanker([
      { group: "b", name: "other", description: "Nothing alike." },
      { group: "a", name: "sync", description: "Syncs." },
      { group: "a", name: "sync", description: "Syncs." },
    ]);
    const tied = twins.rank("sync", 3);
    expect(tied.map((hit) => hit.index)).toEqual([1, 2]);
    expect(tied[0]?.score).toBe(tied[1]?.score);
    expect(ranker.rank("invoice", 3)).toHaveLength(3);
  });

  it("answers nothing for words no tool has, stop words alone, or an empty toolset", () => {
    expect(ranker.rank("zyxwv quux", 10)).toEqual([]);
    expect(ranker.rank("the of and", 10)).toEqual([]);
    expect(ranker.rank("", 10)).toEqual([]);
    expect(createToolRanker([]).rank("list", 10)).toEqual([]);
  });
});
