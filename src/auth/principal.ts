/** Who is calling: the key's identity and limits, never the key itself. */
export interface Principal {
  keyId: string;
  name: string;
  /** Allow-list of model ids; null = every configured model. */
  models: ReadonlySet<string> | null;
  rpm: number;
  concurrency: number;
  /** Whether the key has a balance to reserve from (null credit = unlimited). */
  limitedCredit: boolean;
  /** The project the key belongs to, if any. */
  project?: { id: string; name: string } | null;
  /** Multiplies every price the key pays (its project's price_ratio); absent = 1. */
  priceRatio?: number;
  /** The spend budgets the key's requests count against: its own and its project's. */
  budgets?: readonly BudgetRule[];
}

/** One budget: at most `limitMicros` per calendar `period`, for the key or its whole project. */
export interface BudgetRule {
  /** `key:<id>` or `project:<id>`: the row its windows are kept under. */
  scope: string;
  kind: 'key' | 'project';
  /** The key's or the project's name (for messages and alerts). */
  name: string;
  limitMicros: number;
  period: 'day' | 'week' | 'month';
}

export function mayUseModel(p: Principal, model: string): boolean {
  return p.models === null || p.models.has(model);
}
