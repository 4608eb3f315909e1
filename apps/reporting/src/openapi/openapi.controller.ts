import path from 'node:path';
import { Controller, Get, Inject, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { CONTENT_TYPES, StaticAssets, browserHeaders, packageFile } from '../builder/static-assets';
import type { OpenApiDocument } from './openapi.document';
import { OPENAPI_DOCUMENT } from './openapi.options';

const PUBLIC_DIR = path.join(__dirname, 'public');
const SWAGGER_UI_DIR = path.dirname(packageFile('swagger-ui-dist/absolute-path.js'));

/** Swagger UI draws with inline styles; its scripts and everything else come from this origin. */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** `GET /openapi.json`, and `GET /docs`: Swagger UI from the installed `swagger-ui-dist`, no CDN. */
@Controller()
export class OpenApiController {
  private readonly assets = new StaticAssets(
    {
      'index.html': { file: path.join(PUBLIC_DIR, 'docs.html'), contentType: CONTENT_TYPES.html },
      'docs.css': { file: path.join(PUBLIC_DIR, 'docs.css'), contentType: CONTENT_TYPES.css },
      'docs-init.js': { file: path.join(PUBLIC_DIR, 'docs-init.js'), contentType: CONTENT_TYPES.js },
      'swagger-ui.css': { file: path.join(SWAGGER_UI_DIR, 'swagger-ui.css'), contentType: CONTENT_TYPES.css },
      'swagger-ui-bundle.js': {
        file: path.join(SWAGGER_UI_DIR, 'swagger-ui-bundle.js'),
        contentType: CONTENT_TYPES.js,
      },
      'favicon-32x32.png': {
        file: path.join(SWAGGER_UI_DIR, 'favicon-32x32.png'),
        contentType: CONTENT_TYPES.png,
      },
    },
    browserHeaders(DOCS_CSP),
  );

  constructor(@Inject(OPENAPI_DOCUMENT) private readonly document: OpenApiDocument) {}

  @Get('openapi.json')
  openapi(@Res() res: Response): void {
    res
      .status(200)
      .set('Cache-Control', 'no-cache')
      .set('Access-Control-Allow-Origin', '*')
      .json(this.document);
  }

  @Get('docs')
  docs(@Res() res: Response): void {
    this.assets.send('index.html', res);
  }

  @Get('docs/:file')
  docsAsset(@Param('file') file: string, @Res() res: Response): void {
    this.assets.send(file, res);
  }
}
