import { createHash } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { testCatalogDocument } from '@app/testing';

/** The creative of `catalogWithWinner`'s strategy, which outbids every other direct one on 300x250. */
export const RELOADED_CREATIVE = 'cr-reloaded-300x250';

/**
 * The test catalog without DSPs, plus a direct strategy at a CPM nothing else reaches and a user
 * of the first media group: what a reload must make visible to the auction and to the reporting.
 */

export function catalogWithWinner(): any {
  return testCatalogDocument((doc: any) => {
    doc.dsps = [];
    doc.campaigns.push({
      id: 'cmp-reloaded',
      name: 'Reloaded campaign',
      insertionOrderId: 'io-1-1',
      campaignType: 'newsletter',
      demandType: 'direct',
    });
    doc.strategies.push({
      id: 'str-reloaded',
      name: 'Reloaded',
      campaignId: 'cmp-reloaded',
      cpmMicros: 40_000_000,
    });
    doc.creatives.push({
      id: RELOADED_CREATIVE,
      name: 'Reloaded 300x250',
      strategyId: 'str-reloaded',
      size: '300x250',
      landingUrl: 'https://www.acmeoutdoor.com/reloaded',
    });
    doc.users.push({
      id: 'reloaded-user',
      accountId: 'acc-mg-1',
      token: 'reloaded-user-token',
      variant: 'full',
      status: 'active',
      apiAccess: true,
    });
  });
}

/** Replaces a file as deploy tools do (written beside it, renamed over it); its catalog version. */
export function replaceFile(file: string, text: string): string {
  writeFileSync(`${file}.next`, text);
  renameSync(`${file}.next`, file);
  return catalogVersionOf(text);
}

/** What `adx_catalog_info` calls a file: the first 12 hex digits of its SHA-256. */
export function catalogVersionOf(bytes: string | Buffer): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 12);
}
