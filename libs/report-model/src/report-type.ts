export const REPORT_TYPES = ['publisher', 'advertiser'] as const;
export type ReportType = (typeof REPORT_TYPES)[number];

/**
 * The full reference API, or the reduced advertiser-only variant of reporting part 1
 * (docs/specification-notes.md#reporting-part-1).
 */
export type ApiVariant = 'full' | 'advertiser_only';

export type Exactness = 'exact' | 'inexact';
