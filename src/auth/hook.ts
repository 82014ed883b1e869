import { errors } from '../http/errors.js';
import type { Principal } from './principal.js';

/** The principal of an authenticated route (the pipeline's key step guarantees it is set). */
export function principalOf(request: { principal: Principal | null }): Principal {
  if (!request.principal) throw errors.invalidApiKey();
  return request.principal;
}
