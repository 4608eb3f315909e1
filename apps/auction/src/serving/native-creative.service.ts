import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import {
  NativeAdRenderer,
  NativeImageFetcher,
  nativeAdCacheKey,
  type FlattenedNativeAd,
} from '@app/native-render';
import type { NativeAd } from '@app/openrtb';
import { STATE_STORE, type StateStore } from '@app/state-store';
import type { DspUrlGuard } from '@app/url-guard';
import type { AuctionConfig } from '../auction.config';
import { AUCTION_CONFIG, DSP_URL_GUARD } from '../auction.tokens';
import { PublicOrigin } from '../public-origin.service';

/** What a native ad shows as: a static ad's own image, or our flattened PNG of it. */
export type NativeImage =
  { readonly ok: true; readonly url: string } | { readonly ok: false; readonly reason: string };

interface StoredNativeAd {
  readonly ad: FlattenedNativeAd;
  readonly size: { readonly w: number; readonly h: number };
}

const HOUR_MS = 3_600_000;

/**
 * Native ads as email images: a static one (its 505 image) is served as it is; a real one is
 * flattened into one PNG of the slot's size, kept in the renderer's cache and served at
 * `/native/<key>.png`. The ad itself is kept in the state store for as long as a decision, so that
 * another instance, or this one after an eviction or a restart, can render it again.
 */
@Injectable()
export class NativeCreativeService implements OnApplicationShutdown {
  private readonly renderer: NativeAdRenderer;
  private readonly ttlMs: number;

  constructor(
    @Inject(AUCTION_CONFIG) config: AuctionConfig,
    @Inject(STATE_STORE) private readonly state: StateStore,
    @Inject(DSP_URL_GUARD) guard: DspUrlGuard,
    private readonly origin: PublicOrigin,
  ) {
    this.renderer = new NativeAdRenderer({
      fetcher: new NativeImageFetcher({
        timeoutMs: config.NATIVE_IMAGE_TIMEOUT_MS,
        guard,
      }),
    });
    this.ttlMs = config.DECISION_TTL_HOURS * HOUR_MS;
  }

  async imageOf(
    dspId: string,
    crid: string,
    ad: NativeAd,
    size: { w: number; h: number },
  ): Promise<NativeImage> {
    if (ad.kind === 'static') {
      return { ok: true, url: ad.image.url };
    }
    const key = nativeAdCacheKey(dspId, crid, ad, size);
    const rendered = await this.renderer.flatten(key, ad, size);
    if (!rendered.ok) {
      return { ok: false, reason: rendered.reason };
    }
    await this.state.set(`native:${key}`, JSON.stringify({ ad, size } satisfies StoredNativeAd), this.ttlMs);
    return { ok: true, url: `${this.origin.value}/native/${key}.png` };
  }

  /** The PNG of a key: from the cache, or rendered again from the stored ad. */
  async png(key: string): Promise<Buffer | undefined> {
    const cached = this.renderer.get(key);
    if (cached) {
      return cached;
    }
    const raw = await this.state.get(`native:${key}`);
    if (raw === undefined) {
      return undefined;
    }
    const stored = JSON.parse(raw) as StoredNativeAd;
    const rendered = await this.renderer.flatten(key, stored.ad, stored.size);
    return rendered.ok ? rendered.png : undefined;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.renderer.close();
  }
}
