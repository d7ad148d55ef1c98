/**
 * A script whose types keep the compiler busy, posted to a real stack: the API answers 422
 * `typeCheckTimedOut` at the check's deadline and starts nothing, `GET /healthz` answers all the
 * while (the check runs on the type-check pool's thread, not the API's), and the next script runs.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startRewindStack, waitForRun, type RewindStack } from "../helpers/rewind-stack.ts";

const BOMB = `// a comment of its own, so no check remembered answers it
type D = "0"|"1"|"2"|"3"|"4"|"5"|"6"|"7"|"8"|"9";
type Rev<S extends string, A extends string = ""> = S extends \`\${infer H}\${infer T}\` ? Rev<T, \`\${H}\${A}\`> : A;
type N = \`\${D}\${D}\${D}\${D}abcdefghijabcdefghijabcdefghijabcdefghij\`;
const x: Rev<N> = "1234" as never;
export default async () => x;`;

const KEY = "type-check-timeout-key";
/** A namespace of this test's own: the runs list shows no other test's runs. */
const auth = { authorization: `Bearer ${KEY}` };
let stack: RewindStack;
beforeAll(async () => {
  stack = await startRewindStack({
    env: { REWIND_TYPECHECK_TIMEOUT_MS: "1500", REWIND_API_KEYS: `${KEY}:type-check-timeout-${Date.now()}` },
  });
});
afterAll(async () => {
  await stack?.stop();
});

it("answers 422 typeCheckTimedOut at the deadline while /healthz keeps answering, then runs the next script", async () => {
  const posted = stack.request("POST", "/v1/runs", { script: BOMB }, auth);
  let slowestHealth = 0;
  let settled = false;
  void posted.finally(() => (settled = true));
  while (!settled) {
    const began = performance.now();
    const health = await stack.request("GET", "/healthz");
    expect(health.status).toBe(200);
    slowestHealth = Math.max(slowestHealth, performance.now() - began);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { status, body } = await posted;
  expect(status).toBe(422);
  expect(body.error).toMatchObject({
    code: "typeCheckTimedOut",
    message: expect.stringMatching(/took longer than its 1500 ms/),
    details: { reason: "deadline" },
  });
  // Behaviour, not speed: "answers at all while the compiler works", with room for a loaded machine.
  expect(slowestHealth).toBeLessThan(1_000);
  const runs = await stack.request("GET", "/v1/runs", undefined, auth);
  expect(runs.body["runs"]).toEqual([]);

  const next = await stack.request("POST", "/v1/runs", { script: "export default async () => 42;" }, auth);
  expect(next.status).toBe(201);
  const ended = await waitForRun(stack, String(next.body["id"]), 30_000, auth);
  expect(ended.result).toBe(42);
}, 60_000);
