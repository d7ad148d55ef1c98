/**
 * One thread of the type-check pool (type-check-pool.ts): a TypeScript checker of its own, fed
 * one script at a time. It runs apart from the API's event loop because a script's types are the
 * model's to write, and the compiler's time on them has no bound of its own: a page of
 * template-literal types kept it busy for tens of seconds. The pool ends this thread when a check
 * runs past its deadline, and the thread's heap is capped, so neither time nor memory spent here
 * reaches anyone else.
 */
import { parentPort } from "node:worker_threads";
import { createTypeChecker, type ScriptInspection, type TypeCheckInput } from "./type-check.ts";

/** A check the pool asks for. */
export interface CheckRequest {
  id: number;
  input: TypeCheckInput;
}

/** The thread's answer: the inspection, or the error the checker threw. */
export type CheckAnswer = { id: number; inspection: ScriptInspection } | { id: number; error: string };

const port = parentPort;
if (!port) throw new Error("type-check-thread.ts runs as a worker thread of the type-check pool");

const checker = createTypeChecker();
// Parsing TypeScript's lib files is most of a first check: done before the first script comes.
checker.inspect({ source: "export default async () => 1;", declarations: "", declarationsKey: "warm-up" });
port.postMessage({ ready: true });

port.on("message", (request: CheckRequest) => {
  let answer: CheckAnswer;
  try {
    answer = { id: request.id, inspection: checker.inspect(request.input) };
  } catch (error) {
    answer = { id: request.id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(answer);
});
