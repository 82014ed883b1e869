import pino, { type DestinationStream } from 'pino';
import type { Config } from '../config/schema.js';
import { redact } from '../http/redact.js';

// Channel events outside any request (health taking a channel out and putting it back, scheduled
// tests, stored channels a reload left without a model or type) go to one structured pino log,
// `component: "channels"`, at the configured level. Messages and text fields pass through redact():
// an upstream error may echo a key.

export type ChannelLog = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

export function channelLogger(config: Config, stream: DestinationStream = process.stderr): ChannelLog {
  const logger = pino({ level: config.log.level, base: { component: 'channels' } }, stream);
  return (level, msg, fields = {}) => {
    const clean = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, typeof v === 'string' ? redact(v) : v]));
    logger[level](clean, redact(msg));
  };
}
