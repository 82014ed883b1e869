import { GatewayError } from '../http/errors.js';
import { unsafeNameProblem } from '../http/names.js';

// The admin family's errors: `{"error":{"code","message"}}` (rendered by the app's error handler).
export const adminErrors = {
  invalid: (message: string) => new GatewayError(400, 'invalid_request', message),
  unauthorized: (message = 'An admin token is required: send "Authorization: Bearer mga-…" or log in to the console.') =>
    new GatewayError(401, 'invalid_admin_token', message),
  csrf: () => new GatewayError(403, 'csrf_token_invalid', 'This request changes state and needs the session\'s CSRF token in the X-CSRF-Token header.'),
  notFound: (what: string) => new GatewayError(404, 'not_found', `${what} does not exist.`),
  conflict: (message: string, code = 'conflict') => new GatewayError(409, code, message),
  tooManyLogins: (retryAfterS: number) =>
    new GatewayError(429, 'rate_limit_exceeded', 'Too many login attempts from this address; wait a minute.', { 'retry-after': String(retryAfterS) }),
  unavailable: (message: string) => new GatewayError(503, 'unavailable', message),
};

/** A name an operator chose, as given, or a 400 naming the control character it must not hold. */
export function checkedName(name: string): string {
  const problem = unsafeNameProblem(name);
  if (problem) throw adminErrors.invalid(`name ${problem}`);
  return name;
}
