import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AUCTION_MACROS,
  MAX_URL_LENGTH,
  isHttpUrl,
  longestMacroValue,
  substituteMacros,
  type AuctionMacro,
  type MacroValues,
} from './macro.substitution';

const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/openrtb');

const values: MacroValues = { auctionId: 'a-1', impId: '1', adId: 'ad-9', priceMicros: 1_500_000 };

/** A won bid's values: every macro has one. */
const won: MacroValues = {
  auctionId: 'a-1',
  bidId: 'resp-7',
  impId: '1',
  seatId: 'seat-3',
  adId: 'ad-9',
  priceMicros: 1_300_000,
  bidPriceMicros: 1_500_000,
  lossCode: 0,
};

/** What each macro becomes for `won`. */
const WON: Readonly<Record<AuctionMacro, string>> = {
  AUCTION_ID: 'a-1',
  AUCTION_BID_ID: 'resp-7',
  AUCTION_IMP_ID: '1',
  AUCTION_SEAT_ID: 'seat-3',
  AUCTION_AD_ID: 'ad-9',
  AUCTION_PRICE: '1.3',
  AUCTION_CURRENCY: 'USD',
  AUCTION_MBR: '0.8667',
  AUCTION_LOSS: '0',
};

describe('substituteMacros', () => {
  it("declares OpenRTB 2.5's nine macros of section 4.4, in its order", () => {
    expect(Object.keys(AUCTION_MACROS)).toEqual([
      'AUCTION_ID',
      'AUCTION_BID_ID',
      'AUCTION_IMP_ID',
      'AUCTION_SEAT_ID',
      'AUCTION_AD_ID',
      'AUCTION_PRICE',
      'AUCTION_CURRENCY',
      'AUCTION_MBR',
      'AUCTION_LOSS',
    ]);
  });

  it.each(Object.keys(AUCTION_MACROS) as AuctionMacro[])('substitutes ${%s} wherever it is', (name) => {
    const macro = `\${${name}}`;
    expect(substituteMacros(`https://x/n?v=${macro}`, won)).toBe(`https://x/n?v=${WON[name]}`);
    expect(substituteMacros(`${macro}${macro}`, won)).toBe(`${WON[name]}${WON[name]}`);
    expect(substituteMacros(`<img src="https://x/${macro}.gif">`, won)).toBe(
      `<img src="https://x/${WON[name]}.gif">`,
    );
  });

  it('makes the values a loss notice does not disclose empty: price and market bid ratio', () => {
    const loss: MacroValues = { ...won, priceMicros: undefined, lossCode: 102 };
    expect(substituteMacros('p=${AUCTION_PRICE}&m=${AUCTION_MBR}&l=${AUCTION_LOSS}', loss)).toBe(
      'p=&m=&l=102',
    );
  });

  it('writes the market bid ratio as the clearing price over the bid, four decimals at most', () => {
    const mbr = (priceMicros: number, bidPriceMicros: number) =>
      substituteMacros('${AUCTION_MBR}', { ...won, priceMicros, bidPriceMicros });
    expect(mbr(1_500_000, 1_500_000)).toBe('1');
    expect(mbr(760_000, 1_000_000)).toBe('0.76');
    expect(mbr(1, 3)).toBe('0.3333');
    expect(substituteMacros('${AUCTION_MBR}', { ...won, bidPriceMicros: undefined })).toBe('');
  });

  it('leaves unknown and misspelt macros as they are', () => {
    const text = '${AUCTION_BIDID} ${AUCTION_SEAT} ${AUCTION_LOSS_CODE} ${AUCTION_MBR ${auction_loss}';
    expect(substituteMacros(text, won)).toBe(text);
  });

  it('substitutes once: a macro inside any macro value stays as it is, encoded', () => {
    for (const field of ['auctionId', 'bidId', 'impId', 'seatId', 'adId'] as const) {
      const hostile = { ...won, [field]: '${AUCTION_PRICE}${AUCTION_ID}' };
      const out = substituteMacros(
        '${AUCTION_ID}|${AUCTION_BID_ID}|${AUCTION_IMP_ID}|${AUCTION_SEAT_ID}|${AUCTION_AD_ID}',
        hostile,
      );
      expect(out).toContain('%24%7BAUCTION_PRICE%7D%24%7BAUCTION_ID%7D');
      expect(out).not.toContain('1.3');
      expect(out).not.toContain('${');
    }
  });

  it('knows the longest value a macro can take', () => {
    expect(longestMacroValue(won)).toBe('resp-7'.length);
    expect(longestMacroValue({ ...won, seatId: 's'.repeat(300) })).toBe(300);
  });

  it.each([
    [
      'https://x/w?a=${AUCTION_ID}&i=${AUCTION_IMP_ID}&ad=${AUCTION_AD_ID}&p=${AUCTION_PRICE}',
      'https://x/w?a=a-1&i=1&ad=ad-9&p=1.5',
    ],
    ['${AUCTION_PRICE}${AUCTION_PRICE}', '1.51.5'],
    ['<img src="https://x/p/${AUCTION_IMP_ID}.gif">', '<img src="https://x/p/1.gif">'],
    ['no macro here', 'no macro here'],
    ['${auction_price} ${Auction_Price} $AUCTION_PRICE ${AUCTION_PRICE ${ AUCTION_PRICE}', null],
    ['${AUCTION_CURRENCY} ${AUCTION_BID_ID} ${AUCTION_LOSS}', 'USD  '],
  ])('substitutes in %s', (text, expected) => {
    expect(substituteMacros(text, values)).toBe(expected ?? text);
  });

  it('leaves the lower-case macro of bsm/bres.single.json as it is', () => {
    const response = JSON.parse(readFileSync(path.join(FIXTURES, 'bsm/bres.single.json'), 'utf8'));
    const nurl: string = response.seatbid[0].bid[0].nurl;
    expect(nurl).toContain('${auction_price}');
    expect(substituteMacros(nurl, values)).toBe(nurl);
  });

  it('substitutes the upper-case macro of bsm/bres.multi.json', () => {
    const response = JSON.parse(readFileSync(path.join(FIXTURES, 'bsm/bres.multi.json'), 'utf8'));
    expect(substituteMacros(response.seatbid[0].bid[0].nurl, values)).toBe(
      'http://ads.com/win/52a12b5955314b7194a4c9ff?won=1.5',
    );
  });

  it('does not substitute again inside a substituted value', () => {
    const tricky = { ...values, adId: '${AUCTION_PRICE}' };
    expect(substituteMacros('${AUCTION_AD_ID}', tricky)).toBe('%24%7BAUCTION_PRICE%7D');
  });

  it('percent-encodes values, so that they can break neither the URL nor the attribute', () => {
    const hostile = { ...values, auctionId: `a&b=c#d/e?f g"h'i<j>k`, adId: '(x)*!~._-' };
    expect(substituteMacros('${AUCTION_ID}', hostile)).toBe('a%26b%3Dc%23d%2Fe%3Ff%20g%22h%27i%3Cj%3Ek');
    expect(substituteMacros('${AUCTION_AD_ID}', hostile)).toBe('%28x%29%2A%21~._-');
    expect(substituteMacros('${AUCTION_ID}', { ...values, auctionId: 'é' })).toBe('%C3%A9');
  });

  it('survives a lone surrogate in an id', () => {
    expect(substituteMacros('${AUCTION_AD_ID}', { ...values, adId: 'a\uD800b' })).toBe('a%EF%BF%BDb');
  });

  it('makes an absent adid empty', () => {
    expect(substituteMacros('ad=${AUCTION_AD_ID};', { ...values, adId: undefined })).toBe('ad=;');
  });
});

describe('isHttpUrl', () => {
  it.each([
    'http://example.com',
    'https://example.com/path?q=1&r=%20#frag',
    'HTTPS://EXAMPLE.COM/',
    'https://example.com:8443/x',
    'http://192.0.2.1/p.gif',
    'https://例え.jp/画像.png',
    `https://example.com/${'a'.repeat(MAX_URL_LENGTH - 20)}`,
  ])('accepts %s', (url) => {
    expect(isHttpUrl(url)).toBe(true);
  });

  it.each([
    '',
    '/relative/path',
    '//example.com/protocol-relative',
    'example.com',
    'javascript:alert(1)',
    'data:image/png;base64,AAAA',
    'ftp://example.com/x',
    'http:/example.com',
    'http:\\\\example.com',
    'http: //adserver.com/winnotice?impid=102',
    'https://exa mple.com',
    ' https://example.com',
    'https://example.com/\n',
    'https://example.com/\u0000',
    'https://example.com/\u0085',
    'https://example.com/\u00a0',
    'https://user:pass@example.com/',
    'https://user@example.com/',
    'http://',
    'https://exa%mple.com',
    `https://example.com/${'a'.repeat(MAX_URL_LENGTH)}`,
  ])('refuses %j', (url) => {
    expect(isHttpUrl(url)).toBe(false);
  });

  it('refuses what is not a string', () => {
    expect(isHttpUrl(5 as unknown as string)).toBe(false);
  });
});
