import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/** The public OpenRTB 2.5 JSON Schemas copied into the fixtures (see SOURCES.md there). */
const SCHEMA_DIR = path.resolve(__dirname, '../../../test/fixtures/openrtb/schema');

const validators = new Map<string, ValidateFunction>();

/** Compiled once per schema: the request schema inlines long enums and takes a while to compile. */
function validatorOf(file: string): ValidateFunction {
  let validate = validators.get(file);
  if (!validate) {
    // The schemas use keywords ajv's strict mode refuses (`default` beside `enum`, say).
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats(ajv);
    validate = ajv.compile(JSON.parse(readFileSync(path.join(SCHEMA_DIR, file), 'utf8')) as object);
    validators.set(file, validate);
  }
  return validate;
}

function errorsOf(validate: ValidateFunction, value: unknown): string[] {
  if (validate(value)) {
    return [];
  }
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
}

/**
 * The problems the public OpenRTB 2.5 schema finds in a bid request, empty when it is valid. The
 * schema forbids unknown fields everywhere but `ext`, and wants ISO-3166 alpha-3 countries.
 */
export function validateBidRequestAgainstSchema(request: unknown): string[] {
  return errorsOf(validatorOf('openrtb-2.5-bid-request.schema.json'), request);
}

/**
 * The same for a bid response. Its gaps (test/fixtures/openrtb/SOURCES.md): list fields are not checked to be
 * arrays, `price` 0 passes, and `format: uri` refuses URLs that still hold `${...}` macros.
 */
export function validateBidResponseAgainstSchema(response: unknown): string[] {
  return errorsOf(validatorOf('openrtb-2.5-bid-response.schema.json'), response);
}
