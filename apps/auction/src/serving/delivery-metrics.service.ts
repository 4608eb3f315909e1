import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  bookingDelivered,
  bookingExpected,
  bookingGoal,
  collectBookingDeliveryWith,
} from '@app/observability';
import { AuctionService } from '../auction.service';
import { CLOCK, type Clock } from '../auction.tokens';

/**
 * Each booked goal's delivery, its goal and (even pacing) what it should have delivered by now,
 * in `/metrics`: read from the delivery counters at each scrape, for the catalog serving now.
 */
@Injectable()
export class DeliveryMetricsService implements OnModuleInit, OnModuleDestroy {
  constructor(
    private readonly auctions: AuctionService,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    collectBookingDeliveryWith(() => this.collect());
  }

  onModuleDestroy(): void {
    collectBookingDeliveryWith(undefined);
  }

  async collect(): Promise<void> {
    const layers = await this.auctions.booked.desk.delivery(this.clock().getTime());
    bookingDelivered.reset();
    bookingGoal.reset();
    bookingExpected.reset();
    for (const layer of layers) {
      for (const goal of layer.goals) {
        const labels = { scope: layer.scope, id: layer.id, metric: goal.metric };
        bookingDelivered.set({ ...labels, period: 'lifetime' }, goal.deliveredLifetime);
        if (goal.deliveredToday !== undefined) {
          bookingDelivered.set({ ...labels, period: 'today' }, goal.deliveredToday);
        }
        if (goal.lifetime !== undefined) {
          bookingGoal.set({ ...labels, period: 'lifetime' }, goal.lifetime);
        }
        if (goal.daily !== undefined) {
          bookingGoal.set({ ...labels, period: 'daily' }, goal.daily);
        }
        if (goal.expectedByNow !== undefined) {
          bookingExpected.set(labels, goal.expectedByNow);
        }
      }
    }
  }
}
