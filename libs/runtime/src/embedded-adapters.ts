import { type Catalog, loadCatalog } from '@app/catalog';
import { InProcessEventBus, type EventBus } from '@app/events';
import { openReportStore, type ReportStore } from '@app/report-store';
import { MemoryStateStore, type StateStore } from '@app/state-store';
import type { BaseSettings, StoreSettings } from '@app/config';

export function catalogFrom(settings: BaseSettings): Catalog {
  return loadCatalog(settings.CATALOG_PATH);
}

export function reportStoreFrom(settings: StoreSettings, queryTimeoutMs = 30_000): Promise<ReportStore> {
  return openReportStore({
    kind: 'duckdb',
    path: settings.DUCKDB_PATH,
    sampleDenominator: settings.INEXACT_SAMPLE_DENOMINATOR,
    queryTimeoutMs,
  });
}

export function eventBusFrom(): EventBus {
  return new InProcessEventBus();
}

export function stateStoreFrom(): StateStore {
  return new MemoryStateStore();
}
