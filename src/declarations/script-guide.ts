/**
 * How to write a Rewind script, in the few lines a model reads before the declarations: what the
 * sandbox runs (one module, a default export, `rewind:tools` as its only import), why code
 * between calls must be deterministic (a run resumes by replaying its journal), and how calls,
 * built-ins and failures look from inside a script. A harness puts it in its system prompt, or
 * asks for it with the prompt rendering (`?format=prompt&guide=true`). It is read on every
 * prompt, so every line must earn its place, and every claim must hold for the sandbox.
 */

export const SCRIPT_GUIDE = `# Writing a Rewind script
- A script is one TypeScript module, type-checked (strict) against the declarations of "rewind:tools" before it runs. Its default export is the entry point: \`export default async function main(input: { … }) { … }\`. \`input\` is the run's JSON input; what main returns (JSON) is the run's result; an error it throws fails the run.
- Import tools and built-ins from "rewind:tools", the only module there is: no Node or npm modules, no file system, no process, no setTimeout. Await inside main, not at the top level.
- Every call is durable: journaled, and its result recorded. A run survives restarts and pauses of days by replaying the script against its journal, without sending finished calls again, so code between calls must do the same for the same input and results. Date.now(), new Date() and Math.random() are replay-safe (the clock reads the time of the current step).
- Results come back typed as declared; a result type marked @observed was inferred from earlier results and may lack fields.
- Calls started together run in parallel: \`const [a, b] = await Promise.all([g.get({ id: 1 }), g.get({ id: 2 })]);\`.
- \`await sleep("2 days")\` pauses durably. \`await waitForSignal<T>("approved", { timeout: "1h" })\` takes the next payload of a signal sent to the run, or rejects with ToolError "timedOut". \`const { url } = await webhook("paid")\`: what is POSTed to \`url\` becomes the signal "paid".
- A failed call rejects with ToolError { code, tool, seq, message, details }. Catch the codes you can handle and rethrow the rest: \`catch (e) { if (e instanceof ToolError && e.code === "timedOut") { … } else throw e; }\`. After "outcomeUnknown" the call may have taken effect: check before sending it again.
- The only network is \`fetch\`, declared when the toolset allows hosts; each request is a journaled call.
- console.log writes to the run's log. Each step between two waits is bounded in CPU time and memory: keep heavy computation out of scripts.
`;

/** The prompt rendering with the guide before it, as `?format=prompt&guide=true` answers it. */
export function withScriptGuide(prompt: string): string {
  return `${SCRIPT_GUIDE}\n${prompt}`;
}
