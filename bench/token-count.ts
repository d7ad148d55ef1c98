/**
 * Counts tokens as a model reads them: OpenAI's o200k_base encoding, through `js-tiktoken` (the one
 * file that imports it). Used by the model-context scenario to compare what classic tool calling
 * and Rewind's front door put before a model.
 */
import { getEncoding } from "js-tiktoken";

const encoding = getEncoding("o200k_base");

/** Tokens of `text` in o200k_base. */
export function tokensOf(text: string): number {
  return encoding.encode(text).length;
}
