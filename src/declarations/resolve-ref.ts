/**
 * Where a `$ref` of a pinned schema points: the type conversion and the notes the renderers show
 * (schema-notes.ts) both follow references, and must agree on where they lead. Only local JSON
 * pointers resolve here (`#/$defs/x`); what else a reference names is read as unknown.
 */

/** The node `ref` names inside `root`, or undefined when it names nothing there. */
export function resolveRef(ref: string, root: unknown): unknown {
  if (!ref.startsWith("#")) return undefined;
  let pointer: string;
  try {
    pointer = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  if (pointer !== "" && !pointer.startsWith("/")) return undefined;
  let node = root;
  for (const raw of pointer.split("/").slice(1)) {
    const segment = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, segment)) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}
