import { Controller } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { EVENT_TOPICS, type DeliveredBatch } from '@app/events';
import { IngestService } from './ingest.service';

/** Every event topic's batches, from the event bus transport, into the report store. */
@Controller()
export class IngestController {
  constructor(private readonly ingest: IngestService) {}

  @EventPattern([...EVENT_TOPICS])
  store(@Payload() batch: DeliveredBatch): Promise<void> {
    return this.ingest.handle(batch);
  }
}
