/**
 * Large toolsets: the bench MCP server offers, at other paths, 10 tools and 1,000 tools (`echo`,
 * `blob`, then generated tools with small schemas). Registered as two toolsets under the same
 * group name, they measure what the size of a toolset costs: `POST /v1/toolsets` (connect, list,
 * pin, render the declarations), a warm type-check of a typical script against each one's
 * declarations, and the time of Rewind runs of N `echo` calls, sequential and in 16 lanes,
 * against each (rounds alternate which goes first; one extra round warms both), whole and over
 * their calls alone (first call scheduled → last completed: the verdict), each ratio the median
 * of the rounds' own. The MCP server counts the tools/list requests it answered while the runs
 * were measured, which shows whether anything lists tools per call rather than per run.
 */
import { createTypeChecker, type Diagnostic } from "../../src/declarations/type-check.ts";
import type { BenchContext } from "../context.ts";
import { scaleSizes } from "../scale-sizes.ts";
import { assertTotal, callsScript, rewindRun } from "../drivers.ts";
import { fetchHistories, historyOf, summarizeHistories } from "../history.ts";
import { startInputSizes } from "../payload-size.ts";
import type { BenchStack } from "../stack.ts";
import { median, p95, since } from "../stats.ts";

type Side = "small" | "large";

export interface Sample {
  samples: number[];
  medianMs: number;
  p95Ms: number;
}

export interface LargeToolsetMode {
  mode: "sequential" | "parallel16";
  width: number;
  n: number;
  small: Sample & { perCallMs: number };
  large: Sample & { perCallMs: number };
  /** The 1,000-tool toolset's median run time over the 10-tool toolset's (its start included). */
  largeOverSmall: number;
  /**
   * The same over the calls alone: each run's first call scheduled → last call completed, from
   * its history. A run's start (its input carries the pinned toolset) is the start targets' to
   * judge; this is what a call costs.
   */
  callsLargeOverSmall: number;
  /** Median of that span per run, ms. */
  callsSpanMs: Record<Side, number>;
  /** Real size of the last run's input (it carries the pinned toolset), and as history holds it. */
  startInputBytes: Record<Side, number>;
  startInputBytesInHistory: Record<Side, number>;
  /** Workflow task time (started → completed) per call, from the last run's history. */
  workflowTaskMsPerCall: Record<Side, number>;
}

export interface LargeToolsetResult {
  /** The larger of the two modes' callsLargeOverSmall: per-call time with 1,000 tools over with 10. */
  perCallRatio: number;
  /** The larger of the two modes' largeOverSmall: whole runs, their start included. */
  perRunRatio: number;
  /** Median `POST /v1/toolsets` of the 1,000-tool server. */
  registrationMs: number;
  /** Median warm type-check of a typical script against the 1,000-tool toolset. */
  warmTypeCheckMs: number;
  tools: Record<Side, number>;
  /** `POST /v1/toolsets` of the same servers again and again (after one first registration). */
  registration: Record<Side, Sample> & { firstMs: Record<Side, number> };
  /** Size of each toolset's `rewind:tools` declarations. */
  dtsBytes: Record<Side, number>;
  /** Type-check of a typical script against each toolset's declarations: first check and warm. */
  typeCheck: Record<Side, Sample & { coldMs: number }>;
  modes: LargeToolsetMode[];
  /** tools/list requests the MCP server answered while the runs above were measured. */
  listings: { runs: number; calls: number; listings: number; perRun: number; perCall: number };
}

const sample = (samples: number[]): Sample => ({ samples, medianMs: median(samples), p95Ms: p95(samples) });

/**
 * The median of each round's 1,000-tool time over its 10-tool time. The two runs of a round go
 * back to back, so a drift of the machine's speed between rounds cancels out, which a ratio of
 * the two sides' medians does not: sequential calls of ~20 ms moved that ratio by ±0.1× run to run.
 */
function medianOfPairs(samples: Record<Side, number[]>): number {
  return median(samples.large.map((large, round) => large / (samples.small[round] ?? Number.NaN)));
}

async function register(stack: BenchStack, url: string): Promise<{ id: string; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${stack.api.url}/v1/toolsets`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ mcpServers: { svc: { url } } }),
  });
  const body = (await response.json()) as { id?: string };
  const ms = since(started);
  if ((response.status !== 201 && response.status !== 200) || !body.id)
    throw new Error(`registering ${url} answered ${response.status}: ${JSON.stringify(body)}`);
  return { id: body.id, ms };
}

async function declarations(stack: BenchStack, id: string): Promise<string> {
  const response = await fetch(`${stack.api.url}/v1/toolsets/${id}/declarations?format=dts`);
  if (response.status !== 200) throw new Error(`declarations of ${id} answered ${response.status}`);
  return response.text();
}

/** What a model writes against this server: a few of its tools, lanes, error handling. */
export function typicalSvcScript(variant: number): string {
  return `import { svc, ToolError } from "rewind:tools";

interface Summary { echoed: number; fetched: number; failed: number }

export default async function main(input: { ids: string[]; limit: number }): Promise<Summary> {
  let failed = 0;
  const { i } = await svc.echo({ i: ${variant} });
  const fetched = await Promise.all(input.ids.slice(0, input.limit).map(async (id) => {
    try {
      await svc.get_issue_0000({ id, limit: 10, tags: ["stale"] });
      await svc.update_issue_0003({ id: \`\${id}-\${i}\` });
      return 1;
    } catch (error) {
      if (error instanceof ToolError && error.code === "toolFailed") { failed += 1; return 0; }
      throw error;
    }
  }));
  return { echoed: i, fetched: fetched.reduce((a: number, b: number) => a + b, 0), failed };
}
`;
}

function assertClean(diagnostics: Diagnostic[]): void {
  if (diagnostics.length > 0)
    throw new Error(`the typical script does not type-check: ${JSON.stringify(diagnostics.slice(0, 3))}`);
}

function typeCheck(dts: string, key: string, warmChecks: number): Sample & { coldMs: number } {
  const checker = createTypeChecker();
  const input = (variant: number) => ({ source: typicalSvcScript(variant), declarations: dts, declarationsKey: key });
  const started = performance.now();
  assertClean(checker.check(input(0)));
  const coldMs = since(started);
  const warm: number[] = [];
  for (let i = 1; i <= warmChecks; i++) {
    const at = performance.now();
    assertClean(checker.check(input(i)));
    warm.push(since(at));
  }
  return { ...sample(warm), coldMs };
}

export async function measureLargeToolset(ctx: BenchContext): Promise<LargeToolsetResult> {
  const { stack } = ctx;
  const sizes = scaleSizes(ctx.sizes).largeToolset;
  const base = stack.mcpUrl.replace(/\/mcp$/, "");
  const urls: Record<Side, string> = {
    small: `${base}/mcp/tools-${sizes.smallTools}`,
    large: `${base}/mcp/tools-${sizes.largeTools}`,
  };

  const first = { small: await register(stack, urls.small), large: await register(stack, urls.large) };
  const registrations: Record<Side, number[]> = { small: [], large: [] };
  for (let round = 0; round < sizes.registrations; round++)
    for (const side of round % 2 === 0 ? (["large", "small"] as const) : (["small", "large"] as const))
      registrations[side].push((await register(stack, urls[side])).ms);
  ctx.log(
    `large toolset: registration median ${median(registrations.small).toFixed(0)} ms (${sizes.smallTools} tools), ${median(registrations.large).toFixed(0)} ms (${sizes.largeTools} tools)`,
  );
  const ids: Record<Side, string> = { small: first.small.id, large: first.large.id };
  const dts = { small: await declarations(stack, ids.small), large: await declarations(stack, ids.large) };
  const checks = {
    small: typeCheck(dts.small, `bench_small_${ids.small}`, sizes.warmChecks),
    large: typeCheck(dts.large, `bench_large_${ids.large}`, sizes.warmChecks),
  };
  ctx.log(
    `large toolset: warm type-check median ${checks.small.medianMs.toFixed(1)} ms (${sizes.smallTools} tools), ${checks.large.medianMs.toFixed(1)} ms (${sizes.largeTools} tools)`,
  );

  const script = callsScript();
  const modes: LargeToolsetMode[] = [];
  let listings = { runs: 0, calls: 0, listings: 0 };
  for (const [mode, width, n, rounds] of [
    ["sequential", 1, sizes.n, sizes.rounds],
    ["parallel16", 16, sizes.parallelN, sizes.parallelRounds],
  ] as const) {
    const samples: Record<Side, number[]> = { small: [], large: [] };
    const callSpans: Record<Side, number[]> = { small: [], large: [] };
    const last: Record<Side, string> = { small: "", large: "" };
    for (let round = -1; round < rounds; round++) {
      const before = await stack.mcp.call<{ calls: number; listings: number }>("stats");
      for (const side of round % 2 === 0 ? (["large", "small"] as const) : (["small", "large"] as const)) {
        const done = await rewindRun(stack, script, { n, width }, ids[side]);
        assertTotal(`Rewind run on the ${side} toolset`, done.result, n);
        last[side] = done.id;
        if (round >= 0) samples[side].push(done.ms);
      }
      // Read after the pair ran, so the reads fall between the measured runs.
      if (round >= 0)
        for (const side of ["small", "large"] as const) {
          const history = await historyOf(stack.client, last[side]);
          callSpans[side].push(history.spanMs - history.headMs - history.tailMs);
        }
      const after = await stack.mcp.call<{ calls: number; listings: number }>("stats");
      if (round >= 0)
        listings = {
          runs: listings.runs + 2,
          calls: listings.calls + after.calls - before.calls,
          listings: listings.listings + after.listings - before.listings,
        };
      ctx.log(
        `large toolset ${mode} round ${round < 0 ? "warm-up" : `${round + 1}/${rounds}`}: ${sizes.smallTools} tools ${samples.small.at(-1)?.toFixed(0) ?? "-"} ms, ${sizes.largeTools} tools ${samples.large.at(-1)?.toFixed(0) ?? "-"} ms`,
      );
    }
    const fetched = {
      small: await fetchHistories(stack.client, last.small),
      large: await fetchHistories(stack.client, last.large),
    };
    const histories = { small: summarizeHistories(fetched.small), large: summarizeHistories(fetched.large) };
    const input = (s: Side) => (fetched[s][0] ? startInputSizes(fetched[s][0]) : { real: 0, inHistory: 0 });
    const side = (s: Side) => ({ ...sample(samples[s]), perCallMs: median(samples[s]) / n });
    modes.push({
      mode,
      width,
      n,
      small: side("small"),
      large: side("large"),
      largeOverSmall: medianOfPairs(samples),
      callsLargeOverSmall: medianOfPairs(callSpans),
      callsSpanMs: { small: median(callSpans.small), large: median(callSpans.large) },
      startInputBytes: { small: input("small").real, large: input("large").real },
      startInputBytesInHistory: { small: input("small").inHistory, large: input("large").inHistory },
      workflowTaskMsPerCall: {
        small: histories.small.phases.workflowTaskStartToClose / n,
        large: histories.large.phases.workflowTaskStartToClose / n,
      },
    });
  }
  return {
    perCallRatio: Math.max(...modes.map((m) => m.callsLargeOverSmall)),
    perRunRatio: Math.max(...modes.map((m) => m.largeOverSmall)),
    registrationMs: median(registrations.large),
    warmTypeCheckMs: checks.large.medianMs,
    tools: { small: sizes.smallTools, large: sizes.largeTools },
    registration: {
      small: sample(registrations.small),
      large: sample(registrations.large),
      firstMs: { small: first.small.ms, large: first.large.ms },
    },
    dtsBytes: { small: Buffer.byteLength(dts.small), large: Buffer.byteLength(dts.large) },
    typeCheck: checks,
    modes,
    listings: {
      ...listings,
      perRun: listings.listings / listings.runs,
      perCall: listings.listings / listings.calls,
    },
  };
}
