/** A byte range, both ends inclusive (as in HTTP's Range and Content-Range). */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * One `Range: bytes=…` against a body of `size` bytes: `bytes=a-b`, `bytes=a-`, `bytes=-n`.
 * Returns the range, `'unsatisfiable'` (answer 416), or null to send the whole body (no header,
 * another unit, several ranges or a malformed value: RFC 9110 lets a server ignore those).
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (!m[1] && !m[2])) return null;
  if (!m[1]) {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
  if (m[2] && Number(m[2]) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
