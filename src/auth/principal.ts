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
}

export function mayUseModel(p: Principal, model: string): boolean {
  return p.models === null || p.models.has(model);
}
