import { Inject, Injectable } from '@nestjs/common';
import type { Catalog, CatalogSource } from '@app/catalog';
import { adRequests } from '@app/observability';
import { AuctionErrorCode, AuctionException } from '../auction.exception';
import { CATALOG, CLOCK, type Clock } from '../auction.tokens';
import { decisionEvent, encodeAdEvent } from '../core/auction-events';
import { attributionWindowHours, DecisionStore, type AttributionTouch } from './decision.store';
import { EventPublisher } from './event.publisher';
import type { TagRequest } from './ad-serving.service';
import { parseTagQuery } from './tag-query.parser';
import { ViewerResolver } from './viewer.resolver';

const ORDER_ID = /^[\x21-\x7e]{1,128}$/;
const HOUR_MS = 3_600_000;

export type ConversionResult = 'post_click' | 'post_view' | 'unattributed' | 'duplicate';

/**
 * The advertiser's conversion pixel: a conversion of a user who clicked one of the advertiser's
 * ads within its post-click window is post-click (the last click wins); else one who saw one
 * within its post-view window is post-view (the last view). The user is recognised by our cookie
 * or by the publisher's recipient hash, when the advertiser passes it on.
 */
@Injectable()
export class ConversionService {
  /** The catalog serving now: read per request, so that a reload takes effect at once. */
  private get catalog(): Catalog {
    return this.catalogs.current;
  }

  constructor(
    @Inject(CATALOG) private readonly catalogs: CatalogSource,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly decisions: DecisionStore,
    private readonly viewers: ViewerResolver,
    private readonly events: EventPublisher,
  ) {}

  /** `tag.slotId` is the advertiser's id here: the path names the advertiser. */
  async convert(tag: TagRequest): Promise<{ result: ConversionResult; setCookie?: string }> {
    const advertiser = this.catalog.advertisers.get(tag.slotId);
    if (!advertiser) {
      throw new AuctionException(AuctionErrorCode.UnknownAdvertiser, 'no advertiser with that id');
    }
    const { query } = tag;
    const { userKeys, setCookie } = await this.viewers.resolve(tag.req, parseTagQuery(query, 0).tag);
    const now = this.clock();
    const clickHours = attributionWindowHours(advertiser, 'click');
    const viewHours = attributionWindowHours(advertiser, 'view');
    const clickWindow = clickHours * HOUR_MS;
    const viewWindow = viewHours * HOUR_MS;
    const click = await this.latest('click', advertiser.id, userKeys, now, clickWindow);
    const view = click ? undefined : await this.latest('view', advertiser.id, userKeys, now, viewWindow);
    const touch = click ?? view;
    if (!touch) {
      adRequests.inc({ endpoint: 'conv', result: 'unattributed' });
      return { result: 'unattributed', setCookie };
    }
    const order = typeof query.order === 'string' && ORDER_ID.test(query.order) ? query.order : undefined;
    const windowHours = Math.max(clickHours, viewHours);
    if (order && !(await this.decisions.firstConversion(advertiser.id, order, windowHours))) {
      adRequests.inc({ endpoint: 'conv', result: 'duplicate' });
      return { result: 'duplicate', setCookie };
    }
    const result = click ? 'post_click' : 'post_view';
    adRequests.inc({ endpoint: 'conv', result });
    this.events.publish([
      encodeAdEvent({ ...decisionEvent('conversion', now, touch.decision), attribution: result }),
    ]);
    return { result, setCookie };
  }

  /** The most recent touch of any of the user's keys still inside the window. */
  private async latest(
    kind: 'click' | 'view',
    advertiserId: string,
    userKeys: readonly string[],
    now: Date,
    windowMs: number,
  ): Promise<AttributionTouch | undefined> {
    const touches = await Promise.all(
      userKeys.map((key) => this.decisions.lastTouch(kind, advertiserId, key)),
    );
    return touches
      .filter((t): t is AttributionTouch => t !== undefined)
      .filter((t) => {
        const age = now.getTime() - t.at;
        return age >= 0 && age <= windowMs;
      })
      .sort((a, b) => b.at - a.at)[0];
  }
}
