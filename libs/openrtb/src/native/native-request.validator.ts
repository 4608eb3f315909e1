import { MAX_NATIVE_MARKUP_BYTES } from './native-response.validator';
import { field, isObject, isStringArray, isWholeNumber, preview, type JsonObject } from '../untrusted-json';

/** Exchange-specific values of Native 1.x enumerations start here; they are always valid. */
const EXCHANGE_SPECIFIC = 500;

const inRange = (value: number, low: number, high: number): boolean =>
  (value >= low && value <= high) || value >= EXCHANGE_SPECIFIC;

/** Native context subtypes by the context they belong to (Native 1.1, 7.2). */
const SUBTYPE_CONTEXT: readonly (readonly [low: number, high: number, context: number])[] = [
  [10, 15, 1],
  [20, 22, 2],
  [30, 32, 3],
];

/** The house form of a problem: what is wrong, what it is, what it should be. */
const problem = (where: string, value: unknown, expected: string): string =>
  `${where} is ${preview(value)}, not ${expected}`;

function checkContext(request: JsonObject, problems: string[]): void {
  const context = field(request, 'context');
  if (context !== undefined && !(isWholeNumber(context) && inRange(context, 1, 3))) {
    problems.push(problem('context', context, '1 to 3 or exchange-specific'));
  }
  const subtype = field(request, 'contextsubtype');
  if (subtype !== undefined && subtype !== 0) {
    const range = isWholeNumber(subtype)
      ? SUBTYPE_CONTEXT.find(([low, high]) => subtype >= low && subtype <= high)
      : undefined;
    if (!isWholeNumber(subtype) || (!range && subtype < EXCHANGE_SPECIFIC)) {
      problems.push(problem('contextsubtype', subtype, '10 to 15, 20 to 22, 30 to 32 or exchange-specific'));
    } else if (range && isWholeNumber(context) && context !== range[2] && context < EXCHANGE_SPECIFIC) {
      problems.push(problem('contextsubtype', subtype, `a subtype of context ${context}`));
    }
  }
  const placement = field(request, 'plcmttype');
  if (placement !== undefined && !(isWholeNumber(placement) && inRange(placement, 1, 4))) {
    problems.push(problem('plcmttype', placement, '1 to 4 or exchange-specific'));
  }
  for (const name of ['plcmtcnt', 'seq']) {
    const value = field(request, name);
    if (value !== undefined && !isWholeNumber(value)) {
      problems.push(problem(name, value, 'a whole number'));
    }
  }
  const ver = field(request, 'ver');
  if (ver !== undefined && typeof ver !== 'string') {
    problems.push(problem('ver', ver, 'a string'));
  }
}

function positive(body: JsonObject, name: string, where: string, problems: string[], needed = false): void {
  const value = field(body, name);
  if (value === undefined ? needed : !(isWholeNumber(value) && value > 0)) {
    problems.push(problem(`${where}.${name}`, value, 'a positive whole number'));
  }
}

function wholeNumbers(body: JsonObject, names: readonly string[], where: string, problems: string[]): void {
  for (const name of names) {
    const value = field(body, name);
    if (value !== undefined && !isWholeNumber(value)) {
      problems.push(problem(`${where}.${name}`, value, 'a whole number'));
    }
  }
}

function checkAssetBody(kind: string, body: JsonObject, where: string, problems: string[]): void {
  switch (kind) {
    case 'title':
      positive(body, 'len', where, problems, true);
      break;
    case 'img': {
      wholeNumbers(body, ['type', 'w', 'h', 'wmin', 'hmin'], where, problems);
      const mimes = field(body, 'mimes');
      if (mimes !== undefined && !isStringArray(mimes)) {
        problems.push(problem(`${where}.mimes`, mimes, 'an array of strings'));
      }
      break;
    }
    case 'data': {
      const type = field(body, 'type');
      if (!(isWholeNumber(type) && inRange(type, 1, 12))) {
        problems.push(problem(`${where}.type`, type, '1 to 12 or exchange-specific'));
      }
      positive(body, 'len', where, problems);
      break;
    }
    case 'video': {
      const mimes = field(body, 'mimes');
      if (!isStringArray(mimes) || mimes.length === 0) {
        problems.push(problem(`${where}.mimes`, mimes, 'a non-empty array of MIME types'));
      }
      positive(body, 'minduration', where, problems, true);
      positive(body, 'maxduration', where, problems, true);
      const protocols = field(body, 'protocols');
      const valid = (p: unknown): boolean => isWholeNumber(p) && p >= 1 && p <= 10;
      if (!Array.isArray(protocols) || protocols.length === 0 || !protocols.every(valid)) {
        problems.push(problem(`${where}.protocols`, protocols, 'a non-empty array of protocols 1 to 10'));
      }
      break;
    }
  }
}

function checkAssets(request: JsonObject, problems: string[]): void {
  const assets = field(request, 'assets');
  if (!Array.isArray(assets) || assets.length === 0) {
    const what = Array.isArray(assets) ? 'empty' : preview(assets);
    problems.push(`assets is ${what}, not an array holding at least one asset`);
    return;
  }
  // As Prebid Server does: when no asset has an id (or all have 0), ids are the positions.
  const numbered = assets.some((asset) => isObject(asset) && (field(asset, 'id') ?? 0) !== 0);
  const ids = new Set<unknown>();
  assets.forEach((asset: unknown, i) => {
    const where = `assets[${i}]`;
    if (!isObject(asset)) {
      problems.push(problem(where, asset, 'an object'));
      return;
    }
    const id = field(asset, 'id') ?? 0;
    if (!isWholeNumber(id)) {
      problems.push(problem(`${where}.id`, id, 'a whole number'));
    } else if (numbered && ids.has(id)) {
      problems.push(`${where}.id ${id} is used by another asset`);
    }
    ids.add(id);
    const required = field(asset, 'required');
    if (required !== undefined && required !== 0 && required !== 1) {
      problems.push(problem(`${where}.required`, required, '0 or 1'));
    }
    const kinds = ['title', 'img', 'data', 'video'].filter((kind) => field(asset, kind) !== undefined);
    if (kinds.length !== 1) {
      const held = kinds.join(' and ') || 'none';
      problems.push(`${where} holds ${held}, not exactly one of title, img, data, video`);
    }
    for (const kind of kinds) {
      const body = field(asset, kind);
      if (isObject(body)) {
        checkAssetBody(kind, body, `${where}.${kind}`, problems);
      } else {
        problems.push(problem(`${where}.${kind}`, body, 'an object'));
      }
    }
  });
}

/**
 * The problems of a Native 1.1 request (an object, or the JSON string of `imp.native.request`),
 * empty when it is valid: the checks Prebid Server makes before it sends a native request on,
 * on which its `invalid-native` vectors fail. At least one asset; unique asset ids (unless none
 * has one: Prebid Server then numbers them); exactly one of title, img, data, video per asset; a
 * title `len`; a data `type` (1 to 12 or exchange-specific); valid context, context subtype and
 * placement type; a video's mimes, durations and protocols; and the JSON type of every field read.
 */
export function validateNativeRequest(request: unknown): string[] {
  let value = request;
  if (typeof request === 'string') {
    if (request.trim() === '') {
      return ['the request is empty'];
    }
    if (Buffer.byteLength(request, 'utf8') > MAX_NATIVE_MARKUP_BYTES) {
      return [`the request is above ${MAX_NATIVE_MARKUP_BYTES} bytes`];
    }
    try {
      value = JSON.parse(request);
    } catch (error) {
      return [`the request is not JSON: ${(error as Error).message}`];
    }
  }
  if (!isObject(value)) {
    return [problem('the request', value, 'an object')];
  }
  const problems: string[] = [];
  checkContext(value, problems);
  checkAssets(value, problems);
  return problems;
}
