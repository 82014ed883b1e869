// CSV cells for exports opened in spreadsheets. Text cells can hold what a key holder typed (a
// refused request's model name is recorded as sent), so a text cell that a spreadsheet would read
// as a formula is written as text instead; numeric columns are the gateway's own numbers and stay
// numbers, negative ones included.

/**
 * Spreadsheets start a formula at = + - @ (Excel, LibreOffice, Google Sheets), also after leading
 * spaces, and in their fullwidth forms (an East Asian input method's ＝ ＋ － ＠); a leading tab or
 * line break is how a formula is smuggled past a check of the first character.
 */
const FORMULA_START = /^(?:[\t\r\n]| *[=+\-@\uFF1D\uFF0B\uFF0D\uFF20])/;

/** A number as the gateway writes it: an integer or a decimal, optionally negative. */
const PLAIN_NUMBER = /^-?\d+(?:\.\d+)?$/;

/**
 * One cell. `numeric`: the column holds the gateway's numbers, kept as they are when they look
 * like one (anything else in such a column is treated as text).
 */
export function csvCell(value: unknown, numeric = false): string {
  const s = String(value ?? '');
  if (numeric && PLAIN_NUMBER.test(s)) return s;
  // A leading ' makes the spreadsheet show the rest as text; quoting keeps it one cell.
  if (FORMULA_START.test(s)) return `"'${s.replace(/"/g, '""')}"`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** One line of `columns` read from `row`; `numeric` names the columns that hold numbers. */
export function csvLine<T>(row: T, columns: readonly (keyof T)[], numeric: ReadonlySet<keyof T>): string {
  return columns.map((c) => csvCell(row[c], numeric.has(c))).join(',');
}

/**
 * An export: the header, then every row `read` finds, newest first, `batch` rows per query (each
 * read continues after the previous batch's last row), as CSV lines of `view(row)`.
 */
export async function* csvPages<R extends { created_at: number; id: number }, V>(
  read: (batch: number, after?: { createdAt: number; id: number }) => Promise<R[]>,
  view: (row: R) => V,
  columns: readonly (keyof V)[],
  numeric: ReadonlySet<keyof V>,
  batch: number,
): AsyncGenerator<string> {
  yield columns.join(',') + '\n';
  let after: { createdAt: number; id: number } | undefined;
  for (;;) {
    const rows = await read(batch, after);
    if (!rows.length) return;
    yield rows.map((r) => csvLine(view(r), columns, numeric)).join('\n') + '\n';
    const last = rows[rows.length - 1];
    after = { createdAt: last.created_at, id: last.id };
    if (rows.length < batch) return;
  }
}
