import path from 'node:path';
import { Controller, Get, Inject, Param, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { parseDateExpression, utcToday } from '@app/report-model';
import { builderCatalog } from './builder-catalog';
import { CONTENT_TYPES, StaticAssets, browserHeaders, packageFile } from './static-assets';
import { REPORT_BUILDER_OPTIONS, type ReportBuilderOptions } from './report-builder.options';

const PUBLIC_DIR = path.join(__dirname, 'public');

/**
 * The page's ES modules, served as they are (no bundling: the browser resolves their imports
 * under `/assets/`); `builder.js` starts the page. `npm run build` compiles `.ts` only and copies
 * these unchanged (compiled, their imports would become `require`); tsconfig.builder.json
 * type-checks them.
 */
export const BUILDER_MODULES = [
  'builder.js',
  'api.js',
  'catalogue.js',
  'delivery.js',
  'dom.js',
  'form.js',
  'messages.js',
  'results.js',
  'results-chart.js',
  'signing.js',
  'storage.js',
] as const;

/**
 * The page runs only its own files: no inline script or style, no other origin. `form-action
 * 'none'` keeps a form from ever being submitted the browser's way, which would put the fields
 * (the token among them) in a URL.
 */
export const BUILDER_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The report builder: a page at `/` that signs `POST /api` requests itself, its files under
 * `/assets/`, and two small JSON answers it needs: the catalogue with the service's clock, and
 * what a date expression means today.
 */
@Controller()
export class ReportBuilderController {
  private readonly assets = new StaticAssets(
    {
      'index.html': { file: path.join(PUBLIC_DIR, 'index.html'), contentType: CONTENT_TYPES.html },
      ...Object.fromEntries(
        BUILDER_MODULES.map((name) => [
          name,
          { file: path.join(PUBLIC_DIR, name), contentType: CONTENT_TYPES.js },
        ]),
      ),
      'builder.css': { file: path.join(PUBLIC_DIR, 'builder.css'), contentType: CONTENT_TYPES.css },
      'favicon.svg': { file: path.join(PUBLIC_DIR, 'favicon.svg'), contentType: CONTENT_TYPES.svg },
      'chart.umd.js': {
        file: path.join(path.dirname(packageFile('chart.js')), 'chart.umd.min.js'),
        contentType: CONTENT_TYPES.js,
      },
    },
    browserHeaders(BUILDER_CSP),
  );

  constructor(@Inject(REPORT_BUILDER_OPTIONS) private readonly options: ReportBuilderOptions) {}

  private now(): Date {
    return (this.options.clock ?? (() => new Date()))();
  }

  @Get()
  page(@Res() res: Response): void {
    this.assets.send('index.html', res);
  }

  @Get('assets/:file')
  asset(@Param('file') file: string, @Res() res: Response): void {
    this.assets.send(file, res);
  }

  @Get('builder/catalog.json')
  catalog(@Res() res: Response): void {
    const body = builderCatalog({
      now: this.now(),
      seedWindowSeconds: this.options.config.SEED_WINDOW_SECONDS,
      requestsPerSecond: this.options.config.RATE_LIMIT_PER_SECOND,
    });
    res.status(200).set('Cache-Control', 'no-store').json(body);
  }

  /** The day a date expression names on the service's clock, for the page to show beside the field. */
  @Get('builder/date')
  date(@Query('expression') expression: unknown, @Res() res: Response): void {
    const now = this.now();
    const text = typeof expression === 'string' ? expression.slice(0, 100) : '';
    const date = parseDateExpression(text, now) ?? null;
    const today = utcToday(now);
    res
      .status(200)
      .set('Cache-Control', 'no-store')
      .json({ expression: text, date, today, beforeToday: date !== null && date < today });
  }
}
