import type { ChildNode, Element } from 'domhandler';
import { DomUtils, parseDocument } from 'htmlparser2';
import { isHttpUrl } from './macro.substitution';

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
  const visited = walk(parseDocument(markup).children);
  const elements = inSearchOrder(visited);
  const images = firstImageInside(visited);

  const anchor = elements.find((e) => e.name === 'a' && attribute(e, 'href') !== undefined && images.has(e));
  const image = anchor && images.get(anchor);
  if (!anchor || !image) {
    return { ok: false, reason: MarkupRejection.NoAnchorWithImage };
  }
  const clickUrl = attribute(anchor, 'href') ?? '';
  const imageUrl = attribute(image, 'src') ?? '';
  if (!isHttpUrl(clickUrl)) {
    return { ok: false, reason: MarkupRejection.InvalidClickUrl };
  }
  if (!isHttpUrl(imageUrl)) {
    return { ok: false, reason: MarkupRejection.InvalidImageUrl };
  }

  // The same image repeated (a noscript copy of the tag, say) is one tracker, not two.
  const seen = new Set([imageUrl]);
  const candidates: string[] = [];
  for (const element of elements) {
    if (candidates.length === MAX_TRACKING_IMAGES) {
      break;
    }
    if (element === image || !isImageWithSource(element)) {
      continue;
    }
    const src = attribute(element, 'src') ?? '';
    if (seen.has(src)) {
      continue;
    }
    seen.add(src);
    candidates.push(src);
  }
  return { ok: true, clickUrl, imageUrl, trackers: candidates.filter(isHttpUrl) };
}
