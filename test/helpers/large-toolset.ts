/**
 * Tools of a large company gateway, for tool discovery: 1,000 generated tools (ten business
 * domains × ten resources × ten verbs, each with a description of one or two sentences) that look
 * alike on purpose, and a few hand-written tools of well-known services a query should find
 * among them. Deterministic, so rankings and sizes can be asserted.
 */

export interface FixtureTool {
  group: string;
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

const DOMAINS: Record<string, { title: string; resources: string[] }> = {
  crm: {
    title: "the CRM",
    resources: ["contact", "deal", "lead", "account", "pipeline", "note", "task", "meeting", "quote", "territory"],
  },
  hr: {
    title: "the HR system",
    resources: [
      "employee",
      "team",
      "leave",
      "payslip",
      "review",
      "position",
      "candidate",
      "benefit",
      "shift",
      "policy",
    ],
  },
  inventory: {
    title: "the warehouse inventory",
    resources: ["item", "warehouse", "stock_level", "supplier", "shipment", "bin", "batch", "transfer", "count", "sku"],
  },
  billing: {
    title: "the billing system",
    resources: [
      "invoice",
      "subscription",
      "plan",
      "coupon",
      "credit_note",
      "tax_rate",
      "usage",
      "price",
      "ledger",
      "dunning",
    ],
  },
  support: {
    title: "the helpdesk",
    resources: ["ticket", "macro", "agent", "queue", "sla", "article", "tag", "satisfaction", "view", "trigger"],
  },
  analytics: {
    title: "the analytics warehouse",
    resources: ["dashboard", "metric", "report", "segment", "funnel", "cohort", "event", "query", "alert", "dataset"],
  },
  cms: {
    title: "the content management system",
    resources: ["page", "post", "asset", "menu", "author", "category", "revision", "locale", "redirect", "template"],
  },
  devops: {
    title: "the deployment platform",
    resources: [
      "service",
      "deployment",
      "environment",
      "secret",
      "cluster",
      "node",
      "volume",
      "domain",
      "certificate",
      "build",
    ],
  },
  sales: {
    title: "the sales desk",
    resources: [
      "order",
      "customer",
      "discount",
      "region",
      "target",
      "commission",
      "forecast",
      "channel",
      "partner",
      "contract",
    ],
  },
  marketing: {
    title: "the marketing suite",
    resources: [
      "campaign",
      "audience",
      "newsletter",
      "landing_page",
      "ad",
      "keyword",
      "utm_link",
      "form",
      "webinar",
      "persona",
    ],
  },
};

const VERBS: { verb: string; phrase: (what: string, plural: string, where: string) => string }[] = [
  { verb: "list", phrase: (_w, p, where) => `Lists the ${p} of ${where}, newest first. Answers at most 100 per page.` },
  { verb: "get", phrase: (w, _p, where) => `Gets one ${w} of ${where} by its id.` },
  { verb: "create", phrase: (w, _p, where) => `Creates a ${w} in ${where}. Answers the new id.` },
  { verb: "update", phrase: (w, _p, where) => `Updates the fields of a ${w} in ${where}.` },
  { verb: "delete", phrase: (w, _p, where) => `Deletes a ${w} from ${where}; this cannot be undone.` },
  { verb: "search", phrase: (_w, p, where) => `Searches the ${p} of ${where} by text.` },
  { verb: "archive", phrase: (w, _p, where) => `Archives a ${w} of ${where}, hiding it from lists.` },
  { verb: "export", phrase: (_w, p, where) => `Exports the ${p} of ${where} as CSV.` },
  { verb: "import", phrase: (_w, p, where) => `Imports ${p} into ${where} from a CSV file.` },
  { verb: "count", phrase: (_w, p, where) => `Counts the ${p} of ${where} matching a filter.` },
];

const OBJECT_WITH_ID = {
  type: "object",
  properties: { id: { type: "string", description: "The id." }, filter: { type: "string" } },
} as const;

const plural = (word: string) => (word.endsWith("y") ? `${word.slice(0, -1)}ies` : `${word}s`);

/** The 1,000 generated tools, grouped by domain. */
export function gatewayTools(): FixtureTool[] {
  const tools: FixtureTool[] = [];
  for (const [group, { title, resources }] of Object.entries(DOMAINS)) {
    for (const resource of resources) {
      const words = resource.replaceAll("_", " ");
      for (const { verb, phrase } of VERBS) {
        const many = ["list", "search", "export", "import", "count"].includes(verb);
        tools.push({
          group,
          name: `${verb}_${many ? plural(resource) : resource}`,
          description: phrase(words, plural(words), title),
          inputSchema: OBJECT_WITH_ID,
        });
      }
    }
  }
  return tools;
}

/** Tools of well-known services, each the one right answer to a query of `NEEDLE_QUERIES`. */
export const NEEDLES: FixtureTool[] = [
  {
    group: "github",
    name: "create_pull_request",
    description: "Open a pull request from a branch of a repository. The base branch defaults to main.",
    inputSchema: { type: "object", properties: { repo: { type: "string" }, head: { type: "string" } } },
  },
  {
    group: "github",
    name: "listIssues",
    description: "List the issues of a repository, open or closed.",
    inputSchema: { type: "object", properties: { repo: { type: "string" } } },
  },
  {
    group: "github",
    name: "merge_pull_request",
    description: "Merge a pull request once its checks pass.",
    inputSchema: { type: "object", properties: { repo: { type: "string" }, number: { type: "integer" } } },
  },
  {
    group: "slack",
    name: "post_message",
    description: "Post a message in a Slack channel, optionally in a thread.",
    inputSchema: { type: "object", properties: { channel: { type: "string" }, text: { type: "string" } } },
  },
  {
    group: "slack",
    name: "add-reaction",
    description: "Add an emoji reaction to a message.",
    inputSchema: { type: "object", properties: { channel: { type: "string" }, emoji: { type: "string" } } },
  },
  {
    group: "stripe",
    name: "create_refund",
    description: "Refund a charge, in full or in part. Refunds go back to the original payment method.",
    inputSchema: { type: "object", properties: { charge: { type: "string" }, amount: { type: "integer" } } },
  },
  {
    group: "weather",
    name: "get_forecast",
    description: "Hourly weather forecast for a city: temperature, rain and wind for the next 7 days.",
    inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
  {
    group: "calendar",
    name: "find_free_slot",
    description: "Find a time when all attendees are free, within working hours.",
    inputSchema: { type: "object", properties: { attendees: { type: "array", items: { type: "string" } } } },
  },
  {
    group: "files",
    name: "read_file",
    description: "Read a text file of the shared drive by its path.",
    inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
];

/** A query, as a model or a person would type it, and the tool it must rank first. */
export const NEEDLE_QUERIES: [query: string, expected: string][] = [
  ["open a pull request", "github.create_pull_request"],
  ["list issues of a repo", "github.listIssues"],
  ["list_issues", "github.listIssues"],
  ["merge PR after checks", "github.merge_pull_request"],
  ["send a message to a slack channel", "slack.post_message"],
  ["react with an emoji", "slack.add-reaction"],
  ["refund a payment", "stripe.create_refund"],
  ["will it rain in Paris tomorrow", "weather.get_forecast"],
  ["when is everyone free for a meeting", "calendar.find_free_slot"],
  ["readFile", "files.read_file"],
  ["export customers as csv", "sales.export_customers"],
  ["count tickets in the helpdesk", "support.count_tickets"],
  ["hr.get_employee", "hr.get_employee"],
];
