// Error bodies of the formats the simulator speaks.

export function openaiError(message: string, code: string, type = 'invalid_request_error'): unknown {
  return { error: { message, type, param: null, code } };
}

export function anthropicError(message: string, type: string): unknown {
  return { type: 'error', error: { type, message } };
}

export function arkError(message: string, code: string, type = 'BadRequest'): unknown {
  return { error: { code, message: `${message} Request id: sim${Date.now()}`, param: '', type } };
}
