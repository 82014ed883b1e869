// How the simulator counts tokens, and the output budget every simulated chat answer is written
// against: the request's max tokens, or a default when it names none.

/**
 * A token is a word or one symbol, with the whitespace before it. Words and whitespace runs are
 * cut every 32 characters (no real tokenizer has longer tokens), so a token count also bounds the
 * bytes of an answer.
 */
const TOKEN = /\s{0,32}(?:[\p{L}\p{N}_']{1,32}|[^\s\p{L}\p{N}_'])|\s{1,32}/gu;

/** The most output tokens a request may ask for; a larger max tokens is refused. */
export const MAX_OUTPUT_TOKENS = 131_072;
/** The output cap of a request without one (what the gateway reserves for such a request). */
export const DEFAULT_OUTPUT_TOKENS = 4096;

/** The text split into tokens; joined, they give the text back. */
export function tokenize(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

/** Counts without building the list of tokens (inputs can be megabytes). */
export function countTokens(texts: string[]): number {
  let n = 0;
  for (const t of texts) {
    TOKEN.lastIndex = 0;
    while (TOKEN.exec(t)) n++;
  }
  return n;
}

/**
 * Why a request's output cap is refused, or null when it is absent or allowed. Real APIs refuse a
 * max tokens beyond what their model writes; so does the simulator, naming the range.
 */
export function outputCapProblem(field: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_OUTPUT_TOKENS) return null;
  return `${field} must be an integer from 1 to ${MAX_OUTPUT_TOKENS} (the most output tokens the simulator writes).`;
}

/**
 * The output tokens an answer may still write. Writers hand it text; it keeps the tokens that fit
 * and notes when something did not, so the answer ends with a length finish reason.
 */
export class TokenBudget {
  private left: number;
  /** Something was left out: the answer was cut at the limit. */
  cut = false;

  constructor(limit: number) {
    this.left = limit;
  }

  /** Appends the tokens of `text` to `into` while the budget lasts (tokenized lazily: text may be long). */
  take(text: string, into: string[]): void {
    if (this.cut) return;
    // One shared regex, reset here: take() runs to its end without yielding, so no other call interleaves.
    TOKEN.lastIndex = 0;
    for (let m = TOKEN.exec(text); m; m = TOKEN.exec(text)) {
      if (this.left === 0) {
        this.cut = true;
        return;
      }
      into.push(m[0]);
      this.left--;
    }
  }
}
