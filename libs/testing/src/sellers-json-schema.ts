import Ajv, { type ValidateFunction } from 'ajv';

/**
 * IAB Tech Lab sellers.json 1.0 as a JSON Schema, written from the specification's field tables
 * (the IAB publishes none): `version` "1.0" and `sellers` required; each seller with `seller_id`
 * and `seller_type` (PUBLISHER, INTERMEDIARY, BOTH); `is_confidential` and `is_passthrough` 0 or 1;
 * `name` and `domain` required unless the seller is confidential; `identifiers` name/value pairs.
 * What a schema cannot say (seller ids unique) the tests check beside it.
 */
export const SELLERS_JSON_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'IAB sellers.json 1.0',
  type: 'object',
  required: ['version', 'sellers'],
  properties: {
    contact_email: { type: 'string', format: 'email' },
    contact_address: { type: 'string', minLength: 1 },
    version: { const: '1.0' },
    identifiers: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'value'],
        properties: { name: { type: 'string', minLength: 1 }, value: { type: 'string', minLength: 1 } },
      },
    },
    sellers: {
      type: 'array',
      items: {
        type: 'object',
        required: ['seller_id', 'seller_type'],
        properties: {
          seller_id: { type: 'string', minLength: 1 },
          is_confidential: { enum: [0, 1] },
          seller_type: { enum: ['PUBLISHER', 'INTERMEDIARY', 'BOTH'] },
          is_passthrough: { enum: [0, 1] },
          name: { type: 'string', minLength: 1 },
          domain: { type: 'string', pattern: '^[a-z0-9-]+(\\.[a-z0-9-]+)+$' },
          comment: { type: 'string' },
          ext: { type: 'object' },
        },
        if: { not: { properties: { is_confidential: { const: 1 } }, required: ['is_confidential'] } },
        then: { required: ['name', 'domain'] },
      },
    },
    ext: { type: 'object' },
  },
} as const;

let validator: ValidateFunction | undefined;

/** The problems the sellers.json schema and its unique seller ids find; empty when valid. */
export function validateSellersJson(document: unknown): string[] {
  if (!validator) {
    const ajv = new Ajv({ allErrors: true, strict: false });
    // `format: email` without ajv-formats' whole set: a plain address check is enough here.
    ajv.addFormat('email', /^[^\s@]+@[^\s@]+\.[^\s@]+$/);
    validator = ajv.compile(SELLERS_JSON_SCHEMA);
  }
  const problems = validator(document)
    ? []
    : (validator.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
  const sellers = (document as { sellers?: { seller_id?: unknown }[] } | null)?.sellers;
  if (Array.isArray(sellers)) {
    const seen = new Set<unknown>();
    for (const seller of sellers) {
      if (seen.has(seller?.seller_id)) {
        problems.push(`/sellers seller_id ${String(seller?.seller_id)} is listed twice`);
      }
      seen.add(seller?.seller_id);
    }
  }
  return problems;
}
