/**
 * The type-check pool, on real worker threads and the real TypeScript compiler: a script whose
 * types keep the compiler busy for seconds (template-literal types over a 10,000-member union) is
 * abandoned at its deadline while this thread's event loop keeps turning, its thread is replaced
 * and the next check answers; a namespace can't have more checks waiting than its share, and one
 * posting many slow scripts does not hold back another namespace's simple one; a heap cap too
 * small for the compiler fails checks with the reason instead of leaving them waiting.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  createTypeCheckPool,
  TypeCheckAbandonedError,
  TypeCheckQueueFullError,
  type TypeCheckPool,
} from "../../src/declarations/index.ts";

/**
 * Three declarations each over a 10,000-member union: some 14 s of the compiler's time on this
 * machine, far past the deadlines below. (One of them took 2.5–4.5 s, too close to a 3 s
 * deadline: a check that finished first made a test that expects it abandoned fail.)
 */
const bomb = (n: number) => `// variant ${n}: a new comment, a new check
type D = "0"|"1"|"2"|"3"|"4"|"5"|"6"|"7"|"8"|"9";
type Rev<S extends string, A extends string = ""> = S extends \`\${infer H}\${infer T}\` ? Rev<T, \`\${H}\${A}\`> : A;
type N1 = \`\${D}\${D}\${D}\${D}aabcdefghijabcdefghijabcdefghij\`;
type N2 = \`\${D}\${D}\${D}\${D}babcdefghijabcdefghijabcdefghij\`;
type N3 = \`\${D}\${D}\${D}\${D}cabcdefghijabcdefghijabcdefghij\`;
const x1: Rev<N1> = "1234" as never;
const x2: Rev<N2> = "1234" as never;
const x3: Rev<N3> = "1234" as never;
export default async () => [x1, x2, x3];`;
const SIMPLE = "export default async (input: { n: number }) => input.n + 1;";
const check = (source: string) => ({ source, declarations: "", declarationsKey: "none" });

let pool: TypeCheckPool | undefined;
afterEach(async () => {
  await pool?.close();
  pool = undefined;
});

/** The longest gap between ticks of a 20 ms interval on this thread while `work` runs. */
async function longestStall(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 20);
  try {
    await work();
  } finally {
    clearInterval(ticker);
  }
  return longest;
}

describe("the type-check pool", () => {
  it("abandons a check past its deadline, without stalling this thread, and answers the next", async () => {
    const started = createTypeCheckPool({ threads: 1, queuePerNamespace: 4, deadlineMs: 1_500, memoryMb: 512 });
    pool = started;
    await started.ready();
    let abandoned: unknown;
    const stall = await longestStall(async () => {
      abandoned = await started.inspect(check(bomb(1)), "acme").then(
        () => undefined,
        (error: unknown) => error,
      );
    });
    expect(abandoned).toBeInstanceOf(TypeCheckAbandonedError);
    expect((abandoned as TypeCheckAbandonedError).reason).toBe("deadline");
    expect((abandoned as Error).message).toMatch(/took longer than its 1500 ms/);
    // Behaviour, not speed: the compiler's seconds happened elsewhere (on this thread: one tick).
    expect(stall).toBeLessThan(1_000);
    const next = await started.inspect(check(SIMPLE), "acme");
    expect(next).toEqual({ diagnostics: [], inputType: "{ n: number; }" });
    const wrong = await started.inspect(check("export default async () => { const n: number = 'x'; };"), "acme");
    expect(wrong.diagnostics[0]?.message).toMatch(/not assignable to type 'number'/);
  }, 60_000);

  it("refuses a namespace's check past its queue, and serves another namespace in turn", async () => {
    const started = createTypeCheckPool({ threads: 1, queuePerNamespace: 3, deadlineMs: 1_000, memoryMb: 512 });
    pool = started;
    await started.ready();
    const order: string[] = [];
    const noted = (label: string, answer: Promise<unknown>) =>
      answer.then(
        () => order.push(`${label} answered`),
        (error: unknown) => order.push(`${label} ${error instanceof Error ? error.name : "failed"}`),
      );
    const acme = [1, 2, 3, 4].map((n) => noted(`acme ${n}`, started.inspect(check(bomb(100 + n)), "acme")));
    const globex = noted("globex", started.inspect(check(SIMPLE), "globex"));
    await Promise.all([...acme, globex]);
    // The fourth waited past acme's share; globex came after acme's first and before its second.
    expect(order[0]).toBe(`acme 4 ${TypeCheckQueueFullError.name}`);
    expect(order.indexOf("globex answered")).toBeLessThan(order.indexOf(`acme 2 ${TypeCheckAbandonedError.name}`));
    expect(order.filter((entry) => entry.endsWith(TypeCheckAbandonedError.name))).toHaveLength(3);
  }, 60_000);

  it("keeps a thread for other namespaces: one whose checks run to their deadline never holds the whole pool", async () => {
    const started = createTypeCheckPool({ threads: 2, queuePerNamespace: 8, deadlineMs: 3_000, memoryMb: 512 });
    pool = started;
    // Two checks at once grow the pool to its two threads, which are then ready, as a busy pool's are.
    await Promise.all([
      started.inspect(check(`${SIMPLE} // a`), "acme"),
      started.inspect(check(`${SIMPLE} // b`), "globex"),
    ]);
    await started.ready();
    expect(started.threadCount).toBe(2);
    // acme's bombs are posted first, enough for every thread; globex's script comes after them.
    const bombs = [1, 2, 3].map((n) => started.inspect(check(bomb(200 + n)), "acme").catch((error: unknown) => error));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const began = performance.now();
    const answer = await started.inspect(check(SIMPLE), "globex");
    const waited = performance.now() - began;
    expect(answer).toEqual({ diagnostics: [], inputType: "{ n: number; }" });
    // Behaviour, not speed: it did not wait for a bomb's 3 s deadline to free a thread.
    expect(waited, `globex waited ${Math.round(waited)} ms`).toBeLessThan(2_500);
    for (const abandoned of await Promise.all(bombs)) expect(abandoned).toBeInstanceOf(TypeCheckAbandonedError);
  }, 60_000);

  it("starts one thread, and more only when more checks wait than threads are free", async () => {
    const grown = createTypeCheckPool({ threads: 3, queuePerNamespace: 8, deadlineMs: 2_000, memoryMb: 512 });
    pool = grown;
    await grown.ready();
    expect(grown.threadCount).toBe(1);
    // Checks one after another never need a second thread.
    for (const n of [1, 2, 3]) await grown.inspect(check(`${SIMPLE}\n// ${n}`), "acme");
    expect(grown.threadCount).toBe(1);
    // Three namespaces' bombs at once: the pool grows to its size, and no further.
    const bombs = ["acme", "globex", "initech", "umbrella"].map((namespace, n) =>
      grown.inspect(check(bomb(300 + n)), namespace).catch((error: unknown) => error),
    );
    for (const abandoned of await Promise.all(bombs)) expect(abandoned).toBeInstanceOf(TypeCheckAbandonedError);
    expect(grown.threadCount).toBe(3);
  }, 60_000);

  it("answers a repeated check without a thread, from what it remembers", async () => {
    const started = createTypeCheckPool({ threads: 1, queuePerNamespace: 1, deadlineMs: 10_000, memoryMb: 512 });
    pool = started;
    const first = await started.inspect(check(SIMPLE), "acme");
    // The queue holds one: were the repeats not remembered, the second and third would be refused.
    const repeats = await Promise.all([1, 2, 3].map(() => started.inspect(check(SIMPLE), "acme")));
    for (const repeat of repeats) expect(repeat).toEqual(first);
    // Asked for 40 times at once before any answer: one check, so none waits past the queue of one.
    const fanned = "export default async (input: { id: string }) => input.id;";
    const answers = await Promise.all(Array.from({ length: 40 }, () => started.inspect(check(fanned), "acme")));
    for (const answer of answers) expect(answer).toEqual({ diagnostics: [], inputType: "{ id: string; }" });
  }, 60_000);

  it("fails checks with the reason when the heap cap is too small for the compiler", async () => {
    const started = createTypeCheckPool({ threads: 1, queuePerNamespace: 4, deadlineMs: 20_000, memoryMb: 4 });
    pool = started;
    const failed = await started.inspect(check(SIMPLE), "acme").then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(TypeCheckAbandonedError);
    expect((failed as TypeCheckAbandonedError).reason).toBe("memory");
  }, 60_000);
});
