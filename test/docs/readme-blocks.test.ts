/**
 * How a README transcript line is matched against what a command printed: ids, ports and
 * durations vary, and a finished call's arguments may or may not be repeated by `--watch`.
 */
import { describe, expect, it } from "vitest";
import { linePattern } from "./readme-blocks.ts";

describe("README transcript lines", () => {
  const readme = '✓ 3 tickets.list_tickets({})  55 ms → {"tickets":[]}';

  it("matches a finished call's line with or without its arguments, whatever its duration", () => {
    expect(linePattern(readme).test('✓ 3 tickets.list_tickets({})  7 ms → {"tickets":[]}')).toBe(true);
    expect(linePattern(readme).test('✓ 3 tickets.list_tickets  38 ms → {"tickets":[]}')).toBe(true);
  });

  it("refuses another call, another tool, other arguments or another result", () => {
    expect(linePattern(readme).test('✓ 2 tickets.list_tickets  38 ms → {"tickets":[]}')).toBe(false);
    expect(linePattern(readme).test('✓ 3 tickets.create_ticket  38 ms → {"tickets":[]}')).toBe(false);
    expect(linePattern(readme).test('✓ 3 tickets.list_tickets({"a":1})  38 ms → {"tickets":[]}')).toBe(false);
    expect(linePattern(readme).test('✓ 3 tickets.list_tickets  38 ms → {"tickets":[1]}')).toBe(false);
  });

  it("keeps varying ids and ports generic on any line", () => {
    const line = "started run_01M8MGE2QHY27D3N9W6H13PAFK · toolset ts_" + "a".repeat(64);
    expect(linePattern(line).test("started run_01M8PFRKFPYP9ATMN80HD0NM1Q · toolset ts_" + "b".repeat(64))).toBe(true);
    expect(linePattern("temporal: http://127.0.0.1:50603/x").test("temporal: http://127.0.0.1:8233/x")).toBe(true);
  });
});
