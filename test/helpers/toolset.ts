/** Registers a toolset through the API and answers its id, failing the test with the API's error. */
import type { RewindStack } from "./rewind-stack.ts";

export async function registerToolset(
  stack: RewindStack,
  document: unknown,
  headers: Record<string, string> = {},
): Promise<string> {
  const { status, body } = await stack.request("POST", "/v1/toolsets", document, headers);
  if (status !== 201 && status !== 200)
    throw new Error(`registering the toolset answered ${status}: ${JSON.stringify(body)}`);
  return String(body.id);
}

/** Starts a run and answers its id, failing the test with the API's error. */
export async function startRun(
  stack: RewindStack,
  body: { script: string; toolset?: string; input?: unknown },
): Promise<string> {
  const { status, body: answer } = await stack.request("POST", "/v1/runs", body);
  if (status !== 201) throw new Error(`starting the run answered ${status}: ${JSON.stringify(answer)}`);
  return String(answer.id);
}
