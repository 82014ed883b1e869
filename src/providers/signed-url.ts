// When a signed download URL stops working. Object stores put the signing time and lifetime in the
// query: TOS `X-Tos-Date` + `X-Tos-Expires`, S3 `X-Amz-Date` + `X-Amz-Expires` (date
// yyyymmddThhmmssZ, lifetime in seconds), or OSS/GCS-style `Expires` (Unix seconds). When none is
// there the provider's documented 24 h from the task's `updated_at` is assumed.

const DAY_MS = 24 * 3600 * 1000;

export interface UrlExpiry {
  /** Unix ms when the URL stops working. */
  expiresAt: number;
  /** How long the URL was valid in total, ms. */
  lifetimeMs: number;
}

function parseStamp(v: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(v);
  return m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : NaN;
}

export function signedUrlExpiry(url: string, updatedAtS: number, now = Date.now()): UrlExpiry {
  let query: URLSearchParams | undefined;
  try {
    query = new URL(url).searchParams;
  } catch {
    query = undefined;
  }
  const get = (name: string) => {
    if (!query) return undefined;
    for (const [k, v] of query) if (k.toLowerCase() === name) return v;
    return undefined;
  };
  for (const vendor of ['x-tos', 'x-amz']) {
    const signedAt = parseStamp(get(`${vendor}-date`) ?? '');
    const lifetime = Number(get(`${vendor}-expires`));
    if (Number.isFinite(signedAt) && Number.isFinite(lifetime) && lifetime > 0) return { expiresAt: signedAt + lifetime * 1000, lifetimeMs: lifetime * 1000 };
  }
  const unix = Number(get('expires'));
  if (Number.isInteger(unix) && unix > 1_000_000_000) {
    const base = updatedAtS > 0 ? updatedAtS * 1000 : now;
    return { expiresAt: unix * 1000, lifetimeMs: Math.max(1000, unix * 1000 - base) };
  }
  const base = updatedAtS > 0 ? updatedAtS * 1000 : now;
  return { expiresAt: base + DAY_MS, lifetimeMs: DAY_MS };
}

/**
 * Whether a stored URL (expiring at `expiresAt`, ms) should be refreshed before it is handed out:
 * it has expired, or it is in the last tenth of its lifetime (at most a minute), too close to
 * expiry to be useful.
 */
export function urlNeedsRefresh(url: string, expiresAt: number, now = Date.now()): boolean {
  if (!url || expiresAt <= 0) return false;
  // The margin is at most a minute: before that no URL needs parsing (every read of a finished task asks).
  if (now < expiresAt - 60_000) return false;
  const { lifetimeMs } = signedUrlExpiry(url, 0, now);
  return now >= expiresAt - Math.min(60_000, lifetimeMs / 10);
}
