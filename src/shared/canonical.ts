/**
 * A stable JSON text for comparing values (sorted object keys, no whitespace), usable inside
 * workflows. A fork compares each call's arguments with its parent's this way; values came out
 * of JSON, so key order is the only difference it has to erase.
 */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
