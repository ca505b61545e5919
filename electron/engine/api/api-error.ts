import type { ApiErrorBody } from '../../../shared/api.js';
import { ValidationError } from '../../../shared/schema.js';

/** An error the API reports to its caller as is: what happened and what to do. */
export class ApiError extends Error {
  constructor(
    readonly code: 'invalid-request' | 'not-found' | 'forbidden' | 'conflict' | 'unsupported' | 'rate-limited',
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function toErrorBody(error: unknown): ApiErrorBody {
  if (error instanceof ApiError) return { code: error.code, message: error.message };
  if (error instanceof ValidationError) return { code: 'invalid-request', message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'internal', message: `Internal error: ${message}` };
}
