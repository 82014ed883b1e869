import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import type { GroupCommit } from './group-commit.js';

/**
 * A query built and compiled once, then run with new parameter values: no SQL is built on the
 * request path (on SQLite the statement itself is also prepared once, see db.ts). `build` gets
 * placeholder values and must use each parameter exactly once, in the order of `params`, so the
 * compiled parameters line up with the values passed to the returned function. With `group`, each
 * run is a unit of a shared transaction (GroupCommit).
 */
export function prepared<R, P extends unknown[]>(db: Kysely<any>, build: (...params: P) => Compilable<R>, sample: P, group: GroupCommit | null = null): (...params: P) => Promise<R[]> {
  let compiled: CompiledQuery<R> | undefined;
  return async (...params: P) => {
    compiled ??= build(...sample).compile();
    if (compiled.parameters.length !== params.length) throw new Error(`prepared query: ${compiled.parameters.length} parameters compiled, ${params.length} given`);
    const query = { ...compiled, parameters: params };
    const r = group ? await group.run((trx) => trx.executeQuery<R>(query)) : await db.executeQuery<R>(query);
    return r.rows;
  };
}
