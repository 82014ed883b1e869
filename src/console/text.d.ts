// Types of text.js for the gateway's tests (the console itself is plain JavaScript).
/** The text with every control or bidi-control character written as `\uXXXX`. */
export function shown(text: unknown): string;
