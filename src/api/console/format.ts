/**
 * How the console writes times, durations and JSON values. Times are written in UTC on the
 * server (which does not know the reader's zone) inside `<time datetime>`, which the page's
 * script rewrites in the reader's own zone; JSON is pretty-printed and cut past a bound, the cut
 * said in words, so a page never carries a megabyte result whole.
 */
import { html, type Html } from "./html.ts";

const iso = (ms: number): string => new Date(ms).toISOString();

/** `14:00:05 UTC` on the day of `now`, else `2026-12-01 14:00:05 UTC`; in a `<time>` element. */
export function timeHtml(ms: number, now: number = Date.now()): Html {
  if (!Number.isFinite(ms)) return html`an unknown time`;
  const text = iso(ms);
  const day = text.slice(0, 10);
  const clock = text.slice(11, 19);
  const shown = day === iso(now).slice(0, 10) ? `${clock} UTC` : `${day} ${clock} UTC`;
  return html`<time datetime="${text}">${shown}</time>`;
}

/** `850 ms`, `12.4 s`, `3 min 5 s`, `2 h 10 min`, `3 d 4 h`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

/** A JSON value as indented text; `undefined` (no value) as the word. */
export function jsonText(value: unknown): string {
  if (value === undefined) return "undefined";
  return JSON.stringify(value, null, 2) ?? String(value);
}

export interface Clipped {
  text: string;
  /** Set when the text was cut: how many characters the whole has. */
  wholeLength?: number;
}

/** Past this many characters, a value shown on a page is cut; the whole is a link away. */
export const SHOWN_CHARS = 2_000;

export function clipped(text: string, max = SHOWN_CHARS): Clipped {
  return text.length <= max ? { text } : { text: `${text.slice(0, max)}…`, wholeLength: text.length };
}

/** A value in a `<pre>`, cut past SHOWN_CHARS with a link to the whole (`wholeHref`), fetched only when followed. */
export function valueHtml(value: unknown, wholeHref?: string): Html {
  const shown = clipped(jsonText(value));
  return html`<pre class="value">${shown.text}</pre>
    ${
      shown.wholeLength !== undefined && wholeHref
        ? html`<p class="cut">
            Shown: the first ${SHOWN_CHARS.toLocaleString("en-US")} of ${shown.wholeLength.toLocaleString("en-US")}
            characters. <a href="${wholeHref}">The whole value</a>
          </p>`
        : ""
    }`;
}
