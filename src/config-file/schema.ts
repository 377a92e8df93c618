/**
 * The configuration file's JSON Schema (`gatehouse config schema` prints it for editors): what
 * every key may hold. The file is checked against it before anything else reads it, so the rest
 * of the code sees only documents of this shape.
 */
import { MAX_PERMISSION } from '../permission/bits';

const name = { type: 'string', minLength: 1, maxLength: 100 } as const;

export const CONFIG_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'Gatehouse configuration file',
  description: 'What an operator configures, applied with `gatehouse config apply FILE` or `gatehouse serve --config FILE`.',
  type: 'object',
  additionalProperties: false,
  required: ['version'],
  properties: {
    version: { const: 1, description: 'The format of this file: 1.' },
    groups: {
      description: 'Managed groups, each with the groups directly inside it (those must be in this list too).',
      type: 'array',
      maxItems: 10000,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: {
          name: { ...name, description: 'The group name (names ignore case).' },
          groups: { type: 'array', maxItems: 100, uniqueItems: true, items: name, description: 'The groups directly inside this one.' },
        },
      },
    },
    actions: {
      description: 'Who may run each action, by its name (signup, or user_account/signup): the whole permission integer, or guest on or off.',
      type: 'object',
      maxProperties: 100,
      propertyNames: { pattern: '^[a-z_]{1,64}(/[a-z_]{1,64})?$' },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        maxProperties: 1,
        properties: {
          permission: { type: 'integer', minimum: 0, maximum: MAX_PERMISSION },
          guest: { type: 'boolean', description: 'Whether a guest (not signed in) may run it.' },
        },
      },
    },
  },
} as const;

export interface ConfigGroup {
  name: string;
  groups?: string[];
}

export interface ConfigDocument {
  version: 1;
  groups?: ConfigGroup[];
  actions?: Record<string, { permission?: number; guest?: boolean }>;
}
