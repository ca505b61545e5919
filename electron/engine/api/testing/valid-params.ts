// Test helper: the least params each API method accepts (its required fields, each a valid value).
import { API_METHODS, type ApiMethod } from '../../../../shared/api.js';
import { SHARING_MODES } from '../../../../shared/jobs.js';
import type { Schema } from '../../../../shared/schema.js';

/** A valid value for fields whose least value is not valid (patterns, ids) or says little. */
const VALID: Record<string, unknown> = { job: 'j1', priority: 'high', argv: ['train'], gpu: 0, bytes: null, mode: SHARING_MODES[0], hz: 1, since: Date.now() - 3_600_000, by: 'user', format: 'csv', policy: {}, jobId: '1234' };

/** A value `schema` accepts for `field`: from VALID where named there, else the least the schema takes. */
export function exampleValue(schema: Schema<unknown>, field: string): unknown {
  if (Object.hasOwn(VALID, field)) return VALID[field];
  const info = schema.info!;
  switch (info.type) {
    case 'object':
      return Object.fromEntries(Object.entries(info.shape).filter(([, s]) => !('optional' in s)).map(([key, s]) => [key, exampleValue(s, key)]));
    case 'either':
      return exampleValue(info.options[0], field);
    case 'number':
      return info.min;
    case 'choice':
      return info.choices[0];
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'string':
      return 'x';
  }
}

export const validParams = (method: ApiMethod): Record<string, unknown> => exampleValue(API_METHODS[method].params, '') as Record<string, unknown>;
