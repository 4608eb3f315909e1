import type { ChildNode, Element } from 'domhandler';
import { DomUtils, parseDocument } from 'htmlparser2';
import {
  isHttpUrl,
  longestMacroValue,
  MACRO_PATTERN,
  MAX_URL_LENGTH,
  substituteMacros,
  type MacroValues,
} from './macro.substitution';

/** Markup larger than this is refused before parsing: a banner tag is a few hundred bytes. */
export const MAX_MARKUP_BYTES = 64 * 1024;

/** Tracking images kept from the markup (spec 2.12 step 3, and part 8's standard integration). */
export const MAX_TRACKING_IMAGES = 2;

/** Why markup cannot be served; the values go into events as they are. */
export enum MarkupRejection {
  Empty = 'empty',
  TooLarge = 'too_large',
  NoAnchorWithImage = 'no_anchor_with_image',
  InvalidClickUrl = 'invalid_click_url',
  InvalidImageUrl = 'invalid_image_url',
}

export type MarkupExtraction =
  | { ok: true; clickUrl: string; imageUrl: string; trackers: string[] }
  | { ok: false; reason: MarkupRejection };

/** The checks that need no parsing, also run on a bid's `adm` when the bid is validated. */
export function checkMarkupText(markup: string): MarkupRejection | undefined {
  if (markup.trim() === '') {
    return MarkupRejection.Empty;
  }
  if (markup.length > MAX_MARKUP_BYTES || Buffer.byteLength(markup, 'utf8') > MAX_MARKUP_BYTES) {
    return MarkupRejection.TooLarge;
  }
  return undefined;
}

interface Visited {
  readonly element: Element;
  readonly inNoscript: boolean;
}

/**
 * Every element in document order, noting whether it is inside a `<noscript>`. Script elements
 * are left out with their content, which is spec 2.12's step 1; htmlparser2 keeps script content
 * as text anyway, so an anchor written inside a script is never an element. `<noscript>` content,
 * by contrast, is parsed as markup. The walk keeps its own stack: hostile markup nests deeper
 * than a recursive walk could go.
 */
function walk(nodes: readonly ChildNode[]): Visited[] {
  const visited: Visited[] = [];
  const stack = nodes.map((node) => ({ node, inNoscript: false })).reverse();
  for (let entry = stack.pop(); entry; entry = stack.pop()) {
    const { node } = entry;
    if (!DomUtils.isTag(node) || node.name === 'script') {
      continue;
    }
    const inNoscript = entry.inNoscript || node.name === 'noscript';
    visited.push({ element: node, inNoscript });
    for (let i = node.children.length - 1; i >= 0; i -= 1) {
      stack.push({ node: node.children[i], inNoscript });
    }
  }
  return visited;
}

/** Spec 2.12's search order: inside `<noscript>` first, then the rest, each in document order. */
function inSearchOrder(visited: readonly Visited[]): Element[] {
  return [...visited.filter((v) => v.inNoscript), ...visited.filter((v) => !v.inNoscript)].map(
    (v) => v.element,
  );
}

/** Browsers strip leading and trailing ASCII whitespace from URL attributes; so does this. */
function attribute(element: Element, name: string): string | undefined {
  const value = element.attribs[name];
  return value === undefined ? undefined : value.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '');
}

function isImageWithSource(element: Element): boolean {
  return element.name === 'img' && attribute(element, 'src') !== undefined;
}

/**
 * The first image with a source inside each element that has one, in document order. Each image
 * climbs its ancestors until one already seen, so the whole pass stays linear even for thousands
 * of nested anchors.
 */
function firstImageInside(visited: readonly Visited[]): Map<Element, Element> {
  const first = new Map<Element, Element>();
  for (const { element } of visited) {
    if (!isImageWithSource(element)) {
      continue;
    }
    for (let up = element.parent; up && DomUtils.isTag(up) && !first.has(up); up = up.parent) {
      first.set(up, element);
    }
  }
  return first;
}

/** The anchor, image and tracking image candidates of spec 2.12, as attribute values. */
interface Found {
  readonly clickUrl: string;
  readonly imageUrl: string;
  /** The `src` of every other image, in search order: the tracking images are drawn from them. */
  readonly otherImages: readonly string[];
}

/** Parses markup and finds the anchor around an image; undefined when there is none. */
function find(markup: string): { found?: Found; elements: readonly Element[] } {
  const visited = walk(parseDocument(markup).children);
  const elements = inSearchOrder(visited);
  const images = firstImageInside(visited);
  const anchor = elements.find((e) => e.name === 'a' && attribute(e, 'href') !== undefined && images.has(e));
  const image = anchor && images.get(anchor);
  if (!anchor || !image) {
    return { elements };
  }
  const otherImages = elements
    .filter((e) => e !== image && isImageWithSource(e))
    .map((e) => attribute(e, 'src') ?? '');
  return {
    found: {
      clickUrl: attribute(anchor, 'href') ?? '',
      imageUrl: attribute(image, 'src') ?? '',
      otherImages,
    },
    elements,
  };
}

/** Spec 2.12's checks on what was found: valid URLs, then up to MAX_TRACKING_IMAGES trackers. */
function checked(found: Found | undefined): MarkupExtraction {
  if (!found) {
    return { ok: false, reason: MarkupRejection.NoAnchorWithImage };
  }
  const { clickUrl, imageUrl } = found;
  if (!isHttpUrl(clickUrl)) {
    return { ok: false, reason: MarkupRejection.InvalidClickUrl };
  }
  if (!isHttpUrl(imageUrl)) {
    return { ok: false, reason: MarkupRejection.InvalidImageUrl };
  }
  // The same image repeated (a noscript copy of the tag, say) is one tracker, not two.
  const seen = new Set([imageUrl]);
  const candidates: string[] = [];
  for (const src of found.otherImages) {
    if (candidates.length === MAX_TRACKING_IMAGES) {
      break;
    }
    if (seen.has(src)) {
      continue;
    }
    seen.add(src);
    candidates.push(src);
  }
  return { ok: true, clickUrl, imageUrl, trackers: candidates.filter(isHttpUrl) };
}

/**
 * Spec 2.12 on a bid's `adm`, after its macros are substituted (the URLs are only valid then):
 * the anchor with an `href` around an image with a `src`, then up to MAX_TRACKING_IMAGES further
 * images, searched in the same order. The first matching anchor decides: when its URLs are
 * invalid, the markup is refused rather than served with another link the DSP did not mean.
 * An invalid tracker, by contrast, is dropped: the creative still displays and clicks through
 * correctly, and only that tracker's count is lost. Attribute entities are decoded by the parser.
 */
export function extractMarkup(markup: string): MarkupExtraction {
  const refused = checkMarkupText(markup);
  if (refused) {
    return { ok: false, reason: refused };
  }
  return checked(find(markup).found);
}

/**
 * A character reference next to a macro, or one that spells a macro's `$`, `{` or `}`: the
 * substituted value could then change what the parser decodes, so such markup is parsed per bid.
 */
const ENTITY_NEAR_MACRO = new RegExp(`&[#A-Za-z0-9]*${MACRO_PATTERN.source}`);
const ENTITY_OF_MACRO_CHARACTER =
  /&(?:#0*(?:36|123|125)(?![0-9])|#x0*(?:24|7b|7d)(?![0-9a-f])|dollar|lcub|lbrace|rcub|rbrace)/i;

const EVERY_MACRO = new RegExp(MACRO_PATTERN.source, 'g');

function countMacros(text: string): number {
  return text.match(EVERY_MACRO)?.length ?? 0;
}

/**
 * What the validity of a URL found in a template depends on, worked out once per markup, so that a
 * bid's markup is checked without substituting and parsing its URLs again (`checkMarkupWith`).
 */
enum UrlShape {
  /** No macro: valid as it is. */
  Valid,
  /** No macro: invalid as it is. */
  Invalid,
  /**
   * A valid URL whose macros all come after its host (in its path, query or fragment): a value,
   * percent-encoded to letters, digits, `-._~` and `%`, cannot change how the URL parses there, nor
   * bring in whitespace, so only its length can make it invalid.
   */
  ValidUnlessTooLong,
  /** Anything else: checked with its macros substituted. */
  Substituted,
}

/** Where the host part of an http(s) URL ends; undefined when the URL has nothing after it. */
function authorityEnd(url: string): number | undefined {
  const start = url.indexOf('//') + 2;
  for (let i = start; i < url.length; i += 1) {
    const c = url.charCodeAt(i);
    // `/`, `?`, `#` and, in http(s) URLs, `\` end the authority (WHATWG URL's authority state).
    if (c === 0x2f || c === 0x3f || c === 0x23 || c === 0x5c) {
      return i;
    }
  }
  return undefined;
}

function shapeOf(url: string): UrlShape {
  const macro = url.indexOf('${');
  if (macro < 0) {
    return isHttpUrl(url) ? UrlShape.Valid : UrlShape.Invalid;
  }
  // The literal `${NAME}`s hold no whitespace or control character, and past the host the parser
  // takes any character. A template over the length limit may come under it once substituted, and
  // one that is invalid as it stands may become valid (a trailing space after an empty value is
  // trimmed): both checked in full.
  const end = /^https?:\/\//i.test(url) ? authorityEnd(url) : undefined;
  return end !== undefined && macro > end && isHttpUrl(url)
    ? UrlShape.ValidUnlessTooLong
    : UrlShape.Substituted;
}

/** A markup's extraction with its macros still in place. */
interface Template {
  /** What was found; undefined when there is no anchor around an image, whatever the macros say. */
  readonly found?: Found;
  /** The shapes of the found anchor's and image's URLs. */
  readonly clickShape?: UrlShape;
  readonly imageShape?: UrlShape;
  /** How many macros the markup holds. */
  readonly macros: number;
  /** The markup's size in UTF-8 bytes, macros included. */
  readonly bytes: number;
  /** Why the markup itself is refused (empty, too large): the answer when it holds no macro. */
  readonly refused?: MarkupRejection;
}

/**
 * The markup's anchor, image and other images with the macros still in them, when substituting
 * them cannot change how the markup parses: every macro sits inside an attribute value (where a
 * substituted value, percent-encoded, can neither end the value nor open a tag, a comment or a
 * character reference), away from character references. Undefined otherwise.
 */
function templateOf(adm: string): Template | undefined {
  if (ENTITY_NEAR_MACRO.test(adm) || ENTITY_OF_MACRO_CHARACTER.test(adm)) {
    return undefined;
  }
  const { found, elements } = find(adm);
  let inValues = 0;
  for (const element of elements) {
    for (const value of Object.values(element.attribs)) {
      inValues += countMacros(value);
    }
  }
  const macros = countMacros(adm);
  // Elements inside scripts and comments are not elements: a macro there is not counted.
  return inValues === macros
    ? {
        found,
        clickShape: found && shapeOf(found.clickUrl),
        imageShape: found && shapeOf(found.imageUrl),
        macros,
        bytes: Buffer.byteLength(adm, 'utf8'),
        refused: checkMarkupText(adm),
      }
    : undefined;
}

/** What `substituteMacros` then the attribute trim make of a value found in the template. */
function resolved(value: string, values: MacroValues): string {
  return value.includes('${')
    ? substituteMacros(value, values).replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '')
    : value;
}

/**
 * Whether the markup with its macros substituted could be refused for its size, without
 * substituting: each macro becomes a percent-encoded value of at most `longestMacroValue`
 * characters, each of which encodes to at most 9 bytes (`%E2%82%AC`; a surrogate pair's two give
 * 12). The bound only decides whether the exact check must run, so it may be loose, never short.
 */
function mayBeTooLarge(template: Template, longest: number): boolean {
  return template.bytes + template.macros * 9 * longest > MAX_MARKUP_BYTES;
}

/** Templates by markup: a DSP sends the same few creatives again and again. */
const TEMPLATES = new Map<string, Template | null>();
const MAX_TEMPLATES = 4096;

/** The markup's template, made on its first sight; null when its macros could change its parse. */
function templateFor(adm: string): Template | null {
  let template = TEMPLATES.get(adm);
  if (template === undefined) {
    template = templateOf(adm) ?? null;
    if (TEMPLATES.size >= MAX_TEMPLATES) {
      TEMPLATES.clear();
    }
    TEMPLATES.set(adm, template);
  }
  return template;
}

/** Why the markup with these values is refused for its text (empty, too large), if it is. */
function refusedWith(
  template: Template,
  adm: string,
  values: MacroValues,
  longest: number,
): MarkupRejection | undefined {
  // Without macros the markup is what it was; with some, it holds an element, so is not empty.
  return template.macros === 0
    ? template.refused
    : mayBeTooLarge(template, longest)
      ? checkMarkupText(substituteMacros(adm, values))
      : undefined;
}

/**
 * `extractMarkup(substituteMacros(adm, values))`, with each distinct markup parsed once: the
 * macros are substituted into the URLs found in the markup instead of into the markup. Markup
 * whose macros could change its parse (see `templateOf`) is parsed with its macros substituted,
 * every time, as `extractMarkup` would.
 */
export function extractMarkupWith(adm: string, values: MacroValues): MarkupExtraction {
  const template = templateFor(adm);
  if (template === null) {
    return extractMarkup(substituteMacros(adm, values));
  }
  const refused = refusedWith(template, adm, values, longestMacroValue(values));
  if (refused) {
    return { ok: false, reason: refused };
  }
  const { found } = template;
  if (!found) {
    return checked(undefined);
  }
  return checked({
    clickUrl: resolved(found.clickUrl, values),
    imageUrl: resolved(found.imageUrl, values),
    otherImages: found.otherImages.map((src) => resolved(src, values)),
  });
}

/** Whether a URL of the template is valid with the macros substituted. */
function holds(url: string, shape: UrlShape, values: MacroValues, longest: number): boolean {
  switch (shape) {
    case UrlShape.Valid:
      return true;
    case UrlShape.Invalid:
      return false;
    case UrlShape.ValidUnlessTooLong: {
      // Each `${` may be a macro, whose value encodes to at most 9 characters a character.
      let macros = 0;
      for (let at = url.indexOf('${'); at >= 0; at = url.indexOf('${', at + 2)) {
        macros += 1;
      }
      if (url.length + macros * 9 * longest <= MAX_URL_LENGTH) {
        return true;
      }
      return isHttpUrl(resolved(url, values));
    }
    case UrlShape.Substituted:
      return isHttpUrl(resolved(url, values));
  }
}

/**
 * Why `extractMarkupWith(adm, values)` refuses the markup, or undefined when it serves it, without
 * substituting into and parsing the URLs of a markup seen before when their macros cannot change
 * their validity (`UrlShape`): what an auction asks of every bid, the URLs themselves being needed
 * of its winner only.
 */
export function checkMarkupWith(adm: string, values: MacroValues): MarkupRejection | undefined {
  const template = templateFor(adm);
  if (template === null) {
    const extraction = extractMarkup(substituteMacros(adm, values));
    return extraction.ok ? undefined : extraction.reason;
  }
  const longest = longestMacroValue(values);
  const refused = refusedWith(template, adm, values, longest);
  if (refused) {
    return refused;
  }
  const { found, clickShape, imageShape } = template;
  if (!found || clickShape === undefined || imageShape === undefined) {
    return MarkupRejection.NoAnchorWithImage;
  }
  if (!holds(found.clickUrl, clickShape, values, longest)) {
    return MarkupRejection.InvalidClickUrl;
  }
  if (!holds(found.imageUrl, imageShape, values, longest)) {
    return MarkupRejection.InvalidImageUrl;
  }
  return undefined;
}
