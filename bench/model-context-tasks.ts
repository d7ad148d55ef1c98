/**
 * The tasks of the model-context scenario, each done two ways over the same toolset (1,000
 * generated tools of the bench server, and the reference servers `everything` and `memory`):
 * as classic MCP tool calling — the tool calls a model would make one by one, each result read
 * before the next — and through Rewind's front door — a search, a description of the tools
 * found, and one script that makes the same calls. The calls and the script do the same work;
 * the scenario makes both for real and counts what the model reads.
 */

export interface ToolCallStep {
  /** Group of the toolset (`gen`, `everything`, `memory`) and tool name on its server. */
  group: "gen" | "everything" | "memory";
  tool: string;
  args: Record<string, unknown>;
}

export interface ModelContextTask {
  name: string;
  /** What the user asks, as the model reads it. */
  ask: string;
  /** Classic tool calling: one model turn per call. */
  calls: ToolCallStep[];
  /** Rewind: what the model searches for, the tools it then describes, and its script. */
  search: string;
  describe: string[];
  script: string;
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `ord-${String(i + 1).padStart(3, "0")}`);
const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"];
const ENTITIES = [
  { name: "Rewind", entityType: "product", observations: ["runs model-written scripts durably", "built on Temporal"] },
  { name: "Temporal", entityType: "platform", observations: ["durable execution", "journals every activity"] },
  { name: "Ada", entityType: "person", observations: ["approves ticket changes", "on call this week"] },
];
const RELATIONS = [
  { from: "Rewind", to: "Temporal", relationType: "runs on" },
  { from: "Ada", to: "Rewind", relationType: "operates" },
];

export const MODEL_CONTEXT_TASKS: ModelContextTask[] = [
  {
    name: "sum",
    ask: "What is 17 + 25? Use the tools.",
    calls: [{ group: "everything", tool: "get-sum", args: { a: 17, b: 25 } }],
    search: "add two numbers",
    describe: ["everything.get-sum"],
    script: `import { everything } from "rewind:tools";
export default async function main() {
  return everything["get-sum"]({ a: 17, b: 25 });
}`,
  },
  {
    name: "echo ten words",
    ask: `Echo each of these words through the echo tool and tell me which came back longest: ${WORDS.join(", ")}.`,
    calls: WORDS.map((message) => ({ group: "everything", tool: "echo", args: { message } })),
    search: "echo a message",
    describe: ["everything.echo"],
    script: `import { everything } from "rewind:tools";
export default async function main() {
  const words = ${JSON.stringify(WORDS)};
  const echoed = await Promise.all(words.map((message) => everything.echo({ message })));
  return echoed.map((e) => JSON.stringify(e)).sort((a, b) => b.length - a.length)[0];
}`,
  },
  {
    name: "knowledge graph",
    ask: "Record Rewind, Temporal and Ada with what we know of them and how they relate, then read the graph back and say how many entities and relations it has.",
    calls: [
      { group: "memory", tool: "create_entities", args: { entities: ENTITIES } },
      { group: "memory", tool: "create_relations", args: { relations: RELATIONS } },
      { group: "memory", tool: "read_graph", args: {} },
    ],
    search: "knowledge graph entities relations",
    describe: ["memory.create_entities", "memory.create_relations", "memory.read_graph"],
    script: `import { memory } from "rewind:tools";
export default async function main() {
  await memory.create_entities({ entities: ${JSON.stringify(ENTITIES)} });
  await memory.create_relations({ relations: ${JSON.stringify(RELATIONS)} });
  const graph = await memory.read_graph({});
  return JSON.stringify(graph).length;
}`,
  },
  {
    name: "search the graph",
    ask: "Find what the knowledge graph says about durable execution and open those nodes.",
    calls: [
      { group: "memory", tool: "search_nodes", args: { query: "durable" } },
      { group: "memory", tool: "open_nodes", args: { names: ["Rewind", "Temporal"] } },
    ],
    search: "search nodes in the knowledge graph",
    describe: ["memory.search_nodes", "memory.open_nodes"],
    script: `import { memory } from "rewind:tools";
export default async function main() {
  const found = await memory.search_nodes({ query: "durable" });
  return memory.open_nodes({ names: ["Rewind", "Temporal"] }).then((opened) => ({ found, opened }));
}`,
  },
  {
    name: "fifteen orders",
    ask: `Get orders ${ids(15).join(", ")} and tell me how many came back.`,
    calls: ids(15).map((id) => ({ group: "gen", tool: "get_order_0030", args: { id } })),
    search: "get an order",
    describe: ["gen.get_order_0030"],
    script: `import { gen } from "rewind:tools";
export default async function main() {
  const ids = ${JSON.stringify(ids(15))};
  const orders = await Promise.all(ids.map((id) => gen.get_order_0030({ id })));
  return orders.length;
}`,
  },
  {
    name: "tag and export",
    ask: "Tag invoices inv-1 to inv-5 as 'q3', then export each of them.",
    calls: [1, 2, 3, 4, 5].flatMap((n) => [
      { group: "gen" as const, tool: "tag_invoice_0028", args: { id: `inv-${n}`, tags: ["q3"] } },
      { group: "gen" as const, tool: "export_invoice_0029", args: { id: `inv-${n}` } },
    ]),
    search: "tag invoice export invoice",
    describe: ["gen.tag_invoice_0028", "gen.export_invoice_0029"],
    script: `import { gen } from "rewind:tools";
export default async function main() {
  let exported = 0;
  for (let n = 1; n <= 5; n++) {
    await gen.tag_invoice_0028({ id: "inv-" + n, tags: ["q3"] });
    await gen.export_invoice_0029({ id: "inv-" + n });
    exported += 1;
  }
  return { exported };
}`,
  },
];
