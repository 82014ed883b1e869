// Names stored before the gateway refused control characters in them may still hold some: shown
// raw, a bidi override makes "…\u202Eevil" read "…live" and a line break splits a cell. They are
// shown as a visible \uXXXX instead. The characters are those the gateway refuses in names
// (src/http/names.ts); the console is built on its own, so it keeps its own copy of the list.
// eslint-disable-next-line no-control-regex -- finding control characters is what this pattern is for
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/gu;

/** The text with every control or bidi-control character written as `\uXXXX`. */
export function shown(text) {
  return String(text ?? '').replace(UNSAFE, (c) => `\\u${c.codePointAt(0).toString(16).padStart(4, '0')}`);
}
