import type { Request } from 'express';
import getRawBody from 'raw-body';
import { ReportCode } from '@app/report-model';
import { ReportingException } from '../reporting.exception';

/** Reads the request body, refusing more than `limit` bytes before buffering them. */
export async function readBody(req: Request, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    throw tooLarge(limit);
  }
  try {
    return await getRawBody(req, { limit });
  } catch (error) {
    if ((error as { type?: string }).type === 'entity.too.large') {
      throw tooLarge(limit);
    }
    throw new ReportingException(ReportCode.InvalidInput, 'the request body could not be read');
  }
}

function tooLarge(limit: number): ReportingException {
  return new ReportingException(ReportCode.InvalidInput, `the request body exceeds ${limit} bytes`, {}, 413);
}
