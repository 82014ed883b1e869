import { adminErrors } from './errors.js';

// Page cursors are opaque to clients: base64url of the last row's sort key.

type Kind = 'number' | 'string';
type Parts<S extends readonly Kind[]> = { -readonly [I in keyof S]: S[I] extends 'number' ? number : string };

export function encodeCursor(...parts: (string | number)[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

/** The sort key in a cursor, checked against the kinds of its parts; undefined when no cursor was sent. */
export function decodeCursor<const S extends readonly Kind[]>(cursor: string | undefined, shape: S): Parts<S> | undefined {
  if (cursor === undefined) return undefined;
  let parts: unknown;
  try {
    parts = cursor.length <= 512 ? JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) : null;
  } catch {
    parts = null;
  }
  if (!Array.isArray(parts) || parts.length !== shape.length || !parts.every((p, i) => typeof p === shape[i])) throw adminErrors.invalid('cursor is not one this API handed out');
  return parts as Parts<S>;
}
