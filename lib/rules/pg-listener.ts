// The relational rule store's notifier: a listening connection of the DataSource's own database
// (its dialect's changeChannel: LISTEN on PostgreSQL, lib/dialect/postgres/listen.ts), kept open,
// reconnected and pinged by sharedListener; it closes itself once the DataSource is destroyed.
import type { DataSource } from "typeorm";
import { dialectOf } from "../dialect/dialect-of.js";
import {
  type BackOffOptions, type ChannelConnector, type IQpRuleNotifier, type OpenedChannel, type QpRuleChangeSubscriber, type QpRuleSubscription, checkNotifyChannel, sharedListener,
} from "./notifications.js";

/** The listening connection of the DataSource's dialect (its changeChannel), kept open by sharedListener. */
class DialectChannelConnector implements ChannelConnector {
  constructor(private readonly dataSource: DataSource, private readonly channel: string) {}

  usable(): boolean {
    return this.dataSource.isInitialized;
  }

  async open(deliver: (payload: string) => void, lost: (error: Error) => void): Promise<OpenedChannel> {
    const changes = dialectOf(this.dataSource).changeChannel;
    if (!changes) throw new Error("the DataSource's database has no change notifications");
    return changes.listen(this.dataSource, this.channel, deliver, lost);
  }
}

/**
 * The relational store's notifier on a database with a change channel (PostgreSQL): writes notify
 * inside their transaction, so it has no publish step.
 */
export class QpPostgresRuleNotifier implements IQpRuleNotifier {
  readonly channel: string;

  /** The channel is checked here too (it is written into LISTEN), whoever builds the notifier. */
  constructor(private readonly dataSource: DataSource, channel: string, private readonly backOff: BackOffOptions = {}) {
    this.channel = checkNotifyChannel(channel, "QpPostgresRuleNotifier");
  }

  subscribe(subscriber: QpRuleChangeSubscriber): QpRuleSubscription {
    return sharedListener(this.dataSource, this.channel, () => new DialectChannelConnector(this.dataSource, this.channel), this.backOff).subscribe(subscriber);
  }
}
