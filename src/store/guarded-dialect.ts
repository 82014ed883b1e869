import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult } from 'kysely';
import { asUnavailable } from './unavailable.js';

// Every error that leaves Kysely passes through here once: a database that is not reachable (see
// unavailable.ts) surfaces as DatabaseUnavailableError, whatever dialect and whatever query.

const rethrow = (err: unknown): never => {
  throw asUnavailable(err);
};

function guardConnection(conn: DatabaseConnection, hooks?: TransactionHooks): DatabaseConnection {
  return new Proxy(conn, {
    get(target, prop, receiver) {
      // An async wrapper: SQLite's executeQuery throws synchronously.
      if (prop === 'executeQuery') {
        const statement = hooks?.statement;
        return async (q: Parameters<DatabaseConnection['executeQuery']>[0]) => {
          try {
            return await (statement ? statement(q, () => target.executeQuery(q)) : target.executeQuery(q));
          } catch (err) {
            return rethrow(err);
          }
        };
      }
      if (prop === 'streamQuery') {
        return async function* (...args: Parameters<DatabaseConnection['streamQuery']>) {
          try {
            yield* target.streamQuery(...args);
          } catch (err) {
            rethrow(err);
          }
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/**
 * Called around every transaction of the dialect's connections: `enter` before BEGIN (its promise
 * is awaited first), `leave` once after the COMMIT or ROLLBACK that ends it (or a BEGIN that failed).
 */
export interface TransactionHooks {
  enter(): Promise<void> | void;
  leave(): void;
  /** Runs each statement (inside a transaction too: BEGIN and COMMIT are statements). */
  statement?<R>(q: CompiledQuery, run: () => Promise<QueryResult<R>>): Promise<QueryResult<R>>;
}

function guardDriver(driver: Driver, hooks?: TransactionHooks): Driver {
  return new Proxy(driver, {
    get(target, prop, receiver) {
      if (prop === 'acquireConnection') return () => target.acquireConnection().then((c) => guardConnection(c, hooks), rethrow);
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      if (hooks && prop === 'beginTransaction') {
        return async (...args: unknown[]) => {
          await hooks.enter();
          try {
            return await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          } catch (err) {
            hooks.leave();
            return rethrow(err);
          }
        };
      }
      if (hooks && (prop === 'commitTransaction' || prop === 'rollbackTransaction')) {
        // A failed COMMIT is followed by a ROLLBACK (Kysely's transaction()): the transaction ends
        // with that, so only a COMMIT that succeeded or a ROLLBACK (whatever its outcome) leaves.
        return async (...args: unknown[]) => {
          try {
            const r = await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            hooks.leave();
            return r;
          } catch (err) {
            if (prop === 'rollbackTransaction') hooks.leave();
            return rethrow(err);
          }
        };
      }
      // begin / commit / rollback / savepoints run queries of their own.
      return (...args: unknown[]) => {
        try {
          const r = (v as (...a: unknown[]) => unknown).apply(target, args);
          return r instanceof Promise ? r.catch(rethrow) : r;
        } catch (err) {
          return rethrow(err);
        }
      };
    },
  });
}

/** The dialect with its driver's errors classified (and `hooks` around its transactions). */
export function guardedDialect(dialect: Dialect, hooks?: TransactionHooks): Dialect {
  return new Proxy(dialect, {
    get(target, prop, receiver) {
      if (prop === 'createDriver') return () => guardDriver(target.createDriver(), hooks);
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
