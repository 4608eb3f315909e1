// @ts-check
/** The page's elements: found by id with their type checked, or built with their content. */

/**
 * The element with this id, which the page is known to have.
 *
 * @param {string} id
 * @returns {HTMLElement}
 */
export function $(id) {
  const node = document.getElementById(id);
  if (!node) {
    throw new Error(`the page has no #${id}`);
  }
  return node;
}

/**
 * The element with this id, of the type the code expects (an input, a select): a page edited
 * out of step with the code fails here, by name, rather than with `undefined` further on.
 *
 * @template {HTMLElement} T
 * @param {string} id
 * @param {{ new (): T; prototype: T }} type
 * @returns {T}
 */
export function byId(id, type) {
  const node = $(id);
  if (!(node instanceof type)) {
    throw new Error(`#${id} is not a ${type.name}`);
  }
  return node;
}

/**
 * The first element under `root` matching `selector`, of the expected type.
 *
 * @template {Element} T
 * @param {ParentNode} root
 * @param {string} selector
 * @param {{ new (): T; prototype: T }} type
 * @returns {T}
 */
export function query(root, selector, type) {
  const node = root.querySelector(selector);
  if (!(node instanceof type)) {
    throw new Error(`no ${type.name} matches ${selector}`);
  }
  return node;
}

/** @typedef {Node | string | null | undefined | false} Child */

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @typedef {Partial<Omit<HTMLElementTagNameMap[K], 'dataset' | 'children'>> & {
 *   attrs?: Record<string, string>;
 *   dataset?: Record<string, string>;
 * }} Props
 */

/**
 * Builds an element: properties, then `attrs` as attributes, then children (strings are text).
 *
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Props<K>} [props]
 * @param {readonly Child[]} [children]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, props, children) {
  const node = document.createElement(tag);
  const { attrs, dataset, ...rest } = props ?? {};
  Object.assign(node, rest);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    node.setAttribute(name, value);
  }
  for (const [name, value] of Object.entries(dataset ?? {})) {
    node.dataset[name] = value;
  }
  for (const child of children ?? []) {
    if (child !== null && child !== undefined && child !== false) {
      node.append(child);
    }
  }
  return node;
}
