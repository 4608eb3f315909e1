import { createHash } from 'node:crypto';
import { request } from 'undici';

export interface ApiResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly code: number;
  readonly text: string;
  readonly buffer: Buffer;
  json<T = unknown>(): T;
}

export function sha1Hex(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

/**
 * Signs and sends reporting requests. Seeds start at the given clock's second and increase by one
 * per request, as a real client's would over time.
 */
export class ReportClient {
  private lastSeed = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly clock: () => Date,
  ) {}

  nextSeed(): number {
    const now = Math.floor(this.clock().getTime() / 1000) - 240;
    this.lastSeed = Math.max(this.lastSeed + 1, now);
    return this.lastSeed;
  }

  signed(user: { id: string; token: string }, body: Record<string, unknown>): Record<string, unknown> {
    const seed = this.nextSeed();
    return { id: user.id, seed, hash: sha1Hex(`${user.token}${seed}`), ...body };
  }

  async json(
    user: { id: string; token: string },
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
  ) {
    return this.send(JSON.stringify(this.signed(user, body)), {
      'content-type': 'application/json',
      ...headers,
    });
  }

  async send(
    body: string | Buffer,
    headers: Record<string, string> = {},
    method: 'POST' | 'GET' = 'POST',
  ): Promise<ApiResponse> {
    const response = await request(`${this.baseUrl}/api`, {
      method,
      headers,
      body: method === 'POST' ? body : undefined,
    });
    const buffer = Buffer.from(await response.body.arrayBuffer());
    const text = buffer.toString('utf8');
    return {
      status: response.statusCode,
      headers: response.headers,
      code: Number(response.headers['x-report-code']),
      text,
      buffer,
      json: <T>() => JSON.parse(text) as T,
    };
  }
}
