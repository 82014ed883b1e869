import pino from 'pino';
import type { Config } from '../config/schema.js';
import { redact } from '../http/redact.js';

// Task work runs outside any request (the poller), so it logs through its own pino logger, on
// stderr, at the configured level. Messages pass through redact(): upstream errors may echo keys.

export type TaskLog = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

export function taskLogger(config: Config): TaskLog {
  const logger = pino({ level: config.log.level, base: { component: 'tasks' } }, process.stderr);
  return (level, msg, fields = {}) => {
    const clean = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, typeof v === 'string' ? redact(v) : v]));
    logger[level](clean, redact(msg));
  };
}
