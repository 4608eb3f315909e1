export enum CatalogErrorCode {
  Unreadable = 'CATALOG_UNREADABLE',
  Invalid = 'CATALOG_INVALID',
}

export class CatalogException extends Error {
  constructor(
    readonly code: CatalogErrorCode,
    readonly problems: readonly string[],
  ) {
    super(
      `catalog ${code === CatalogErrorCode.Unreadable ? 'unreadable' : 'invalid'}: ${problems.join('; ')}`,
    );
    this.name = 'CatalogException';
  }
}
