/**
 * Delivery counters of this node, registered into the node's Prometheus registry by the metrics
 * module. Dead letters are also a gauge read from the store at scrape time (they outlive a restart).
 */
import { Counter, type Registry } from 'prom-client'

export class DeliveryMetrics {
  readonly attempts = new Counter({
    name: 'svc_notification_delivery_attempts_total',
    help: 'Notification delivery attempts of this node, by outcome (delivered, failed, throttled, dead_letter).',
    labelNames: ['outcome', 'channel_type'],
    registers: [],
  })

  register(registry: Registry): void {
    registry.registerMetric(this.attempts)
  }
}
