import { describe, expect, it } from 'vitest';
import { presentedKey } from '../../src/auth/authenticator.js';

// The key a request presents: `Authorization: Bearer <key>` (any case of "Bearer", any whitespace
// around the key), else `x-api-key`, else `x-goog-api-key`. The plain form every SDK sends is read
// without a regex match; these pin that both ways give the same answer.
describe('presentedKey', () => {
  it('reads the plain SDK form', () => {
    expect(presentedKey({ authorization: 'Bearer mg-abc123' })).toBe('mg-abc123');
  });

  it('reads the other spellings the header may take', () => {
    expect(presentedKey({ authorization: 'bearer mg-abc123' })).toBe('mg-abc123');
    expect(presentedKey({ authorization: 'BEARER mg-abc123' })).toBe('mg-abc123');
    expect(presentedKey({ authorization: 'Bearer   mg-abc123' })).toBe('mg-abc123');
    expect(presentedKey({ authorization: 'Bearer mg-abc123  ' })).toBe('mg-abc123');
    expect(presentedKey({ authorization: 'Bearer\tmg-abc123\t' })).toBe('mg-abc123');
  });

  it('takes no key from a malformed Authorization header, and then looks at the other headers', () => {
    expect(presentedKey({ authorization: 'Bearer mg-a mg-b' })).toBeUndefined();
    expect(presentedKey({ authorization: 'Bearer ' })).toBeUndefined();
    expect(presentedKey({ authorization: 'Basic dXNlcjpwYXNz' })).toBeUndefined();
    expect(presentedKey({ authorization: 'Bearer mg-a mg-b', 'x-api-key': ' mg-x ' })).toBe('mg-x');
    expect(presentedKey({ 'x-goog-api-key': 'mg-g' })).toBe('mg-g');
  });
});
