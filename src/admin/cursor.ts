import { adminErrors } from './errors.js';

// Page cursors are opaque to clients: base64url of the last row's sort key.

export function encodeCursor(...parts: (string | number)[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

export function decodeCursor<T>(cursor: string, build: (...parts: (string | number)[]) => T): T {
  let parts: unknown;
  try {
    parts = cursor.length <= 512 ? JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) : null;
  } catch {
    parts = null;
  }
  if (!Array.isArray(parts) || !parts.length || !parts.every((p) => typeof p === 'string' || typeof p === 'number')) throw adminErrors.invalid('cursor is not one this API handed out');
  return build(...(parts as (string | number)[]));
}
