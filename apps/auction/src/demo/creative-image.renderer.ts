import escapeHtml from 'escape-html';

const PALETTE = ['#0f766e', '#1d4ed8', '#b45309', '#7c3aed', '#be123c', '#15803d'];

export interface CreativeImage {
  readonly size: string;
  readonly headline: string;
  readonly subline: string;
  readonly label: string;
}

/** A simple banner for a hosted creative: colour from its name, headline sized to the banner. */
export function renderCreativeSvg(image: CreativeImage): string {
  const [w, h] = image.size.split('x').map(Number);
  let spread = 0;
  for (const ch of image.label) {
    spread = (spread * 31 + ch.charCodeAt(0)) >>> 0;
  }
  const colour = PALETTE[spread % PALETTE.length];
  const headlineSize = Math.max(10, Math.min(Math.round(h / 4), Math.round(w / 14)));
  const sublineSize = Math.max(8, Math.round(headlineSize * 0.55));
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">`,
    `<rect width="${w}" height="${h}" fill="${colour}"/>`,
    `<text x="50%" y="${h / 2}" fill="#fff" font-family="Helvetica, Arial, sans-serif" font-weight="700"`,
    ` font-size="${headlineSize}" text-anchor="middle">${escapeHtml(image.headline)}</text>`,
    h >= 60
      ? `<text x="50%" y="${h / 2 + sublineSize * 1.6}" fill="#fff" font-family="Helvetica, Arial, sans-serif" font-size="${sublineSize}" text-anchor="middle">${escapeHtml(image.subline)}</text>`
      : '',
    `</svg>`,
  ].join('');
}
