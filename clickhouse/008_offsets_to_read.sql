-- From here on a row's `offset` in events_raw, and so `ingested_offsets.last_offset`, is the offset
-- its source is read from once the row is stored (Kafka's committed-offset sense): the offset + 1
-- for the last event of a frame (a record of many events), the frame's own offset for the others.
-- An INSERT cut off half-way can be stored up to its last whole line, part of a frame; the offset
-- recorded then still points at that frame, which is written again (and sealing counts its
-- events once) rather than skipped. Rows recorded before held the highest offset stored: moved on
-- by one here. An offset recorded while this runs is at worst one frame behind: written again.
INSERT INTO ingested_offsets SELECT source, max(last_offset) + 1, 0 FROM ingested_offsets GROUP BY source;
