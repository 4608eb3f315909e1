import { describe, expect, it } from 'vitest';
import { type DeviceDimensions, EMPTY_DEVICE, resolveDevice } from './device.resolver';

type Expected = [maker: string, model: string, type: string, os: string, browser: string];

const UA = {
  gmailProxy: 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)',
  gmailPrefetch:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/42.0.2311.135 Safari/537.36 Edge/12.246 Mozilla/5.0',
  yahooProxy: 'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html',
  outlookWindows:
    'Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.1; WOW64; Trident/4.0; SLCC2; .NET CLR 2.0.50727; .NET CLR 3.5.30729; .NET CLR 3.0.30729; InfoPath.3; .NET4.0C; .NET4.0E; Microsoft Outlook 14.0.7109; ms-office; MSOffice 14)',
  outlookOffice: 'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.4266; Pro)',
  outlookBare: 'Mozilla/4.0 (compatible; ms-office; MSOffice 16)',
  newOutlook:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/136.0.0.0 Safari/537.36 Edg/136.0.0.0 OneOutlook/1.2025.516.400',
  thunderbird: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Thunderbird/128.5.0',
  appleMail: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)',
  iphoneMail:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
  chromeWindows:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  safariMac:
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  safariIphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  facebookIphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/470.0.0.38.109;FBBV/622811547;FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/17.5;FBSS/3;FBID/phone;FBLC/en_US;FBOP/80]',
  chromeAndroid:
    'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.81 Mobile Safari/537.36',
  chromeAndroidReduced:
    'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1',
  samsungTv:
    'Mozilla/5.0 (SMART-TV; LINUX; Tizen 5.5) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/3.0 Chrome/69.0.3497.106 TV Safari/537.36',
  xbox: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; Xbox; Xbox One) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edge/44.18363.8131',
  ubuntuFirefox: 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
};

describe('resolveDevice', () => {
  it.each<[string, string, Expected]>([
    ['the Gmail image proxy', UA.gmailProxy, ['', '', 'WebmailProxy', '', 'Gmail']],
    ['the Gmail prefetcher', UA.gmailPrefetch, ['', '', 'WebmailProxy', '', 'Gmail']],
    ['the Yahoo Mail proxy', UA.yahooProxy, ['', '', 'WebmailProxy', '', 'Yahoo Mail']],
    ['Outlook on Windows', UA.outlookWindows, ['', '', 'PC', 'Windows', 'Outlook']],
    ["Outlook's own requests", UA.outlookOffice, ['', '', 'PC', 'Windows', 'Outlook']],
    ['Outlook without an OS', UA.outlookBare, ['', '', 'PC', '', 'Outlook']],
    ['the new Outlook for Windows', UA.newOutlook, ['', '', 'PC', 'Windows', 'Outlook']],
    ['Thunderbird', UA.thunderbird, ['', '', 'PC', 'Windows', 'Thunderbird']],
    ['Apple Mail on macOS', UA.appleMail, ['Apple', '', 'PC', 'Mac OS', 'Apple Mail']],
    ['Mail on an iPhone', UA.iphoneMail, ['Apple', 'iPhone', 'Phone', 'iOS', 'iOS Mail']],
    ['Chrome on Windows', UA.chromeWindows, ['', '', 'PC', 'Windows', 'Chrome']],
    ['Safari on macOS', UA.safariMac, ['Apple', '', 'PC', 'Mac OS', 'Safari']],
    ['Safari on an iPhone', UA.safariIphone, ['Apple', 'iPhone', 'Phone', 'iOS', 'Mobile Safari']],
    ["Facebook's in-app browser", UA.facebookIphone, ['Apple', 'iPhone', 'Phone', 'iOS', 'Facebook']],
    ['Chrome on an Android phone', UA.chromeAndroid, ['Samsung', 'SM-S918B', 'Phone', 'Android', 'Chrome']],
    ["Chrome's reduced Android string", UA.chromeAndroidReduced, ['', '', 'Phone', 'Android', 'Chrome']],
    ['an iPad', UA.ipad, ['Apple', 'iPad', 'Tablet', 'iOS', 'Chrome']],
    ['a Samsung smart TV', UA.samsungTv, ['Samsung', '', 'MediaCenter', 'Tizen', 'Samsung Internet']],
    ['a console', UA.xbox, ['Microsoft', '', 'MediaCenter', 'Xbox', 'Edge']],
    ['a Linux desktop', UA.ubuntuFirefox, ['', '', 'PC', 'Ubuntu', 'Firefox']],
    ['garbage', '}}}{{{ not a user agent', ['', '', '', '', '']],
    ['a bare library', 'curl/8.5.0', ['', '', '', '', '']],
  ])('resolves %s', (_name, ua, [device_maker, device_model, device_type, os, browser]) => {
    expect(resolveDevice(ua)).toEqual({ device_maker, device_model, device_type, os, browser });
  });

  it.each([
    ['undefined', undefined],
    ['empty', ''],
  ])('has nothing for an %s user agent', (_name, ua) => {
    expect(resolveDevice(ua)).toBe(EMPTY_DEVICE);
  });

  it('parses only the first 512 characters of a very long user agent', () => {
    const padded = `${UA.chromeWindows} ${'x'.repeat(600 - UA.chromeWindows.length)}`;
    expect(resolveDevice(padded + 'GoogleImageProxy'.repeat(1_000))).toEqual(resolveDevice(padded));
    expect(resolveDevice(padded).browser).toBe('Chrome');
  });

  it('caps a forged model at a label length', () => {
    const forged = `Mozilla/5.0 (Linux; Android 14; ${'A'.repeat(300)} Build/UP1A) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36`;
    const device = resolveDevice(forged);
    expect(device.device_model).toHaveLength(64);
    expect(device.device_maker).toBe('');
  });

  it('gives the same frozen result for a repeated user agent', () => {
    const first: DeviceDimensions = resolveDevice(UA.safariIphone);
    expect(resolveDevice(`${UA.safariIphone}`)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it('stays correct when more user agents pass than the cache holds', () => {
    for (let i = 0; i < 5_000; i += 1) {
      resolveDevice(`${UA.chromeWindows} build/${i}`);
    }
    expect(resolveDevice(UA.gmailProxy).browser).toBe('Gmail');
    expect(resolveDevice(`${UA.chromeWindows} build/0`).browser).toBe('Chrome');
  });
});
