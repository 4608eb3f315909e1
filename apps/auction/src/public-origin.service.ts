import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Inject, Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { AuctionConfig } from './auction.config';
import { AUCTION_CONFIG } from './auction.tokens';

/**
 * The exchange's origin for the URLs it hands out: `AUCTION_PUBLIC_URL`, or else the address the
 * app listens on (known only once it listens, which matters on an ephemeral port). Never taken from
 * a request's Host header, which the client writes and a stored decision would pass on to others.
 */
@Injectable()
export class PublicOrigin {
  private resolved?: string;

  constructor(
    @Inject(AUCTION_CONFIG) private readonly config: AuctionConfig,
    private readonly adapter: HttpAdapterHost,
  ) {}

  get value(): string {
    this.resolved ??= this.config.AUCTION_PUBLIC_URL ?? this.listening();
    return this.resolved;
  }

  private listening(): string {
    const server = this.adapter.httpAdapter.getHttpServer() as Server;
    const address = server.address() as AddressInfo | null;
    const host =
      address?.family === 'IPv6' ? `[${address.address}]` : (address?.address ?? this.config.AUCTION_HOST);
    return `http://${host}:${address?.port ?? this.config.AUCTION_PORT}`;
  }
}
