import type { Logger } from 'pino';
import { CatalogSource, type CatalogReload } from '@app/catalog';
import { catalogInfo, catalogLastReload, catalogReloads } from '@app/observability';
import type { BaseSettings } from '@app/config';

/** The catalog file the settings name (the demo catalog without one), read and validated now. */
export function catalogSourceFrom(settings: BaseSettings): CatalogSource {
  return settings.CATALOG_PATH ? new CatalogSource(settings.CATALOG_PATH) : new CatalogSource();
}

/**
 * Keeps a process's catalog following its file: reloaded when the file changes (`watch`) and on SIGHUP,
 * each outcome logged (a refused file with every problem) and counted in the catalog metrics.
 * Returns the function that stops following.
 */
export function followCatalog(source: CatalogSource, logger: Logger, watch = true): () => void {
  catalogInfo.reset();
  catalogInfo.set({ version: source.version }, 1);
  const stop = source.onReload((_catalog, reload: CatalogReload) => {
    catalogReloads.inc({ result: reload.result });
    catalogLastReload.set({ result: reload.result }, Date.now() / 1000);
    if (reload.result === 'applied') {
      catalogInfo.reset();
      catalogInfo.set({ version: reload.version }, 1);
      logger.info({ file: source.file, version: reload.version }, 'catalog reloaded');
    } else if (reload.result === 'refused') {
      logger.error(
        { file: source.file, version: reload.version, problems: reload.problems },
        'catalog refused: the previous one still serves',
      );
    }
  });
  const onHangup = () => source.reload();
  process.on('SIGHUP', onHangup);
  if (watch) {
    source.watch();
  }
  return () => {
    stop();
    process.off('SIGHUP', onHangup);
    source.close();
  };
}
