/**
 * `${NAME}` and `${NAME:-default}` in the string values of a toolset document the CLI registers
 * stand for the environment's NAME, as in an MCP client's configuration file or a compose file,
 * so one file serves every machine: `url: http://127.0.0.1:${REWIND_EXAMPLE_PORT:-8788}/mcp`.
 * Values only (keys and comments are left alone), after parsing, so a value never breaks the
 * document's syntax. The API gets the document expanded (its id is a hash of what it got). A name
 * that is unset, with no default, is an error naming it and where it is; `$${` is a literal `${`.
 */
const REFERENCE = /\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export type VariableLookup = (name: string) => string | undefined;

export function expandVariables(document: unknown, variable: VariableLookup, file: string): unknown {
  const walk = (value: unknown, at: string): unknown => {
    if (typeof value === "string") return expandText(value, variable, () => `${file}: ${at || "the document"}`);
    if (Array.isArray(value)) return value.map((item, i) => walk(item, `${at}[${i}]`));
    if (value !== null && typeof value === "object")
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [key, walk(item, at ? `${at}.${key}` : key)]),
      );
    return value;
  };
  return walk(document, "");
}

function expandText(text: string, variable: VariableLookup, where: () => string): string {
  return text.replace(
    REFERENCE,
    (whole: string, escaped: string | undefined, name: string, fallback: string | undefined) => {
      if (escaped) return whole.slice(1);
      const value = variable(name);
      if (fallback !== undefined) return value === undefined || value === "" ? fallback : value;
      if (value !== undefined) return value;
      throw new Error(`${where()}: \${${name}} is not set (set it, or give a default: \${${name}:-value})`);
    },
  );
}
