import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestService } from '@apps/ingest';
import { DEAD_LETTER_TOPIC, TOPIC_BY_TYPE, toMessage, type DeliveredMessage } from '@app/events';
import type { StoreQuery } from '@app/report-model';
import { listeningPort } from '@app/runtime';
import { makeEvent } from '@app/testing';
import { modes, startReporting, type RunningReporting } from './reporting-system';

const ALL: StoreQuery = {
  range: { start: '2026-10-01', end: '2026-11-21' },
  filters: [],
  scope: {},
  tier: 'exact',
};

for (const mode of modes()) {
  describe(`ingest over the event bus [${mode}]`, () => {
    let api: RunningReporting;
    const deadLetters: DeliveredMessage[] = [];

    beforeAll(async () => {
      api = await startReporting(mode);
      await api.system.bus.subscribe('test-dead-letters', [DEAD_LETTER_TOPIC], async (batch) => {
        deadLetters.push(...batch.messages);
      });
    });
    afterAll(async () => {
      await api?.system.close();
    });

    it('sends unparseable and invalid messages to the dead-letter topic with the reason, and stores the rest', async () => {
      const good = [1, 2, 3].map((i) => makeEvent({ type: 'click', ts: `2026-11-0${i}T12:00:00.000Z` }));
      await api.system.bus.publish(TOPIC_BY_TYPE.click, [
        toMessage(good[0]),
        { key: 'slot-1-1-1', value: '{"v":1, "broken' },
        toMessage(good[1]),
        { key: 'slot-1-1-1', value: JSON.stringify({ ...good[2], spend_micros: -5 }) },
        toMessage(good[2]),
      ]);
      await api.system.bus.drain();
      const [totals] = await api.system.reportStore.query(ALL);
      expect(totals.measures.clicks).toBe(3);
      expect(deadLetters.map((m) => m.headers?.reason)).toEqual([
        expect.stringMatching(/^malformed JSON/),
        expect.stringMatching(/^invalid event: \/spend_micros/),
      ]);
      expect(deadLetters[0].value).toBe('{"v":1, "broken');
      expect(deadLetters[0].headers?.source).toMatch(/^adx\.click\/\d+\/\d+$/);
    });

    it('skips a redelivered batch: the reports do not change', async () => {
      const ingest = api.system.ingest.get(IngestService);
      const batch = {
        source: `${TOPIC_BY_TYPE.impression}/0/replay-test`,
        topic: TOPIC_BY_TYPE.impression,
        partition: 0,
        messages: [makeEvent(), makeEvent({ reopen: true })].map((e, i) => ({
          ...toMessage(e),
          offset: String(9000 + i),
        })),
        signal: new AbortController().signal,
      };
      const [before] = await api.system.reportStore.query(ALL);
      await ingest.handle(batch);
      const [once] = await api.system.reportStore.query(ALL);
      await ingest.handle(batch);
      const [twice] = await api.system.reportStore.query(ALL);
      expect(once.measures.unique_impressions - before.measures.unique_impressions).toBe(1);
      expect(once.measures.reopens - before.measures.reopens).toBe(1);
      expect(twice).toEqual(once);
      const metrics = await (
        await fetch(`http://127.0.0.1:${listeningPort(api.system.ingest)}/metrics`)
      ).text();
      expect(metrics).toMatch(/adx_ingest_replayed_events_total [1-9]\d*/);
      expect(metrics).toMatch(/adx_dead_letters_total\{topic="adx\.click"\} [1-9]\d*/);
    });
  });
}
