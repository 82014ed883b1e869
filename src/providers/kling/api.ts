import { hs256Jwt } from '../kit/hooks/auth.js';

/** Kling's per-request token (the kit's jwt-hs256 scheme): iss = access key, valid from 5 s ago for 30 minutes. */
export const klingToken = (accessKey: string, secretKey: string, nowS?: number): string => hs256Jwt(accessKey, secretKey, nowS, 1800, 5);
