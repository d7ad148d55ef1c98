/**
 * The console's only way to write HTML: the `html` tagged template escapes every value it is
 * given unless that value is itself `Html` made by this file. Scripts, arguments, results,
 * servers' texts and everything else a run or a server says reach a page as text, never as
 * markup, because there is no other door into a page: nothing in the console concatenates
 * strings into HTML. Attribute values are escaped the same way and are always quoted in the
 * templates.
 */

/** HTML the console built from its own templates; anything else is text to escape. */
export class Html {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

/** What a template accepts: text (escaped), numbers, built HTML, lists of those; nothing for null, undefined or false. */
export type HtmlPart = Html | string | number | boolean | null | undefined | readonly HtmlPart[];

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

function render(part: HtmlPart): string {
  if (part === null || part === undefined || part === false) return "";
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return (part as readonly HtmlPart[]).map(render).join("");
  return escapeHtml(String(part));
}

/**
 * @example
 * html`<td>${entry.tool}</td>` // the tool's name as text, whatever it holds
 */
export function html(strings: TemplateStringsArray, ...values: HtmlPart[]): Html {
  let out = strings[0] ?? "";
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? "");
  });
  return new Html(out);
}

/** The parts joined, each escaped as `html` would. */
export function join(parts: readonly HtmlPart[], separator: HtmlPart = ""): Html {
  return new Html(parts.map(render).join(render(separator)));
}
