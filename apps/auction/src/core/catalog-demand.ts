import type { Catalog, CreativeRecord, DemandType, StrategyRecord } from '@app/catalog';
import { fnv1a32 } from '@app/events';
import type { Candidate } from './candidate';

interface StrategyDemand {
  readonly strategy: StrategyRecord;
  readonly demandType: DemandType;
  readonly advertiserDomain: string;
  readonly creatives: readonly CreativeRecord[];
}

/**
 * The demand the catalog holds for each ad size: direct, house and fallback strategies with their
 * creatives of that size. Built once per catalog; a lookup is a map read.
 */
export class CatalogDemand {
  private readonly bySize = new Map<string, StrategyDemand[]>();
  private readonly byStrategy = new Map<string, StrategyDemand>();

  constructor(
    private readonly catalog: Catalog,
    /** Where the exchange hosts the images of catalog creatives that have no `imageUrl`. */
    private readonly hostedImageUrl: (creative: CreativeRecord) => string,
  ) {
    const creativesByStrategy = new Map<string, CreativeRecord[]>();
    for (const creative of catalog.document.creatives) {
      const list = creativesByStrategy.get(creative.strategyId) ?? [];
      list.push(creative);
      creativesByStrategy.set(creative.strategyId, list);
    }
    for (const strategy of catalog.document.strategies) {
      const { campaign, advertiser } = catalog.strategyLineage(strategy.id);
      if (!campaign || !advertiser || campaign.demandType === 'exchange') {
        continue;
      }
      const sizes = new Map<string, CreativeRecord[]>();
      for (const creative of creativesByStrategy.get(strategy.id) ?? []) {
        sizes.set(creative.size, [...(sizes.get(creative.size) ?? []), creative]);
      }
      this.byStrategy.set(strategy.id, {
        strategy,
        demandType: campaign.demandType,
        advertiserDomain: advertiser.domain,
        creatives: creativesByStrategy.get(strategy.id) ?? [],
      });
      for (const [size, creatives] of sizes) {
        const list = this.bySize.get(size) ?? [];
        list.push({
          strategy,
          demandType: campaign.demandType,
          advertiserDomain: advertiser.domain,
          creatives,
        });
        this.bySize.set(size, list);
      }
    }
  }

  /**
   * Candidates for a slot of that size: one per strategy, with one of its creatives chosen by the
   * viewer's key, so that a viewer sees a stable creative and viewers as a whole see them all.
   */
  candidates(size: string, viewerKey: string): { paid: Candidate[]; fill: Candidate[] } {
    const paid: Candidate[] = [];
    const fill: Candidate[] = [];
    const spread = fnv1a32(viewerKey);
    for (const demand of this.bySize.get(size) ?? []) {
      const creative = demand.creatives[spread % demand.creatives.length];
      (demand.demandType === 'direct' ? paid : fill).push(this.candidate(demand, creative));
    }
    return { paid, fill };
  }

  /**
   * The candidate of one strategy's creative, when the catalog still has both: what a roadblock's
   * reservation names for a slot.
   */
  candidateOf(strategyId: string, creativeId: string): Candidate | undefined {
    const demand = this.byStrategy.get(strategyId);
    const creative = demand?.creatives.find((c) => c.id === creativeId);
    return demand && creative ? this.candidate(demand, creative) : undefined;
  }

  private candidate(demand: StrategyDemand, creative: CreativeRecord): Candidate {
    return {
      demandType: demand.demandType,
      priceMicros: demand.demandType === 'direct' ? demand.strategy.cpmMicros : 0,
      strategyId: demand.strategy.id,
      creativeId: creative.id,
      advertiserDomain: demand.advertiserDomain,
      imageUrl: creative.imageUrl ?? this.hostedImageUrl(creative),
      clickUrl: creative.landingUrl,
    };
  }

  /** Whether any direct, house or fallback strategy has a creative of that size. */
  hasDemand(size: string): boolean {
    return (this.bySize.get(size)?.length ?? 0) > 0;
  }

  creative(creativeId: string): CreativeRecord | undefined {
    return this.catalog.creatives.get(creativeId);
  }
}
