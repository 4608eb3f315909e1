import { validate } from '@readme/openapi-parser';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTRIBUTES, METRICS, ReportCode, SPLITS } from '@app/report-model';
import { RESULT_CODE_TABLE } from '@app/testing';
import { startReporting, USERS, type RunningReporting } from './reporting-system';

interface Fetched {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

const ALL_CODES = Object.values(ReportCode).filter((v): v is ReportCode => typeof v === 'number');

describe('OpenAPI description of the reporting API, and its documentation page [embedded]', () => {
  let api: RunningReporting;
  let doc: any;

  const get = async (path: string): Promise<Fetched> => {
    const res = await request(`${api.baseUrl}${path}`);
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  };

  beforeAll(async () => {
    api = await startReporting('embedded');
    const res = await get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    doc = JSON.parse(res.text);
  });
  afterAll(async () => {
    await api?.system.close();
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    const result = await validate(structuredClone(doc));
    expect(result.valid ? [] : result.errors).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('describes POST /api with its request and the response formats of part 4', () => {
    const op = doc.paths['/api'].post;
    expect(Object.keys(op.requestBody.content)).toEqual(
      expect.arrayContaining(['application/json', 'application/xml', 'text/xml']),
    );
    expect(Object.keys(op.responses['200'].content)).toEqual([
      'application/json',
      'application/xml',
      'text/html',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    ]);
    const request = doc.components.schemas.ReportRequest;
    expect(request.required).toEqual(
      expect.arrayContaining(['id', 'seed', 'hash', 'startDate', 'endDate', 'splits', 'columns']),
    );
    expect(Object.keys(request.properties)).toEqual(
      expect.arrayContaining(['id', 'seed', 'hash', 'type', 'filters', 'sort', 'format']),
    );
    expect(request.properties.hash.description).toMatch(/SHA-1 of the private token followed by the seed/);
    expect(doc.info.description).toContain('## Authentication');
  });

  it('lists every split of the catalogue with its exactness and report types', () => {
    const schema = doc.components.schemas.SplitElement;
    expect(schema.enum).toEqual(SPLITS.map((s) => s.name));
    expect(schema['x-splits']).toEqual(
      SPLITS.map((s) => ({
        name: s.name,
        exactness: s.exactness,
        types: s.types,
        advertiserOnlyVariant: s.variantExactness ?? null,
        valueType: s.valueKind,
      })),
    );
    for (const s of SPLITS) {
      expect(doc.info.description).toContain(`| \`${s.name}\` |`);
    }
  });

  it('lists every column of the catalogue, grouped as metrics and attributes, with their types', () => {
    const metrics = doc.components.schemas.MetricColumn;
    expect(metrics.enum).toEqual(METRICS.map((m) => m.name));
    expect(
      metrics['x-metrics'].map((m: any) => [m.name, m.types, m.dataType, m.advertiserOnlyVariant]),
    ).toEqual(METRICS.map((m) => [m.name, m.types, m.dataType, m.inVariant]));
    const attributes = doc.components.schemas.AttributeColumn;
    expect(attributes.enum).toEqual(ATTRIBUTES.map((a) => a.name));
    expect(attributes['x-attributes'].map((a: any) => [a.name, a.meaningfulFor])).toEqual(
      ATTRIBUTES.map((a) => [a.name, a.meaningfulFor]),
    );
    const record = doc.components.schemas.ReportRecord.properties;
    for (const m of METRICS) {
      expect(record[m.name].type).toBe(m.dataType === 'integer' ? 'integer' : 'number');
    }
    for (const a of ATTRIBUTES) {
      expect(record[a.name].type).toContain('null');
    }
  });

  it('lists every result code with its HTTP status and message, and a response for each status', () => {
    // The statuses and meanings of docs/reporting-api.md's table, written out in @app/testing: not the
    // functions that build this document.
    const codes = doc.components.schemas.ResultCode;
    expect(codes.enum).toEqual(ALL_CODES);
    const listed: { code: ReportCode; httpStatus: number; message: string }[] = codes['x-result-codes'];
    expect(listed.map((c) => [c.code, c.httpStatus])).toEqual(
      ALL_CODES.map((code) => [code, RESULT_CODE_TABLE[code].status]),
    );
    for (const { code, message } of listed) {
      const { meaning } = RESULT_CODE_TABLE[code];
      expect(message === meaning || message.startsWith(`${meaning}: `), `${code}: ${message}`).toBe(true);
    }
    const messageOf = new Map(listed.map((c) => [c.code, c.message]));
    const responses = doc.paths['/api'].post.responses;
    for (const code of ALL_CODES) {
      const { status } = RESULT_CODE_TABLE[code];
      expect(responses[String(status)], `a ${status} response for code ${code}`).toBeDefined();
      if (status >= 400) {
        const example = responses[String(status)].content['application/json'].examples[`code${code}`];
        expect(example.value).toEqual({ error: { code, message: messageOf.get(code) } });
        expect(responses[String(status)].content['application/xml'].examples[`code${code}`].value).toContain(
          `<code>${code}</code>`,
        );
      }
      expect(responses[String(status)].description).toContain(`**${code}**`);
    }
  });

  it('shows the error bodies the service sends: its code, and the message it starts with', async () => {
    const examples = doc.paths['/api'].post.responses;
    const answers = [
      [ReportCode.InvalidContentType, { 'content-type': 'text/plain' }, 'id=demo-pub'],
      [ReportCode.InvalidInput, { 'content-type': 'application/json' }, '{"id": '],
    ] as const;
    for (const [code, headers, body] of answers) {
      const res = await request(`${api.baseUrl}/api`, { method: 'POST', headers, body });
      const { status } = RESULT_CODE_TABLE[code];
      expect(res.statusCode, `code ${code}`).toBe(status);
      const sent = (await res.body.json()) as { error: { code: number; message: string } };
      const shown = examples[String(status)].content['application/json'].examples[`code${code}`].value;
      expect(sent.error.code).toBe(shown.error.code);
      // The service adds what exactly was wrong after the code's message.
      expect(sent.error.message.startsWith(shown.error.message), sent.error.message).toBe(true);
    }
  });

  it('names the headers of the responses', () => {
    expect(Object.keys(doc.components.headers).sort()).toEqual(
      ['Retry-After', 'X-Report-Code', 'X-Report-Exactness', 'X-Report-Removed', 'X-Request-Id'].sort(),
    );
    const responses = doc.paths['/api'].post.responses;
    expect(Object.keys(responses['200'].headers)).toEqual(
      expect.arrayContaining(['X-Report-Code', 'X-Report-Exactness', 'X-Report-Removed']),
    );
    expect(Object.keys(responses['429'].headers)).toContain('Retry-After');
  });

  it('has request examples the service accepts, in JSON and in XML', async () => {
    const content = doc.paths['/api'].post.requestBody.content;
    for (const [name, example] of Object.entries<any>(content['application/json'].examples)) {
      const body = Object.fromEntries(
        Object.entries<unknown>(example.value).filter(([key]) => !['id', 'seed', 'hash'].includes(key)),
      );
      const user = Object.values(USERS).find((u) => u.id === example.value.id)!;
      const res = await api.client.json(user, body);
      expect([name, res.status, res.code]).toEqual([name, 200, ReportCode.NoData]);
    }
    const xml: string = content['application/xml'].examples.publisher.value;
    const { seed, hash } = api.client.signed(USERS.pub, {}) as { seed: number; hash: string };
    const resigned = xml
      .replace(/<seed>\d+<\/seed>/, `<seed>${seed}</seed>`)
      .replace(/<hash>[0-9a-f]+<\/hash>/, `<hash>${hash}</hash>`);
    const res = await api.client.send(resigned, { 'content-type': 'application/xml' });
    expect([res.status, res.code]).toEqual([200, ReportCode.NoData]);
    expect(res.text).toMatch(/^<\?xml/);
  });

  it('serves the documentation page at /docs, with every asset it names served by the app itself', async () => {
    const page = await get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('id="swagger-ui"');
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    const local = assets.filter((a) => a.startsWith('/'));
    expect(
      assets.filter((a) => !a.startsWith('/')),
      'no asset from another origin',
    ).toEqual([]);
    expect(local).toEqual(
      expect.arrayContaining(['/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js', '/docs/docs-init.js']),
    );
    const types: Record<string, RegExp> = {
      css: /^text\/css/,
      js: /^text\/javascript/,
      png: /^image\/png/,
      json: /^application\/json/,
    };
    for (const asset of local.filter((a) => a !== '/')) {
      const res = await get(asset);
      expect([asset, res.status]).toEqual([asset, 200]);
      expect(res.text.length, asset).toBeGreaterThan(0);
      const ext = asset.split('.').pop()!;
      if (types[ext]) {
        expect(res.headers['content-type'], asset).toMatch(types[ext]);
      }
    }
    const init = await get('/docs/docs-init.js');
    expect(init.text).toContain("url: '/openapi.json'");
    expect((await get('/docs/../package.json')).status).toBe(404);
    expect((await get('/docs/absolute-path.js')).status).toBe(404);
  });
});
