// Names operators and clients choose (key names, admin token names, model ids) are printed in
// terminals and shown in the console. A control character there can rewrite a terminal line (ANSI
// and OSC escapes, a newline that fakes another key's line) and a bidi control can make a name read
// as something else ("…\u202Eevil" shows as "…live"), so names may hold none of them.

/** C0, DEL and C1 controls, line and paragraph separators, and the bidirectional controls. */
// eslint-disable-next-line no-control-regex -- finding control characters is what this pattern is for
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/u;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'gu');

/** What a name may hold, for error messages. */
export const NAME_RULE =
  'printable text: no control characters (U+0000–U+001F, U+007F–U+009F), line or paragraph separators (U+2028, U+2029) or bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069)';

const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** Why `name` is not a safe name (the first offending character and where), or null. */
export function unsafeNameProblem(name: string): string | null {
  const m = UNSAFE.exec(name);
  return m ? `contains ${codePoint(m[0])} at position ${m.index + 1}; a name is ${NAME_RULE}` : null;
}

/** The text with every such character written as a visible `\uXXXX`, for a terminal. */
export function escapeUnsafe(text: string): string {
  return text.replace(UNSAFE_ALL, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`);
}
