/**
 * Notification channels and delivery assembled: the configs API, the dispatcher of outboxes, and
 * the counters the metrics module registers.
 */
import type { Feature } from '../deps'
import type { ClusterSettings } from '../config/cluster-settings'
import type { Logger } from '../http/log'
import type { Security } from '../http/caller'
import type { Store } from '../store/port'
import { Channels } from './configs'
import { DeliveryMetrics } from './metrics'
import { Dispatcher } from './outbox'
import { notificationsRoutes } from './routes'

export interface Notifications extends Feature {
  channels: Channels
  dispatcher: Dispatcher
  metrics: DeliveryMetrics
}

export function createNotifications(deps: {
  store: Store
  settings: ClusterSettings
  log: Logger
  now: () => number
  security: Pick<Security, 'hasClusterPermission'>
}): Notifications {
  const channels = new Channels(deps)
  const metrics = new DeliveryMetrics()
  const dispatcher = new Dispatcher({ ...deps, channels, metrics })
  return {
    routes: notificationsRoutes({ channels, settings: deps.settings, security: deps.security }),
    channels,
    dispatcher,
    metrics,
    start: async () => dispatcher.start(),
    stop: () => dispatcher.stop(),
  }
}
