import type { Compilable, CompiledQuery, Kysely } from 'kysely';

/**
 * A query built and compiled once, then run with new parameter values: no SQL is built on the
 * request path (on SQLite the statement itself is also prepared once, see db.ts). `build` gets
 * placeholder values and must use each parameter exactly once, in the order of `params`, so the
 * compiled parameters line up with the values passed to the returned function.
 */
export function prepared<R, P extends unknown[]>(db: Kysely<any>, build: (...params: P) => Compilable<R>, sample: P): (...params: P) => Promise<R[]> {
  let compiled: CompiledQuery<R> | undefined;
  return async (...params: P) => {
    compiled ??= build(...sample).compile();
    if (compiled.parameters.length !== params.length) throw new Error(`prepared query: ${compiled.parameters.length} parameters compiled, ${params.length} given`);
    const r = await db.executeQuery<R>({ ...compiled, parameters: params });
    return r.rows;
  };
}
