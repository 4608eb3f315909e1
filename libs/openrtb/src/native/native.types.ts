/**
 * OpenRTB Native 1.1 request and response markup (spec parts 2.9 and 2.11). The native request
 * goes into `imp.native.request`; the response into `bid.adm`, with or without a `native` wrapper.
 */

/** Native 1.1 image asset types; 505 is ours: the whole ad as one image of the slot's size. */
export enum NativeImageType {
  Icon = 1,
  Logo = 2,
  Main = 3,
  StaticAd = 505,
}

/** Native 1.1 data asset types used by email native ads. */
export enum NativeDataType {
  Sponsored = 1,
  Description = 2,
}

export interface NativeRequestAsset {
  id: number;
  required?: 0 | 1;
  title?: { len: number };
  img?: { type?: number; w?: number; h?: number; wmin?: number; hmin?: number; mimes?: string[] };
  data?: { type: number; len?: number };
  /** Never in the exchange's own requests (an email plays no video); public requests have it. */
  video?: { mimes?: string[]; minduration?: number; maxduration?: number; protocols?: number[] };
}

export interface NativeRequest {
  ver?: string;
  /** Context: 1 content-centric (an email is content). */
  context?: number;
  contextsubtype?: number;
  /** Placement type: 1 in the feed of content. */
  plcmttype?: number;
  plcmtcnt?: number;
  seq?: number;
  assets: NativeRequestAsset[];
}

export interface NativeResponseAsset {
  id: number;
  required?: 0 | 1;
  title?: { text: string };
  img?: { url: string; w?: number; h?: number; type?: number };
  data?: { value: string; label?: string };
  link?: NativeLink;
}

export interface NativeLink {
  url: string;
  clicktrackers?: string[];
  fallback?: string;
}

export interface NativeResponse {
  ver?: string;
  assets: NativeResponseAsset[];
  link: NativeLink;
  imptrackers?: string[];
  jstracker?: string;
}

/**
 * A native ad the exchange can serve, after validation against its request and macro substitution:
 * a static one is its 505 image; a real one is flattened into one image of the slot's size.
 */
export type NativeAd =
  | {
      readonly kind: 'static';
      readonly image: { readonly url: string; readonly w?: number; readonly h?: number };
      readonly link: { readonly url: string; readonly clicktrackers: readonly string[] };
      readonly imptrackers: readonly string[];
    }
  | {
      readonly kind: 'flattened';
      readonly title: string;
      readonly description: string;
      readonly sponsored: string;
      readonly image?: { readonly url: string; readonly w?: number; readonly h?: number };
      readonly link: { readonly url: string; readonly clicktrackers: readonly string[] };
      readonly imptrackers: readonly string[];
    };
