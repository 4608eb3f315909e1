import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { ReportCode } from '@app/report-model';
import { ReportingException } from '../reporting.exception';
import { ReportRequestDto } from './report-request.dto';

interface Problem {
  readonly code: ReportCode;
  readonly message: string;
}

function problemsOf(errors: readonly ValidationError[], prefix = ''): Problem[] {
  return errors.flatMap((error) => {
    const at = prefix ? `${prefix}.${error.property}` : error.property;
    const own = Object.entries(error.constraints ?? {}).map(([name, message]) => {
      if (name === 'whitelistValidation') {
        return { code: ReportCode.InvalidInput, message: `unknown field ${at}` };
      }
      const context = error.contexts?.[name] as { code?: ReportCode } | undefined;
      const code = context?.code ?? ReportCode.InvalidInput;
      return { code, message: message.replace(error.property, at) };
    });
    // A field of the wrong shape says all there is: its children's complaints would only echo it.
    return own.length > 0 ? own : problemsOf(error.children ?? [], at);
  });
}

/**
 * Validates the decoded body against the request model. The most basic failure decides the code:
 * a missing parameter (901) before a wrong type (902) before an invalid value (903); the message
 * lists every problem.
 */
export function validateReportRequest(body: Record<string, unknown>): ReportRequestDto {
  const dto = plainToInstance(ReportRequestDto, body);
  const problems = problemsOf(validateSync(dto, { whitelist: true, forbidNonWhitelisted: true }));
  if (problems.length > 0) {
    const code = Math.min(...problems.map((p) => p.code)) as ReportCode;
    throw new ReportingException(code, problems.map((p) => p.message).join('; '));
  }
  return dto;
}
