import type { BookingRecord, IncludeExcludeRecord } from './booking.schema';
import { BOOKING_DEVICE_TYPES, BOOKING_PATTERNS } from './booking.schema';
import type { CatalogDocument } from './catalog.schema';

/**
 * A flight bound as a comparable local wall-clock string `YYYY-MM-DDTHH:mm`: a start day is its
 * midnight, an end day the next midnight (the end day is flown in full), so `start < end` reads
 * as it should.
 */
export function flightBound(value: string, side: 'start' | 'end'): string {
  if (value.length > 10) {
    return value;
  }
  if (side === 'start') {
    return `${value}T00:00`;
  }
  const next = new Date(`${value}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return `${next.toISOString().slice(0, 10)}T00:00`;
}

/** Whether the runtime knows the IANA time zone (`Europe/Paris`). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** A calendar date that exists (no 31 April): the pattern alone lets those through. */
function realDate(value: string): boolean {
  const day = value.slice(0, 10);
  const parsed = new Date(`${day}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === day;
}

/**
 * The bookings' problems that no single field shows: a flight that ends before it starts, a
 * strategy flown outside its campaign, goals that contradict each other, even pacing with nothing
 * to spread, targeting that names unknown entities or includes what it excludes, two takeovers of
 * one template at once. Each message names the booking and says what to change.
 */
export function bookingProblems(doc: CatalogDocument): string[] {
  const problems: string[] = [];
  const publishers = new Set(doc.publishers.map((p) => p.id));
  const templates = new Map(doc.templates.map((t) => [t.id, t]));
  const slots = new Map(doc.adSlots.map((s) => [s.id, s]));
  const campaigns = new Map(doc.campaigns.map((c) => [c.id, c]));

  for (const p of doc.publishers) {
    if (p.timeZone !== undefined && !isTimeZone(p.timeZone)) {
      problems.push(`publisher ${p.id}: unknown time zone ${p.timeZone} (an IANA name such as Europe/Paris)`);
    }
  }

  const checkList = (
    at: string,
    list: IncludeExcludeRecord | undefined,
    name: string,
    valid?: (value: string) => boolean,
  ) => {
    if (!list) {
      return;
    }
    const include = list.include ?? [];
    const exclude = new Set(list.exclude ?? []);
    for (const value of [...include, ...exclude]) {
      if (valid && !valid(value)) {
        problems.push(`${at}: targeting.${name} has unknown value ${value}`);
      }
    }
    const both = include.filter((v) => exclude.has(v));
    if (both.length > 0) {
      problems.push(`${at}: targeting.${name} both includes and excludes ${both.join(', ')}`);
    }
    if (include.length > 0 && include.every((v) => exclude.has(v))) {
      problems.push(`${at}: targeting.${name} excludes everything it includes: the booking can never run`);
    }
  };

  const checkBooking = (at: string, booking: BookingRecord, demandType: string | undefined) => {
    if (demandType === 'exchange' || demandType === 'fallback_ads') {
      problems.push(`${at}: a ${demandType} campaign cannot be booked (only direct and house demand)`);
    }
    for (const [side, value] of [
      ['start', booking.start],
      ['end', booking.end],
    ] as const) {
      if (value !== undefined && !realDate(value)) {
        problems.push(`${at}: ${side} ${value} is not a calendar date`);
      }
    }
    if (
      booking.start &&
      booking.end &&
      flightBound(booking.start, 'start') >= flightBound(booking.end, 'end')
    ) {
      problems.push(`${at}: the flight ends (${booking.end}) before it starts (${booking.start})`);
    }
    const goals = booking.goals ?? [];
    const metrics = new Set<string>();
    for (const goal of goals) {
      if (metrics.has(goal.metric)) {
        problems.push(`${at}: two ${goal.metric} goals (one goal per metric, with lifetime and daily)`);
      }
      metrics.add(goal.metric);
      if (goal.lifetime === undefined && goal.daily === undefined) {
        problems.push(`${at}: the ${goal.metric} goal needs a lifetime or a daily amount`);
      }
      if (goal.lifetime !== undefined && goal.daily !== undefined && goal.daily > goal.lifetime) {
        problems.push(
          `${at}: the daily ${goal.metric} goal (${goal.daily}) exceeds the lifetime one (${goal.lifetime})`,
        );
      }
      if (goal.metric !== 'impressions' && demandType === 'house') {
        problems.push(`${at}: a house campaign pays nothing: only an impressions goal makes sense`);
      }
    }
    if (booking.pacing === 'even') {
      const paced = goals.filter((g) => g.metric !== 'clicks');
      if (paced.length === 0) {
        problems.push(`${at}: even pacing needs an impressions or spend goal to spread`);
      }
      if (paced.some((g) => g.lifetime !== undefined) && !booking.end) {
        problems.push(`${at}: even pacing of a lifetime goal needs a flight end`);
      }
    }
    const periods = new Set<string>();
    for (const cap of booking.frequencyCaps ?? []) {
      if (periods.has(cap.period)) {
        problems.push(`${at}: two frequency caps per ${cap.period}`);
      }
      periods.add(cap.period);
    }
    if (booking.priority === 'sponsorship' && booking.sponsorshipShare === undefined) {
      problems.push(
        `${at}: a sponsorship needs its sponsorshipShare (the share of impressions it is guaranteed)`,
      );
    }
    if (booking.sponsorshipShare !== undefined && booking.priority !== 'sponsorship') {
      problems.push(`${at}: sponsorshipShare is only for priority sponsorship`);
    }
    if (booking.priority === 'house' && demandType === 'direct') {
      problems.push(
        `${at}: priority house is for house campaigns; a direct campaign is sponsorship or standard`,
      );
    }
    const t = booking.targeting;
    if (t) {
      checkList(at, t.publishers, 'publishers', (v) => publishers.has(v));
      checkList(at, t.templates, 'templates', (v) => templates.has(v));
      checkList(at, t.adSlots, 'adSlots', (v) => slots.has(v));
      checkList(at, t.lists, 'lists');
      checkList(at, t.countries, 'countries', (v) => BOOKING_PATTERNS.COUNTRY.test(v));
      checkList(at, t.regions, 'regions', (v) => BOOKING_PATTERNS.REGION.test(v));
      checkList(at, t.deviceTypes, 'deviceTypes', (v) => BOOKING_DEVICE_TYPES.includes(v));
      checkList(at, t.os, 'os');
      checkList(at, t.browsers, 'browsers');
      checkList(at, t.emailDomains, 'emailDomains', (v) => BOOKING_PATTERNS.DOMAIN.test(v));
      // Slots named outside the publishers or templates named: the two can never meet.
      const pubs = t.publishers?.include;
      const tpls = t.templates?.include;
      for (const slotId of t.adSlots?.include ?? []) {
        const template = templates.get(slots.get(slotId)?.templateId ?? '');
        if (!template) {
          continue;
        }
        if ((tpls && !tpls.includes(template.id)) || (pubs && !pubs.includes(template.publisherId))) {
          problems.push(`${at}: ad slot ${slotId} lies outside the publishers and templates targeted`);
        }
      }
    }
  };

  const sizesOf = campaignSizes(doc);
  const slotsOf = templateSlots(doc);
  /** The slots of a template the campaign has no creative for, `slot (size)`. */
  const uncovered = (campaignId: string, templateId: string) =>
    (slotsOf.get(templateId) ?? [])
      .filter((s) => !sizesOf.get(campaignId)?.has(s.size))
      .map((s) => `${s.id} (${s.size})`);

  const takeovers = new Map<string, { id: string; start: string; end: string }[]>();
  for (const c of doc.campaigns) {
    const at = `campaign ${c.id}`;
    if (c.booking) {
      checkBooking(at, c.booking, c.demandType);
    }
    // A booked roadblock fills every slot of an open: it needs a template whose every slot it has a size for.
    if (c.campaignType === 'roadblock' && c.demandType === 'direct' && c.booking) {
      if (c.booking.targeting?.adSlots) {
        problems.push(`${at}: a roadblock runs on whole templates: target templates, not adSlots`);
      }
      const fillable = roadblockTemplates(doc, c.booking).filter((t) => uncovered(c.id, t).length === 0);
      if (fillable.length === 0) {
        problems.push(
          `${at}: a roadblock needs a creative of every slot's size of a template it targets; none has them all`,
        );
      }
    }
    // Without a booking a takeover is the report label it always was: only a booked one owns a template.
    if (c.campaignType === 'takeover' && c.demandType === 'direct' && c.booking) {
      const b = c.booking;
      if (!b?.takeoverTemplateId || !b.start || !b.end) {
        problems.push(`${at}: a takeover needs booking.takeoverTemplateId, start and end`);
      } else if (!templates.has(b.takeoverTemplateId)) {
        problems.push(`${at}: takeover of unknown template ${b.takeoverTemplateId}`);
      } else {
        const missing = uncovered(c.id, b.takeoverTemplateId);
        if (missing.length > 0) {
          problems.push(
            `${at}: takes over template ${b.takeoverTemplateId} without a creative for ${missing.join(', ')}`,
          );
        }
        const flights = takeovers.get(b.takeoverTemplateId) ?? [];
        const start = flightBound(b.start, 'start');
        const end = flightBound(b.end, 'end');
        for (const other of flights) {
          if (start < other.end && other.start < end) {
            problems.push(
              `${at}: takes over template ${b.takeoverTemplateId} while campaign ${other.id} does (flights overlap)`,
            );
          }
        }
        flights.push({ id: c.id, start, end });
        takeovers.set(b.takeoverTemplateId, flights);
      }
    } else if (c.booking?.takeoverTemplateId) {
      problems.push(`${at}: takeoverTemplateId is only for a direct campaign of type takeover`);
    }
  }
  for (const s of doc.strategies) {
    if (!s.booking) {
      continue;
    }
    const at = `strategy ${s.id}`;
    const campaign = campaigns.get(s.campaignId);
    checkBooking(at, s.booking, campaign?.demandType);
    if (s.booking.takeoverTemplateId) {
      problems.push(`${at}: a takeover is booked on its campaign, not on a strategy`);
    }
    if (campaign?.campaignType === 'roadblock' && s.booking.targeting?.adSlots) {
      problems.push(`${at}: a roadblock runs on whole templates: target templates, not adSlots`);
    }
    const outer = campaign?.booking;
    if (
      outer?.start &&
      s.booking.start &&
      flightBound(s.booking.start, 'start') < flightBound(outer.start, 'start')
    ) {
      problems.push(`${at}: starts (${s.booking.start}) before its campaign (${outer.start})`);
    }
    if (outer?.end && s.booking.end && flightBound(s.booking.end, 'end') > flightBound(outer.end, 'end')) {
      problems.push(`${at}: ends (${s.booking.end}) after its campaign (${outer.end})`);
    }
  }
  problems.push(...oversoldSponsorships(doc));
  return problems;
}

/**
 * Sponsorships that name the same ad slot and fly at the same time may not be guaranteed more than
 * the whole slot: the shares of those flying together add up to at most 1. (Only slots a booking
 * names in `targeting.adSlots` are checked: a sponsorship of publishers or templates is checked
 * on none.)
 */
function oversoldSponsorships(doc: CatalogDocument): string[] {
  const bySlot = new Map<string, { who: string; share: number; start: string; end: string }[]>();
  const add = (who: string, booking: BookingRecord | undefined) => {
    if (booking?.priority !== 'sponsorship' || booking.sponsorshipShare === undefined) {
      return;
    }
    for (const slotId of booking.targeting?.adSlots?.include ?? []) {
      const list = bySlot.get(slotId) ?? [];
      list.push({
        who,
        share: booking.sponsorshipShare,
        start: booking.start ? flightBound(booking.start, 'start') : '',
        end: booking.end ? flightBound(booking.end, 'end') : '~',
      });
      bySlot.set(slotId, list);
    }
  };
  for (const c of doc.campaigns) {
    add(`campaign ${c.id}`, c.booking);
  }
  for (const s of doc.strategies) {
    add(`strategy ${s.id}`, s.booking);
  }
  const problems: string[] = [];
  for (const [slotId, list] of bySlot) {
    // The most sold at once is reached when one of them starts.
    for (const at of list) {
      const flying = list.filter((o) => o.start <= at.start && at.start < o.end);
      const total = flying.reduce((sum, o) => sum + o.share, 0);
      if (total > 1 + 1e-9) {
        problems.push(
          `ad slot ${slotId}: sponsorships ${flying.map((o) => o.who).join(', ')} fly together with shares adding up to ${Math.round(total * 1000) / 1000} (at most 1)`,
        );
        break;
      }
    }
  }
  return problems;
}

/** The sizes each campaign has creatives of, over all its strategies. */
export function campaignSizes(doc: CatalogDocument): Map<string, Set<string>> {
  const campaignOf = new Map(doc.strategies.map((s) => [s.id, s.campaignId]));
  const out = new Map<string, Set<string>>();
  for (const creative of doc.creatives) {
    const campaignId = campaignOf.get(creative.strategyId);
    if (campaignId) {
      const sizes = out.get(campaignId) ?? new Set<string>();
      sizes.add(creative.size);
      out.set(campaignId, sizes);
    }
  }
  return out;
}

/** The ad slots of each template: the slots of one email open. */
export function templateSlots(doc: CatalogDocument): Map<string, { id: string; size: string }[]> {
  const out = new Map<string, { id: string; size: string }[]>();
  for (const slot of doc.adSlots) {
    out.set(slot.templateId, [...(out.get(slot.templateId) ?? []), { id: slot.id, size: slot.size }]);
  }
  return out;
}

/**
 * The templates a roadblock's targeting lets it run on: those it includes, else the targeted
 * publishers' templates, else every template; less those it excludes.
 */
export function roadblockTemplates(doc: CatalogDocument, booking: BookingRecord): string[] {
  const t = booking.targeting;
  const pubInclude = t?.publishers?.include;
  const pubExclude = new Set(t?.publishers?.exclude ?? []);
  const tplInclude = t?.templates?.include;
  const tplExclude = new Set(t?.templates?.exclude ?? []);
  return doc.templates
    .filter(
      (tpl) =>
        (!tplInclude || tplInclude.includes(tpl.id)) &&
        !tplExclude.has(tpl.id) &&
        (!pubInclude || pubInclude.includes(tpl.publisherId)) &&
        !pubExclude.has(tpl.publisherId),
    )
    .map((tpl) => tpl.id);
}
