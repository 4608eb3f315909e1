import escapeHtml from 'escape-html';
import type { Catalog } from '@app/catalog';

/**
 * The slots the demo newsletter shows: three banner sizes of one publisher's daily edition and
 * weekend special, and its native slot.
 */
export const DEMO_SLOTS = ['slot-1-1-1', 'slot-1-1-2', 'slot-1-1-3', 'slot-1-2-1'] as const;

/**
 * The demo's editions: The Morning Ledger (pub-1), where the demo catalog's paced, capped and
 * key-value-targeted campaigns run beside RTB, and Garden Weekly (pub-2), whose daily edition a
 * roadblock books and whose weekend special a takeover owns (docs/direct-campaigns.md#the-demo).
 */
export const DEMO_EDITIONS = {
  ledger: { title: 'The Morning Ledger — demo edition', slots: DEMO_SLOTS },
  garden: {
    title: 'Garden Weekly — demo edition',
    slots: ['slot-2-1-1', 'slot-2-1-2', 'slot-2-2-1', 'slot-2-2-2'],
  },
} as const;

export type DemoEdition = keyof typeof DEMO_EDITIONS;

/**
 * The ad tag a publisher pastes into a newsletter for one slot
 * (docs/exchange.md#the-ad-tag-a-publisher-pastes).
 */
export function adTag(baseUrl: string, slotId: string, size: string, query: URLSearchParams): string {
  const [w, h] = size.split('x');
  const q = query.toString();
  const slot = encodeURIComponent(slotId);
  return (
    `<a href="${escapeHtml(`${baseUrl}/click/${slot}?${q}`)}" target="_blank" rel="noopener">` +
    `<img src="${escapeHtml(`${baseUrl}/img/${slot}?${q}`)}" width="${w}" height="${h}" alt="Advertisement" border="0" style="display:block"></a>`
  );
}

export function newsletterPage(
  catalog: Catalog,
  baseUrl: string,
  recipient: string,
  now: Date,
  edition: DemoEdition = 'ledger',
): string {
  const today = now.toISOString().slice(0, 10).replace(/-/g, '');
  const { title, slots } = DEMO_EDITIONS[edition];
  const sections = slots.map((slotId: string) => {
    const { slot, template, publisher } = catalog.slotLineage(slotId);
    if (!slot || !template || !publisher) {
      return '';
    }
    const query = new URLSearchParams({
      placement: `demo-${template.id}-${today}`,
      list: 'demo-list',
      recipient,
      email_domain: 'example.com',
      cb: String(now.getTime()),
    });
    query.append('kv', 'section:news');
    return `<section data-slot="${escapeHtml(slot.id)}">
  <h2>${escapeHtml(template.name)}</h2>
  <p>Today's stories from ${escapeHtml(publisher.name)}. The ad below is chosen by a live auction.</p>
  ${adTag(baseUrl, slot.id, slot.size, query)}
  <p class="meta">${escapeHtml(slot.name)} · ${escapeHtml(slot.size)}</p>
</section>`;
  });
  const sync = `${baseUrl}/sync?${new URLSearchParams({ recipient }).toString()}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Demo newsletter</title>
<style>body{font-family:Georgia,serif;max-width:760px;margin:2em auto;color:#222}section{margin:2em 0;padding-bottom:1em;border-bottom:1px solid #ddd}.meta{color:#777;font-size:.8em}</style>
</head><body>
<h1>${escapeHtml(title)}</h1>
<p>Every ad on this page is served by the exchange's ad tag: each image is an auction, a reload is a reopen, a click goes to the advertiser.</p>
<p class="meta">Booked direct campaigns run here too: ${
    edition === 'ledger'
      ? 'a paced one, a frequency-capped one and one targeted by key-values, when they outbid the DSPs. <a href="?edition=garden" data-role="edition">Garden Weekly</a> carries a roadblock and a takeover.'
      : 'a roadblock on the daily edition and a takeover of the weekend special. <a href="?edition=ledger" data-role="edition">The Morning Ledger</a> carries paced, capped and key-value-targeted campaigns.'
  }</p>
${sections.join('\n')}
<img src="${escapeHtml(sync)}" width="1" height="1" alt="" style="position:absolute;left:-1px" data-role="user-sync">
</body></html>`;
}
