/**
 * Values from a server's schema printed into a bounded piece of one line: a `default` as JSON, a
 * `pattern` or `format` as written. A schema may hold a default of megabytes or a pattern of a
 * thousand alternatives; the prompt shows a short start of it and says it is cut (`…`), and the
 * work stops where the text does, so printing costs no more than the text printed.
 */

/** `text` cut to `max` characters with `…` after it, never between the halves of a surrogate pair. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return `${text.slice(0, end)}…`;
}

/** A string as one line: as written when it holds no control character, else as a JSON string. */
export function oneLineText(text: string, max: number): string {
  const cut = cutText(text, max);
  return /[\u0000-\u001f\u007f\u2028\u2029]/.test(cut) ? escapeSeparators(JSON.stringify(cut)) : cut;
}

/** `value` as JSON, cut to `max` characters with `…` after it; what is not JSON prints as `null`. */
export function boundedJson(value: unknown, max: number): string {
  let out = "";
  const emit = (text: string): void => {
    out += text;
    if (out.length > max) throw TOO_LONG;
  };
  const write = (v: unknown): void => {
    if (typeof v === "string") emit(JSON.stringify(v.length > max ? v.slice(0, max + 1) : v));
    else if (typeof v === "number") emit(Number.isFinite(v) ? String(v) : "null");
    else if (typeof v === "boolean") emit(String(v));
    else if (Array.isArray(v)) {
      emit("[");
      // Each element prints at least a character, so a long (or deep) value stops the loop early.
      for (let i = 0; i < v.length; i++) {
        if (i > 0) emit(",");
        write(v[i]);
      }
      emit("]");
    } else if (typeof v === "object" && v !== null) {
      emit("{");
      let first = true;
      for (const key in v) {
        if (!Object.hasOwn(v, key)) continue;
        emit(`${first ? "" : ","}${JSON.stringify(key.length > max ? key.slice(0, max + 1) : key)}:`);
        first = false;
        write((v as Record<string, unknown>)[key]);
      }
      emit("}");
    } else emit("null");
  };
  try {
    write(value);
  } catch (error) {
    if (error !== TOO_LONG) throw error;
    return escapeSeparators(cutText(out, max));
  }
  return escapeSeparators(out);
}

const TOO_LONG = new Error("past the bound");

/** JSON.stringify leaves U+2028 and U+2029 as they are; on one line of a prompt they would break it. */
function escapeSeparators(json: string): string {
  return json.replaceAll("\u2028", "\\u2028").replaceAll("\u2029", "\\u2029");
}
