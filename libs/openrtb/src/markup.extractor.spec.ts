import { describe, expect, it } from 'vitest';
import {
  MAX_MARKUP_BYTES,
  MarkupRejection,
  checkMarkupWith,
  extractMarkup,
  extractMarkupWith,
  type MarkupExtraction,
} from './markup.extractor';
import { substituteMacros, type MacroValues } from './macro.substitution';

const ok = (clickUrl: string, imageUrl: string, trackers: string[] = []): MarkupExtraction => ({
  ok: true,
  clickUrl,
  imageUrl,
  trackers,
});
const refused = (reason: MarkupRejection): MarkupExtraction => ({ ok: false, reason });

const CLICK = 'https://dsp.example/click';
const IMAGE = 'https://cdn.example/banner.png';
const BASIC = `<a href="${CLICK}"><img src="${IMAGE}" width="600" height="200"></a>`;
const pixel = (n: number) => `https://t${n}.example/p.gif`;

describe('extractMarkup', () => {
  it.each<[string, string, MarkupExtraction]>([
    ['basic: an anchor around an image', BASIC, ok(CLICK, IMAGE)],
    [
      'extended: two tracking images after the anchor',
      `${BASIC}<img src="${pixel(1)}" width="1" height="1"><img src="${pixel(2)}">`,
      ok(CLICK, IMAGE, [pixel(1), pixel(2)]),
    ],
    [
      'three tracking images: only the first two are used',
      `${BASIC}<img src="${pixel(1)}"><img src="${pixel(2)}"><img src="${pixel(3)}">`,
      ok(CLICK, IMAGE, [pixel(1), pixel(2)]),
    ],
    [
      'a tracking image before the anchor counts too, in document order',
      `<img src="${pixel(1)}">${BASIC}<img src="${pixel(2)}">`,
      ok(CLICK, IMAGE, [pixel(1), pixel(2)]),
    ],
    [
      'an anchor inside a script is not found, nor its images',
      `<script>document.write('<a href="https://evil.example/"><img src="https://evil.example/i.png"></a>')</script>${BASIC}`,
      ok(CLICK, IMAGE),
    ],
    [
      'script elements are removed with their content, wherever they are',
      `<a href="${CLICK}"><script src="https://x.example/s.js"></script><img src="${IMAGE}"></a><script><img src="${pixel(9)}"></script>`,
      ok(CLICK, IMAGE),
    ],
    [
      'noscript is searched first',
      `<a href="https://js.example/click"><img src="https://js.example/i.png"></a><noscript><a href="${CLICK}"><img src="${IMAGE}"></a></noscript>`,
      ok(CLICK, IMAGE, ['https://js.example/i.png']),
    ],
    [
      'noscript first for tracking images too',
      `${BASIC}<img src="${pixel(1)}"><noscript><img src="${pixel(2)}"></noscript>`,
      ok(CLICK, IMAGE, [pixel(2), pixel(1)]),
    ],
    [
      'the rest is searched when the noscript holds no anchor',
      `<noscript><img src="${pixel(1)}"></noscript>${BASIC}`,
      ok(CLICK, IMAGE, [pixel(1)]),
    ],
    [
      'a repeated creative or tracker counts once',
      `<noscript>${BASIC}<img src="${pixel(1)}"></noscript>${BASIC}<img src="${pixel(1)}"><img src="${pixel(2)}">`,
      ok(CLICK, IMAGE, [pixel(1), pixel(2)]),
    ],
    [
      'an image nested deeper in the anchor',
      `<table><tr><td><a href="${CLICK}"><div><span><img src="${IMAGE}"></span></div></a></td></tr></table>`,
      ok(CLICK, IMAGE),
    ],
    [
      'an anchor without an image is skipped for the next one',
      `<a href="https://x.example/text">Text link</a>${BASIC}`,
      ok(CLICK, IMAGE),
    ],
    ['no anchor', `<img src="${IMAGE}">`, refused(MarkupRejection.NoAnchorWithImage)],
    [
      'an anchor without an image',
      `<a href="${CLICK}">Click</a>`,
      refused(MarkupRejection.NoAnchorWithImage),
    ],
    [
      'an anchor without href',
      `<a name="x"><img src="${IMAGE}"></a>`,
      refused(MarkupRejection.NoAnchorWithImage),
    ],
    [
      'an image without src',
      `<a href="${CLICK}"><img data-src="${IMAGE}"></a>`,
      refused(MarkupRejection.NoAnchorWithImage),
    ],
    ['an iframe tag (bsm/openrtb)', '<iframe src="foo.bar"/>', refused(MarkupRejection.NoAnchorWithImage)],
    ['plain text', 'Buy now', refused(MarkupRejection.NoAnchorWithImage)],
    [
      'a javascript: href',
      `<a href="javascript:alert(1)"><img src="${IMAGE}"></a>`,
      refused(MarkupRejection.InvalidClickUrl),
    ],
    [
      'a javascript: href hidden by entities',
      `<a href="jav&#x61;script&colon;alert(1)"><img src="${IMAGE}"></a>${BASIC}`,
      refused(MarkupRejection.InvalidClickUrl),
    ],
    [
      'a relative href',
      `<a href="/click"><img src="${IMAGE}"></a>`,
      refused(MarkupRejection.InvalidClickUrl),
    ],
    ['an empty href', `<a href=""><img src="${IMAGE}"></a>`, refused(MarkupRejection.InvalidClickUrl)],
    [
      'a protocol-relative image',
      `<a href="${CLICK}"><img src="//cdn.example/banner.png"></a>`,
      refused(MarkupRejection.InvalidImageUrl),
    ],
    [
      'a data: image',
      `<a href="${CLICK}"><img src="data:image/gif;base64,R0lGOD"></a>`,
      refused(MarkupRejection.InvalidImageUrl),
    ],
    [
      'invalid trackers are dropped, not fatal',
      `${BASIC}<img src="/relative.gif"><img src="${pixel(2)}"><img src="${pixel(3)}">`,
      ok(CLICK, IMAGE, [pixel(2)]),
    ],
    [
      'entities in attributes are decoded',
      `<a href="https://dsp.example/c?a=1&amp;b=2&#38;c=3"><img src="https://cdn.example/i.png?x=1&amp;y=2"></a>`,
      ok('https://dsp.example/c?a=1&b=2&c=3', 'https://cdn.example/i.png?x=1&y=2'),
    ],
    [
      'upper-case tags and attributes',
      `<A HREF="${CLICK}"><IMG SRC="${IMAGE}"></A><IMG SRC="${pixel(1)}">`,
      ok(CLICK, IMAGE, [pixel(1)]),
    ],
    [
      'unquoted attributes and surrounding whitespace in URLs',
      `<a href=${CLICK}><img src="  ${IMAGE}\n"></a>`,
      ok(CLICK, IMAGE),
    ],
    [
      'a full document',
      `<!DOCTYPE html><html><head><style>a{color:red}</style></head><body>${BASIC}</body></html>`,
      ok(CLICK, IMAGE),
    ],
    [
      'an unterminated tag',
      `<a href="${CLICK}"><img src="${IMAGE}"`,
      refused(MarkupRejection.NoAnchorWithImage),
    ],
    ['an empty string', '', refused(MarkupRejection.Empty)],
    ['whitespace only', ' \n\t', refused(MarkupRejection.Empty)],
    [
      'markup over 64 KiB',
      `${BASIC}<!--${'x'.repeat(MAX_MARKUP_BYTES)}-->`,
      refused(MarkupRejection.TooLarge),
    ],
  ])('%s', (_name, markup, expected) => {
    expect(extractMarkup(markup)).toEqual(expected);
  });

  it('extracts after macro substitution, with the values encoded', () => {
    const adm =
      '<a href="https://dsp.example/c?imp=${AUCTION_IMP_ID}&amp;p=${AUCTION_PRICE}">' +
      '<img src="https://cdn.example/${AUCTION_AD_ID}.png"></a>' +
      '<img src="https://dsp.example/imp?auction=${AUCTION_ID}">';
    const values = { auctionId: 'a b', impId: '1', adId: 'ad"><script>', priceMicros: 2_345_000 };
    expect(extractMarkup(substituteMacros(adm, values))).toEqual(
      ok('https://dsp.example/c?imp=1&p=2.345', 'https://cdn.example/ad%22%3E%3Cscript%3E.png', [
        'https://dsp.example/imp?auction=a%20b',
      ]),
    );
  });

  it('leaves substitution to the caller: an unsubstituted macro is just characters of the URL', () => {
    expect(
      extractMarkup('<a href="https://x.example/${AUCTION_PRICE}"><img src="https://x.example/i"></a>').ok,
    ).toBe(true);
  });

  it('does not overflow on deeply nested markup (linearity: markup.extractor.linear.spec.ts)', () => {
    const depth = 10_000;
    const nested = `${'<a href="https://x.example/">'.repeat(depth)}<img src="${IMAGE}">`;
    expect(extractMarkup(nested.slice(0, MAX_MARKUP_BYTES))).toMatchObject({ ok: false });
    expect(extractMarkup(`${'<div>'.repeat(12_000)}${BASIC}`)).toEqual(ok(CLICK, IMAGE));
    const anchors = `${'<a href="https://x.example/">'.repeat(2_000)}<img src="${IMAGE}">`;
    expect(extractMarkup(anchors)).toEqual(ok('https://x.example/', IMAGE));
  });
});

describe('extractMarkupWith', () => {
  const values: MacroValues[] = [
    { auctionId: 'a-1', impId: '1', adId: 'cr-9', priceMicros: 2_345_000 },
    { auctionId: 'a-2', impId: '1', adId: '', priceMicros: 10_000 },
    // Ids that would open a tag, a comment or an entity, or end a script, were they not encoded.
    { auctionId: 'img', impId: '--', adId: 'ipt', priceMicros: 999_990_000 },
    { auctionId: 'a b', impId: '1', adId: 'ad"><script>&amp;', priceMicros: 1 },
    { auctionId: 'x'.repeat(3000), impId: '1', adId: 'y', priceMicros: 1_000_000 },
    // Long values in the macros that are neither ids of the request nor the ad's: 9 bytes a
    // character once encoded (€ is %E2%82%AC), 1 for an ASCII one.
    { auctionId: 'a-3', impId: '1', seatId: '€'.repeat(45), priceMicros: 1 },
    { auctionId: 'a-4', impId: '1', bidId: 'b'.repeat(400), priceMicros: 1 },
  ];
  const SIM = 'http://127.0.0.1:9/';
  // 360 bytes under the size limit, macros in values: only the longest values take it over.
  const NEAR_LIMIT_HEAD = `<a href="https://d.example/\${AUCTION_SEAT_ID}/\${AUCTION_BID_ID}"><img src="https://cdn.example/i.png"></a><!--`;
  const NEAR_LIMIT = `${NEAR_LIMIT_HEAD}${'x'.repeat(MAX_MARKUP_BYTES - 360 - NEAR_LIMIT_HEAD.length - 3)}-->`;
  const markups = [
    // The simulators' banner: macros in a landing page and a tracking pixel.
    `<a href="${SIM}landing?crid=c&imp=\${AUCTION_IMP_ID}"><img src="${SIM}creative/600x200.png?crid=c" width="600" height="200"></a><img src="${SIM}imp?auction=\${AUCTION_ID}&price=\${AUCTION_PRICE}" width="1" height="1">`,
    `<a href="https://d.example/c?imp=\${AUCTION_IMP_ID}&amp;p=\${AUCTION_PRICE}"><img src="https://cdn.example/\${AUCTION_AD_ID}.png"></a><img src="https://d.example/i?a=\${AUCTION_ID}">`,
    // An empty adid leaves whitespace at the end of a value: trimmed as the parser's value would be.
    `<a href=" \${AUCTION_AD_ID} https://d.example/"><img src="https://cdn.example/i.png \${AUCTION_AD_ID}"></a>`,
    `<a href=https://d.example/\${AUCTION_PRICE}><img src=https://cdn.example/\${AUCTION_AD_ID}></a>`,
    // Macros outside attribute values, or next to character references: parsed per bid.
    `<\${AUCTION_ID} src="https://cdn.example/x.png"><a href="https://d.example/"><img src="https://cdn.example/i.png"></a>`,
    `<a href="https://d.example/"><img src="https://cdn.example/i.png"></a><!\${AUCTION_IMP_ID}<img src="https://t.example/p">-->`,
    `<script>x</scr\${AUCTION_AD_ID}><a href="https://d.example/"><img src="https://cdn.example/i.png"></a>`,
    `<a href="https://d.example/?p=&#\${AUCTION_PRICE}"><img src="https://cdn.example/i.png"></a>`,
    `<a href="https://d.example/?p=&amp\${AUCTION_AD_ID}"><img src="https://cdn.example/i.png"></a>`,
    `<a href="https://d.example/&#36;{AUCTION_PRICE}"><img src="https://cdn.example/i.png"></a>`,
    `<a href="https://d.example/&dollar;{AUCTION_PRICE}"><img src="https://cdn.example/i.png"></a>`,
    `<a href="https://d.example/"><img src="https://cdn.example/i.png" src="https://cdn.example/\${AUCTION_ID}"></a>`,
    // Trackers that differ only by a macro, or that repeat once substituted.
    `<a href="https://d.example/"><img src="https://cdn.example/i.png"></a><img src="https://t.example/\${AUCTION_AD_ID}"><img src="https://t.example/"><img src="https://t.example/cr-9">`,
    `<a href="https://d.example/"><img src="https://cdn.example/\${AUCTION_AD_ID}"></a><img src="https://cdn.example/cr-9">`,
    `<img src="https://cdn.example/\${AUCTION_AD_ID}">`,
    `<a href="\${AUCTION_AD_ID}"><img src="https://cdn.example/i.png"></a>`,
    `<noscript><a href="https://n.example/\${AUCTION_ID}"><img src="https://n.example/i"></a></noscript><a href="https://d.example/"><img src="https://cdn.example/i.png"></a>`,
    `\${AUCTION_AD_ID}`,
    `<a href="https://d.example/"><img src="https://cdn.example/i.png"></a><!--\${AUCTION_ID}${'x'.repeat(MAX_MARKUP_BYTES - 150)}-->`,
    NEAR_LIMIT,
    BASIC,
    '',
    // Macros in a URL's host, user, port or scheme, or just before or after where its host ends:
    // there a value can make a valid URL invalid, or the other way round.
    ...(
      [
        ['https://${AUCTION_AD_ID}.example/', 'https://${AUCTION_AD_ID}@cdn.example/i.png'],
        ['https://d.example:${AUCTION_PRICE}/', IMAGE],
        ['https://d.example${AUCTION_AD_ID}?x', IMAGE],
        ['https://d.example?${AUCTION_AD_ID}', 'https://cdn.example\\${AUCTION_AD_ID}'],
        ['https://d.example#${AUCTION_AD_ID}', 'https://cdn.example/i.png${AUCTION_AD_ID}'],
        ['https://d.example/${AUCTION_AD_ID}${AUCTION_AD_ID}', 'http${AUCTION_AD_ID}://cdn.example/i.png'],
        ['https://d.example/ ${AUCTION_AD_ID}', IMAGE],
        [CLICK, 'https://cdn.example/i.png ${AUCTION_AD_ID}'],
        ['https:/d.example/${AUCTION_ID}', IMAGE],
        // URLs near the length limit: over it with some values only, or over it until substituted.
        [`https://d.example/\${AUCTION_AD_ID}?${'x'.repeat(2000)}`, IMAGE],
        [CLICK, `https://cdn.example/\${AUCTION_AD_ID}\${AUCTION_ID}${'y'.repeat(1985)}`],
        [`https://d.example/\${AUCTION_SEAT_ID}\${AUCTION_SEAT_ID}${'z'.repeat(2030)}`, IMAGE],
      ] as const
    ).map(([href, src]) => `<a href="${href}"><img src="${src}"></a>`),
  ];

  it('refuses as too large what only the substituted values make too large', () => {
    expect(Buffer.byteLength(NEAR_LIMIT)).toBe(MAX_MARKUP_BYTES - 360);
    const [short, , , , , seat, bid] = values;
    const tooLarge = { ok: false, reason: MarkupRejection.TooLarge };
    // Twice each: the second call uses the template the first one kept.
    for (let i = 0; i < 2; i += 1) {
      expect(extractMarkupWith(NEAR_LIMIT, short)).toMatchObject({ ok: true });
      // 45 characters, 405 bytes encoded, and 400 characters: less the 35 of the two macros, over the 360 left.
      expect(extractMarkupWith(NEAR_LIMIT, seat)).toEqual(tooLarge);
      expect(extractMarkupWith(NEAR_LIMIT, bid)).toEqual(tooLarge);
    }
  });

  it.each(markups.flatMap((markup, m) => values.map((v, i) => [m, i, markup, v] as const)))(
    'gives what extractMarkup gives on the substituted markup (markup %i, values %i)',
    (_m, _i, markup, v) => {
      const expected = extractMarkup(substituteMacros(markup, v));
      // Twice: the first call parses the markup, the second uses what it kept.
      expect(extractMarkupWith(markup, v)).toEqual(expected);
      expect(extractMarkupWith(markup, v)).toEqual(expected);
    },
  );

  it.each(markups.flatMap((markup, m) => values.map((v, i) => [m, i, markup, v] as const)))(
    'checkMarkupWith refuses what extractMarkup refuses on the substituted markup (markup %i, values %i)',
    (_m, _i, markup, v) => {
      const expected = extractMarkup(substituteMacros(markup, v));
      const reason = expected.ok ? undefined : expected.reason;
      // Both orders of first sight: the template made by either function serves the other.
      expect(checkMarkupWith(markup, v)).toBe(reason);
      expect(extractMarkupWith(markup, v)).toEqual(expected);
      expect(checkMarkupWith(markup, v)).toBe(reason);
    },
  );
});
