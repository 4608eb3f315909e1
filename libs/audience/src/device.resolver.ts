import UAParser from 'ua-parser-js';
import { LruCache } from './lru-cache';

/** `MediaCenter` covers smart TVs, consoles and set-top boxes. */
export const DEVICE_TYPES = ['PC', 'Phone', 'Tablet', 'WebmailProxy', 'MediaCenter'] as const;
export type DeviceType = (typeof DEVICE_TYPES)[number];

/**
 * The device dimensions of reporting part 2.5 (docs/specification-notes.md#reporting-part-2-5); unknown
 * values are empty strings.
 */
export interface DeviceDimensions {
  readonly device_maker: string;
  /** Phones and tablets only. */
  readonly device_model: string;
  readonly device_type: DeviceType | '';
  readonly os: string;
  /** The browser or email client. */
  readonly browser: string;
}

export const EMPTY_DEVICE: DeviceDimensions = Object.freeze({
  device_maker: '',
  device_model: '',
  device_type: '',
  os: '',
  browser: '',
});

/** Real user agents are far shorter; the cut bounds parsing time and the cache's memory. */
const MAX_USER_AGENT_LENGTH = 512;
/** Email opens repeat a few thousand user agents, most of all the Gmail proxy's. */
const CACHE_CAPACITY = 4_096;
/** A model is copied from the user agent, so a forged one can be hundreds of characters long. */
const MAX_VALUE_LENGTH = 64;

interface ClientRule {
  readonly pattern: RegExp;
  readonly browser: string;
}

/**
 * Webmail clients that fetch images through their own servers. The request then says nothing of the
 * viewer's device, and the parser would take it for the browser the proxy imitates.
 *
 * Outlook.com has no rule: Microsoft documents no user agent for its image fetches, and requests
 * from Microsoft's network in public reports carry ordinary browser strings (one public classifier
 * files Gmail's prefetcher below under Outlook.com). Telling them apart would take the requester's
 * network (Microsoft's AS 8075), which DB-IP's City Lite database does not give.
 */
const WEBMAIL_PROXIES: readonly ClientRule[] = [
  // "Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)"
  // (github.com/faisalman/ua-parser-js/issues/494, github.com/ua-parser/uap-core/pull/170).
  { pattern: /GoogleImageProxy|via ggpht\.com/i, browser: 'Gmail' },
  // Gmail prefetching a new message's images from Google's addresses while the recipient has Gmail
  // open: "... Chrome/42.0.2311.135 Safari/537.36 Edge/12.246 Mozilla/5.0", this exact string
  // (sparkpost.com/blog/gmail-prefetching-images). No browser repeats "Mozilla/5.0" at the end.
  { pattern: /Edge\/12\.246 Mozilla\/5\.0$/, browser: 'Gmail' },
  // "YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html": the string links
  // Yahoo's own page about the proxy (also quoted in ua-parser-js issue 494).
  { pattern: /YahooMailProxy/i, browser: 'Yahoo Mail' },
];

/** Desktop email clients that the parser names after their engine, or not at all. */
const DESKTOP_EMAIL_CLIENTS: readonly ClientRule[] = [
  // Outlook for Windows fetches images through Internet Explorer's stack, which appends
  // "Microsoft Outlook 14.0.7109; ms-office; MSOffice 14" to an MSIE 7.0 string
  // (github.com/ua-parser/uap-core/issues/29); public tracking code also records
  // "Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.4266; Pro)". Outlook for Mac
  // sends "MacOutlook/16.x" (matomo-org/device-detector, regexes/client/pim.yml), and the new
  // Outlook for Windows, an Edge WebView, appends "OneOutlook/1.2025.516.400" (seen in public logs).
  { pattern: /Microsoft Outlook|ms-office|MSOffice|MacOutlook\/|OneOutlook\//i, browser: 'Outlook' },
  // "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Thunderbird/128.5.0"
  { pattern: /Thunderbird\//i, browser: 'Thunderbird' },
];

/** Operating systems that only run on computers, so that a parse without a device type is a PC. */
const DESKTOP_OS =
  /^(?:Windows|Mac OS|Linux|Chromium OS|[KXL]?Ubuntu|Debian|Fedora|(?:open)?SUSE|Mint|Arch|Gentoo|CentOS|Red ?Hat|Manjaro|FreeBSD|OpenBSD|NetBSD|Solaris)$/i;

const cache = new LruCache<string, DeviceDimensions>(CACHE_CAPACITY);
const parser = new UAParser();

/** Device dimensions of an image request's User-Agent; cached, as the same strings recur. */
export function resolveDevice(userAgent: string | undefined): DeviceDimensions {
  if (!userAgent) {
    return EMPTY_DEVICE;
  }
  const ua = userAgent.length > MAX_USER_AGENT_LENGTH ? userAgent.slice(0, MAX_USER_AGENT_LENGTH) : userAgent;
  let device = cache.get(ua);
  if (!device) {
    device = Object.freeze(parse(ua));
    cache.set(ua, device);
  }
  return device;
}

function parse(ua: string): DeviceDimensions {
  const proxy = WEBMAIL_PROXIES.find((rule) => rule.pattern.test(ua));
  if (proxy) {
    return { ...EMPTY_DEVICE, device_type: 'WebmailProxy', browser: proxy.browser };
  }

  parser.setUA(ua);
  const os = parser.getOS().name ?? '';
  const { vendor, model, type } = parser.getDevice();
  const desktopClient = DESKTOP_EMAIL_CLIENTS.find((rule) => rule.pattern.test(ua))?.browser;
  const browser = desktopClient ?? appleMail(parser.getBrowser().name, os);
  const deviceType = toDeviceType(type, os, desktopClient !== undefined);
  const handheld = deviceType === 'Phone' || deviceType === 'Tablet';
  return {
    // "Generic" is the parser's word for an Android maker it does not know.
    device_maker: vendor === 'Generic' ? '' : label(vendor),
    // "K" is the model that Chrome's reduced user agent sends for every Android device
    // (chromium.org/updates/ua-reduction): no model at all.
    device_model: handheld && model !== 'K' ? label(model) : '',
    device_type: deviceType,
    os: label(os),
    browser: label(browser),
  };
}

/**
 * The parser calls a WebKit view that adds no browser token "WebKit". Apple's Mail shows messages in
 * one: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)" on
 * macOS, the same with "(iPhone; CPU iPhone OS 17_5 like Mac OS X) ... Mobile/15E148" on iOS. In-app
 * browsers that add their own token (Facebook, the Google app) get their own names from the parser;
 * other apps showing mail in a bare WebKit view (Spark, Outlook for Mac's reading pane) cannot be
 * told apart and count as Apple's Mail. iPadOS web views default to the Mac string, so Mail on an
 * iPad can read as a Mac.
 */
function appleMail(browser: string | undefined, os: string): string | undefined {
  if (browser !== 'WebKit') {
    return browser;
  }
  if (os === 'Mac OS') {
    return 'Apple Mail';
  }
  if (os === 'iOS') {
    return 'iOS Mail';
  }
  return browser;
}

function toDeviceType(type: string | undefined, os: string, desktopClient: boolean): DeviceType | '' {
  switch (type) {
    case 'mobile':
      return 'Phone';
    case 'tablet':
      return 'Tablet';
    case 'smarttv':
    case 'console':
      return 'MediaCenter';
    case undefined:
      return desktopClient || DESKTOP_OS.test(os) ? 'PC' : '';
    default:
      // wearable, embedded, xr: none of the reporting types.
      return '';
  }
}

function label(value: string | undefined): string {
  return value ? value.slice(0, MAX_VALUE_LENGTH) : '';
}
