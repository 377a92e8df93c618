/**
 * The configuration file's JSON Schema (`gatehouse config schema` prints it for editors): what
 * every key may hold, each kind's from its own module. The file is checked against it before
 * anything else reads it.
 */
import { KINDS } from './kinds';

export const CONFIG_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'Gatehouse configuration file',
  description: 'What an operator configures, applied with `gatehouse config apply FILE` or `gatehouse serve --config FILE`.',
  type: 'object',
  additionalProperties: false,
  required: ['version'],
  properties: {
    version: { const: 1, description: 'The format of this file: 1.' },
    ...Object.fromEntries(KINDS.map((k) => [k.key, k.schema])),
  },
};

/** A file that passed the schema: its version and each kind's value under its key. */
export type ConfigDocument = { version: 1 } & Record<string, unknown>;
